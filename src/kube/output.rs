//! The output directory: the names of the files `headroom kube` writes, and writing a bundle
//! over an earlier one so that `kubectl apply -f DIR` sees only this write's objects.

use super::KubeError;
use std::path::{Path, PathBuf};

/// The ConfigMap's file.
pub const FILES: &str = "10-files.yaml";
/// The Secret's file.
pub const SECRET: &str = "20-secret.yaml";
/// The volume claim's file (volume mode).
pub const RUNS: &str = "30-runs.yaml";
/// The NetworkPolicy's file, applied before the Job so that no pod runs without it.
pub const NETWORK: &str = "35-network.yaml";
/// The shards' Job's file.
pub const JOB: &str = "40-job.yaml";
/// The merge Job's file (volume mode), in `merge/` so that `kubectl apply -f DIR` leaves it.
pub const MERGE: &str = "merge/50-merge.yaml";
/// Every file `headroom kube` may write, relative to the output directory.
pub const ALL: [&str; 6] = [FILES, SECRET, RUNS, NETWORK, JOB, MERGE];
/// What every file written holds (the objects' `managed-by` label): a file of one of
/// [`ALL`]'s names without it is not headroom's, and is never replaced or removed.
pub const MARK: &str = "app.kubernetes.io/managed-by: headroom-kube";

/// Writes `files` under `dir` (created when missing) and removes the files an earlier write
/// left there that this one does not make (a volume claim and a merge Job after a switch to
/// `--collect copy`, a Secret the scenario no longer needs): otherwise `kubectl apply -f DIR`
/// would apply them beside the new ones. Only files of [`ALL`]'s names that hold [`MARK`] are
/// replaced or removed; any other file at one of those names stops the write before anything
/// is changed. Returns the files removed.
pub fn write(dir: &Path, files: &[(PathBuf, String)]) -> Result<Vec<PathBuf>, KubeError> {
    let mut stale = Vec::new();
    for name in ALL {
        let path = dir.join(name);
        if !ours(&path)? {
            continue;
        }
        if !files.iter().any(|(p, _)| p == Path::new(name)) {
            stale.push(PathBuf::from(name));
        }
    }
    let failed = |path: &Path, e: std::io::Error| KubeError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    for (name, text) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| failed(parent, e))?;
        }
        std::fs::write(&path, text).map_err(|e| failed(&path, e))?;
    }
    for name in &stale {
        let path = dir.join(name);
        std::fs::remove_file(&path).map_err(|e| failed(&path, e))?;
        // `merge/` goes too when nothing else is in it (remove_dir refuses a non-empty one).
        if let Some(parent) = name.parent().filter(|p| !p.as_os_str().is_empty()) {
            let _ = std::fs::remove_dir(dir.join(parent));
        }
    }
    Ok(stale)
}

/// Whether `path` is a file an earlier `headroom kube` wrote: false when there is none, an
/// error when something else is there.
fn ours(path: &Path) -> Result<bool, KubeError> {
    let foreign = || KubeError::Foreign {
        path: path.to_path_buf(),
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(KubeError::Write {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }),
        Ok(m) if !m.is_file() => Err(foreign()),
        // A manifest is at most a few MiB: read whole, it is checked for the label.
        Ok(_) => match std::fs::read_to_string(path) {
            Ok(text) if text.contains(MARK) => Ok(true),
            _ => Err(foreign()),
        },
    }
}
