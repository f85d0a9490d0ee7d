//! Build script: stamps `headroom --version` with the commit when built from a git checkout.
//!
//! Outside one (a crates.io or release tarball, a container build without `.git`) the
//! version is the crate's alone: nothing here may fail the build.

use std::process::Command;

fn main() {
    let version = env!("CARGO_PKG_VERSION");
    let stamped = match git(&["rev-parse", "--short", "HEAD"]) {
        Some(commit) => {
            watch_head();
            format!("{version} (commit {commit})")
        }
        None => version.to_string(),
    };
    // Without any rerun-if-changed line cargo reruns this on every source change; with
    // them it watches only what is named, so the script itself is named too.
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-env=HEADROOM_VERSION={stamped}");
}

/// Rebuilds the stamp when HEAD moves: its own file, and the branch it points at.
fn watch_head() {
    for path in [git(&["rev-parse", "--git-path", "HEAD"])]
        .into_iter()
        .chain([git(&["symbolic-ref", "-q", "HEAD"])
            .and_then(|branch| git(&["rev-parse", "--git-path", &branch]))])
        .flatten()
    {
        println!("cargo:rerun-if-changed={path}");
    }
}

/// One line of git's answer, or `None` when git is missing or this is no checkout.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    let line = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !line.is_empty()).then_some(line)
}
