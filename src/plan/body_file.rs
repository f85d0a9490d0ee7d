//! A request body read from a file: a regular file of bounded size, read once.
//!
//! A body is held in memory and sent with every request, so a device (`/dev/zero`), a FIFO
//! (which blocks until someone writes) or a file larger than memory should take is refused
//! before a byte is read, rather than read until the machine runs out.

use std::io::Read;
use std::path::Path;

/// The largest body file taken: bodies of load tests are kilobytes to megabytes.
pub const MAX_BODY_FILE: u64 = 64 * 1024 * 1024;

/// Why a body file cannot be used. Never holds the file's contents.
#[derive(Debug, thiserror::Error)]
pub enum BodyFileError {
    /// It could not be opened or read.
    #[error("cannot read {path}: {cause}")]
    Io {
        /// The file.
        path: String,
        /// Why (in the message, not a `source`: the CLI would print it twice).
        cause: std::io::Error,
    },
    /// It is a device, FIFO, socket or directory.
    #[error("{path} is not a regular file (a device, FIFO, socket or directory); save the body to a file")]
    NotAFile {
        /// The file.
        path: String,
    },
    /// It is larger than a body may be.
    #[error(
        "{path} is {size} bytes, above the {MAX_BODY_FILE}-byte (64 MiB) limit of a request body"
    )]
    TooLarge {
        /// The file.
        path: String,
        /// Its size, or how much was read before the limit.
        size: u64,
    },
}

/// Reads the body in `path`.
pub fn read_body_file(path: &Path) -> Result<Vec<u8>, BodyFileError> {
    let shown = || path.display().to_string();
    let io = |cause| BodyFileError::Io {
        path: shown(),
        cause,
    };
    let Some((file, len)) = super::regular_file::open_regular(path).map_err(io)? else {
        return Err(BodyFileError::NotAFile { path: shown() });
    };
    if len > MAX_BODY_FILE {
        return Err(BodyFileError::TooLarge {
            path: shown(),
            size: len,
        });
    }
    // The size can change under us (a file still being written): read at most one byte past
    // the limit to know.
    let mut body = Vec::with_capacity(len as usize);
    file.take(MAX_BODY_FILE + 1)
        .read_to_end(&mut body)
        .map_err(io)?;
    if body.len() as u64 > MAX_BODY_FILE {
        return Err(BodyFileError::TooLarge {
            path: shown(),
            size: body.len() as u64,
        });
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("body.json");
        std::fs::write(&p, b"{\"a\":1}").unwrap();
        assert_eq!(read_body_file(&p).unwrap(), b"{\"a\":1}");
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        for p in [Path::new("/dev/zero"), &fifo, dir.path()] {
            let e = read_body_file(p).unwrap_err();
            assert!(matches!(e, BodyFileError::NotAFile { .. }), "{p:?}: {e}");
        }
    }

    #[test]
    fn a_file_above_the_limit_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        let f = std::fs::File::create(&p).unwrap();
        // Sparse: the size is what is checked, nothing is read.
        f.set_len(MAX_BODY_FILE + 1).unwrap();
        let e = read_body_file(&p).unwrap_err().to_string();
        assert!(e.contains("64 MiB"), "{e}");
    }
}
