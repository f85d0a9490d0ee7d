//! The read buffer of an HTTP/1.1 connection: unconsumed bytes kept contiguous for the head
//! parser, grown only as far as the head limit.

use crate::sample::ErrorKind;

/// Initial size; it grows up to the head limit only for unusually large heads.
const INITIAL: usize = 4 * 1024;

/// Bytes read but not yet consumed are `buf[start..end]`.
pub struct ReadBuffer {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    max: usize,
}

impl ReadBuffer {
    /// A buffer for heads of at most `max_head` bytes.
    pub fn new(max_head: usize) -> Self {
        let max = max_head.max(1024);
        ReadBuffer {
            buf: vec![0; INITIAL.min(max)],
            start: 0,
            end: 0,
            max,
        }
    }

    /// The unconsumed bytes.
    pub fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Marks `n` bytes as consumed.
    pub fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Room to read into, after compacting or growing; a head that fills the limit is too large.
    pub fn spare(&mut self) -> Result<&mut [u8], ErrorKind> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() < self.max {
                let grown = (self.buf.len() * 2).min(self.max);
                self.buf.resize(grown, 0);
            } else {
                return Err(ErrorKind::HeaderTooLarge);
            }
        }
        Ok(&mut self.buf[self.end..])
    }

    /// Marks `n` bytes of the spare room as read.
    pub fn filled(&mut self, n: usize) {
        self.end += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacts_then_grows_then_refuses() {
        fn put(b: &mut ReadBuffer, n: usize) -> Result<(), ErrorKind> {
            let mut left = n;
            while left > 0 {
                let room = b.spare()?;
                let k = room.len().min(left);
                b.filled(k);
                left -= k;
            }
            Ok(())
        }
        let mut b = ReadBuffer::new(8 * 1024);
        put(&mut b, 4096).unwrap();
        b.consume(4000);
        put(&mut b, 4000).unwrap(); // compacts: 96 + 4000 fit in 4 KiB
        assert_eq!(b.data().len(), 4096);
        put(&mut b, 4096).unwrap(); // grows to 8 KiB
        assert_eq!(b.data().len(), 8192);
        assert_eq!(put(&mut b, 1), Err(ErrorKind::HeaderTooLarge));
        b.consume(8192);
        assert!(b.data().is_empty());
    }
}
