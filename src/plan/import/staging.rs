//! An import's files written whole or not at all: into a hidden directory inside `--out`, then
//! renamed into place (the scenario last), so that a full disk, an error or a stop signal
//! half-way leaves nothing behind (no truncated body file that would block a retry), and a
//! scenario that is there has all its bodies. Like a merged run's staging (`store::merge`),
//! but for files that go into a directory that may hold others.

use super::ImportError;
use std::path::{Path, PathBuf};

/// The hidden directory files are written into until they are all there.
#[derive(Debug)]
pub struct Staging {
    /// The hidden directory.
    dir: PathBuf,
    /// Where its files go.
    out: PathBuf,
    /// Directories made for `out` (deepest first), removed again when nothing is placed.
    made: Vec<PathBuf>,
    /// Renamed into place: nothing left to remove.
    placed: bool,
}

/// The error of writing `shown` (the file as the user will see it, not its staging path).
pub fn write_error(shown: &Path, e: &std::io::Error) -> ImportError {
    let reason = if e.kind() == std::io::ErrorKind::StorageFull {
        "no space left on the device; nothing was written: free some space (or choose another --out) and import again".to_string()
    } else {
        format!("{e}; nothing was written")
    };
    ImportError::Write {
        path: shown.to_path_buf(),
        reason,
    }
}

impl Staging {
    /// A new hidden directory in `out` (made, with its parents, when missing).
    pub fn inside(out: &Path) -> Result<Staging, ImportError> {
        let mut made = Vec::new();
        let mut missing = Some(out);
        while let Some(d) = missing.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            made.push(d.to_path_buf());
            missing = d.parent();
        }
        let mut staging = Staging {
            dir: PathBuf::new(),
            out: out.to_path_buf(),
            made,
            placed: false,
        };
        std::fs::create_dir_all(out).map_err(|e| write_error(out, &e))?;
        // The process and the time in the name: two imports into one directory at once never
        // share one.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = out.join(format!(".headroom-import-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| write_error(out, &e))?;
        staging.dir = dir;
        Ok(staging)
    }

    /// Writes `bytes` as `relative` (e.g. `bodies/a.json`) in the hidden directory.
    pub fn write(&self, relative: &Path, bytes: &[u8]) -> Result<(), ImportError> {
        let path = self.dir.join(relative);
        let shown = self.out.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| write_error(&shown, &e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| write_error(&shown, &e))
    }

    /// Renames the files written into place, `last` after all others: a folder of them
    /// whole when it is not there yet, else file by file (replacing what is there).
    pub fn place(mut self, folders: &[&Path], last: &Path) -> Result<(), ImportError> {
        for folder in folders {
            let (from, to) = (self.dir.join(folder), self.out.join(folder));
            if !to.exists() {
                std::fs::rename(&from, &to).map_err(|e| write_error(&to, &e))?;
                continue;
            }
            let entries = std::fs::read_dir(&from).map_err(|e| write_error(&to, &e))?;
            for entry in entries {
                let entry = entry.map_err(|e| write_error(&to, &e))?;
                let target = to.join(entry.file_name());
                std::fs::rename(entry.path(), &target).map_err(|e| write_error(&target, &e))?;
            }
        }
        let target = self.out.join(last);
        std::fs::rename(self.dir.join(last), &target).map_err(|e| write_error(&target, &e))?;
        self.placed = true;
        let _ = std::fs::remove_dir_all(&self.dir);
        Ok(())
    }
}

impl Drop for Staging {
    /// Removes what was written when it was not placed, and the directories made for it.
    fn drop(&mut self) {
        if self.placed {
            return;
        }
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        for d in &self.made {
            // Only when empty: something else may have been put there meanwhile.
            let _ = std::fs::remove_dir(d);
        }
    }
}
