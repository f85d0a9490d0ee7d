//! What the byte-stream targets (`response`, `chunked`) share: an input that says how its
//! bytes arrive.
//!
//! ```text
//! byte 0        flags, read by each target
//! byte 1        low 4 bits: n, the number of cut lengths that follow; high 4 bits: more flags
//! n bytes       piece lengths: byte b is a piece of b + 1 bytes
//! the rest      the bytes (a server's answer, a chunked body)
//! ```
//! The bytes are handed over in pieces of the given lengths, then the rest in one piece, as
//! reads from a socket would hand them over. A seed is `\0\0` followed by the bytes.

/// An input split into its flags and the pieces its bytes arrive in.
pub struct Arrival<'a> {
    /// Byte 0.
    pub flags: u8,
    /// The high 4 bits of byte 1.
    pub more: u8,
    /// The bytes, whole.
    pub bytes: &'a [u8],
    /// The bytes in the pieces they arrive in (never an empty piece).
    pub pieces: Vec<&'a [u8]>,
}

impl<'a> Arrival<'a> {
    /// Reads an input; `None` when it is shorter than its header.
    pub fn read(data: &'a [u8]) -> Option<Arrival<'a>> {
        let (&flags, rest) = data.split_first()?;
        let (&cuts, rest) = rest.split_first()?;
        let n = usize::from(cuts & 0x0f);
        if rest.len() < n {
            return None;
        }
        let (lengths, bytes) = rest.split_at(n);
        let mut pieces = Vec::with_capacity(n + 1);
        let mut left = bytes;
        for &b in lengths {
            if left.is_empty() {
                break;
            }
            let (piece, after) = left.split_at((usize::from(b) + 1).min(left.len()));
            pieces.push(piece);
            left = after;
        }
        if !left.is_empty() {
            pieces.push(left);
        }
        Some(Arrival {
            flags,
            more: cuts >> 4,
            bytes,
            pieces,
        })
    }
}
