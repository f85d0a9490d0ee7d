//! Opening a file a user named as input: a regular file only, and an open that never blocks.
//!
//! A device (`/dev/zero`) reads forever and a FIFO blocks the open until someone writes, so
//! both are told apart before a byte is read.

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The file opened for reading with its length, or `None` when it is not a regular file (a
/// device, FIFO, socket or directory).
pub(crate) fn open_regular(path: &Path) -> std::io::Result<Option<(std::fs::File, u64)>> {
    // Non-blocking, so that a FIFO swapped in after a check could not hang the open; on a
    // regular file the flag changes nothing.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    Ok(meta.is_file().then_some((file, meta.len())))
}
