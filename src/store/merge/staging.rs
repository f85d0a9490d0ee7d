//! A merged run written whole or not at all: into a hidden directory beside its place, and
//! renamed into place once every file is written, so a merge that fails (a damaged shard, a
//! full disk) leaves nothing that looks like a run, nor anything that blocks a retry.

use crate::store::{RunDir, StoreError};
use std::path::{Path, PathBuf};

/// The directory a merged run is written into until it is whole.
#[derive(Debug)]
pub struct Staging {
    /// Where the run is written.
    dir: RunDir,
    /// Where it goes when whole.
    place: PathBuf,
    /// Renamed into place: nothing left to remove.
    placed: bool,
}

fn io(path: &Path, reason: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        reason,
    }
}

impl Staging {
    /// A new directory beside `out`; refused when `out` is there and not an empty
    /// directory, before any work (the rename at the end could not replace it).
    pub fn beside(out: &RunDir) -> Result<Staging, StoreError> {
        let place = out.path().to_path_buf();
        let taken = |why: &str| {
            io(
                &place,
                std::io::Error::new(std::io::ErrorKind::AlreadyExists, why.to_string()),
            )
        };
        if place.exists() {
            let mut entries = std::fs::read_dir(&place)
                .map_err(|_| taken("it is there and not a directory; choose another --out"))?;
            if entries.next().is_some() {
                return Err(taken(
                    "it is not empty (a run is stored there?); choose another --out",
                ));
            }
        }
        let parent = match place.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| io(&parent, e))?;
        let name = place
            .file_name()
            .map_or_else(|| "merged".into(), |n| n.to_string_lossy().into_owned());
        // The process and the time in the name: merges into one place at once (from pods,
        // each its process 1, on a shared volume) never share a directory.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = parent.join(format!(".{name}.merging-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| io(&dir, e))?;
        Ok(Staging {
            dir: RunDir::at(dir),
            place,
            placed: false,
        })
    }

    /// The directory to write the run into.
    pub fn dir(&self) -> &RunDir {
        &self.dir
    }

    /// Renames the whole run into its place (replacing an empty directory there).
    pub fn place(mut self) -> Result<(), StoreError> {
        std::fs::rename(self.dir.path(), &self.place).map_err(|e| io(&self.place, e))?;
        self.placed = true;
        Ok(())
    }
}

impl Drop for Staging {
    /// Removes what was written when the run was not placed: it is not the test.
    fn drop(&mut self) {
        if !self.placed {
            let _ = std::fs::remove_dir_all(self.dir.path());
        }
    }
}
