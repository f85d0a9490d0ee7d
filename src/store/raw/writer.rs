//! The background writer of `raw.bin`: drains the workers' batches to disk on a thread of
//! its own, so the engine never waits for the disk.

use super::codec::{encode, Header, RECORD_BYTES};
use super::RawEnd;
use crate::record::{raw_channel, RawRecord, RawSink, RawStream};
use crate::store::StoreError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

/// Writes the run's raw records as they arrive; [`RawWriter::finish`] says how it went.
pub struct RawWriter {
    sink: Option<RawSink>,
    thread: JoinHandle<Result<u64, (std::io::Error, u64)>>,
    dropped: std::sync::Arc<std::sync::atomic::AtomicU64>,
    path: PathBuf,
}

impl RawWriter {
    /// Creates `path` and starts the writer. A failed write stops it and calls
    /// `on_failure` (which stops the run: load that cannot be recorded is load for nothing).
    pub(crate) fn start(
        path: &Path,
        on_failure: impl FnOnce() + Send + 'static,
    ) -> Result<RawWriter, StoreError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(super::super::io_err(path))?;
        let (sink, stream) = raw_channel();
        let dropped = stream.dropped.clone();
        let thread = std::thread::Builder::new()
            .name("headroom-raw".into())
            .spawn(move || {
                let written = drain(file, stream);
                if written.is_err() {
                    on_failure();
                }
                written
            })
            .map_err(super::super::io_err(path))?;
        Ok(RawWriter {
            sink: Some(sink),
            thread,
            dropped,
            path: path.to_path_buf(),
        })
    }

    /// The workers' end: hand it to the engine (`Prepared::record_raw`).
    pub fn sink(&mut self) -> RawSink {
        self.sink.take().expect("the raw sink is handed to one run")
    }

    /// Waits for the records still queued (every worker's sink must be gone: the run has
    /// ended) and says how many were written and dropped, or the write that failed.
    pub fn finish(mut self) -> Result<RawEnd, RawFailure> {
        self.sink = None;
        match self.thread.join() {
            // Every sink is gone: nothing can be dropped after this.
            Ok(Ok(records)) => Ok(RawEnd {
                records,
                dropped: self.dropped.load(Ordering::Relaxed),
            }),
            Ok(Err((reason, written))) => Err(RawFailure {
                cause: StoreError::Io {
                    path: self.path,
                    reason,
                },
                written,
            }),
            Err(_) => Err(RawFailure {
                cause: StoreError::Io {
                    path: self.path,
                    reason: std::io::Error::other("the raw writer thread panicked"),
                },
                written: 0,
            }),
        }
    }
}

/// A write of the raw file failed.
#[derive(Debug)]
pub struct RawFailure {
    /// The write that failed.
    pub cause: StoreError,
    /// Records written before it.
    pub written: u64,
}

/// Writes the header, then every batch as it comes; flushed after each batch, so a killed
/// run keeps all but the last second or so. Returns the records written.
fn drain(file: std::fs::File, stream: RawStream) -> Result<u64, (std::io::Error, u64)> {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, file);
    // Buffered with the first batch: a full disk shows at the first second, with the run's
    // log already telling what was sent.
    out.write_all(&Header::current().to_bytes())
        .map_err(|e| (e, 0))?;
    let mut written = 0u64;
    let mut bytes = [0u8; RECORD_BYTES];
    let mut put = |out: &mut std::io::BufWriter<std::fs::File>, batch: &[RawRecord]| {
        for r in batch {
            encode(r, &mut bytes);
            out.write_all(&bytes)?;
        }
        out.flush()
    };
    while let Ok(batch) = stream.batches.recv() {
        put(&mut out, &batch).map_err(|e| (e, written))?;
        written += batch.len() as u64;
    }
    out.flush().map_err(|e| (e, written))?;
    Ok(written)
}
