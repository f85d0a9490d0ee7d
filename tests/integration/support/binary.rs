//! The `headroom` binary run as a user runs it, and its output read back as text or JSON.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The `headroom` binary run with `args`, as a user runs it; the runs it stores (`--out`)
/// are checked for one set of counts.
pub fn headroom(args: &[&str]) -> Output {
    headroom_env(args, &[])
}

/// [`headroom`] with the environment variables `env` added to those inherited.
pub fn headroom_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    super::counts::check_out(args);
    out
}

/// [`headroom`] with `input` on its standard input (`attack -` reads targets there).
pub fn headroom_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // A binary that refuses its arguments before reading closes the pipe: not the test's
    // failure, its output says why.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().expect("the binary runs");
    super::counts::check_out(args);
    out
}

/// What the binary wrote to stdout, as lossy text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What the binary wrote to stderr, as lossy text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts the binary succeeded (showing both its outputs when not) and returns its stdout.
pub fn succeeded(o: Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// The JSON file at `path` (a run's meta.json, a report written with `--format json`).
pub fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
