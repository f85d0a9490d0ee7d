//! The README's commands run as written, against the built-in target.
//!
//! The rule (README.md's tour says it to readers; CONTRIBUTING.md to writers):
//! - the Quick start block holds exactly its two commands, `cargo run --release -- demo` and
//!   `tests/run`, and `.ci/run` calls `tests/run`; they are not run here (the first builds in
//!   release for minutes, the second is the whole suite);
//! - the Install block is not run either (it builds again: minutes; this binary is that build);
//! - every other line of every ```sh block, its `\` continuations joined and `#` comments
//!   dropped, is a `headroom …` command run in order, from a fresh directory holding the
//!   `examples/` files the commands name; a line ending in ` &` starts a server kept until the
//!   test ends (waited for until its port answers);
//! - `127.0.0.1:8080` and `127.0.0.1:8081`, the built-in target's addresses in the tour, become
//!   free ports, in the commands and in the example files they read.
//!
//! A command that fails, or runs longer than its bound, fails the test with its README line.

use crate::support::{free_port, one_heavy_at_a_time};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The README's sections whose blocks are not run, and why (see the module's rule).
const NOT_RUN: [&str; 2] = ["Quick start", "Install"];

/// The Quick start block, command by command (comments dropped).
const QUICK_START: [&str; 2] = ["cargo run --release -- demo", "tests/run"];

/// The longest one command may take: the tour's capacity search takes about a minute on the
/// 2-core machine, so a bound ten times the slowest step's time fails only a hung command.
const COMMAND_BOUND: Duration = Duration::from_secs(600);

/// One command of a ```sh block: its text and the README line it starts on.
#[derive(Debug, Clone)]
struct Line {
    number: usize,
    text: String,
}

/// One ```sh block: the `##` section it is in and its commands.
#[derive(Debug)]
struct Block {
    section: String,
    lines: Vec<Line>,
}

/// Every ```sh block of `markdown`, with continuations joined and comments dropped.
fn sh_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut section = String::new();
    let mut current: Option<Block> = None;
    let mut pending: Option<Line> = None;
    for (i, raw) in markdown.lines().enumerate() {
        let number = i + 1;
        match current.as_mut() {
            None => {
                if let Some(title) = raw.strip_prefix("## ") {
                    section = title.trim().to_string();
                } else if raw.trim() == "```sh" {
                    current = Some(Block {
                        section: section.clone(),
                        lines: Vec::new(),
                    });
                }
            }
            Some(block) if raw.trim() == "```" => {
                block.lines.extend(pending.take());
                blocks.push(current.take().unwrap());
            }
            Some(block) => {
                let code = strip_comment(raw);
                let (code, continues) = match code.trim_end().strip_suffix('\\') {
                    Some(head) => (head.trim().to_string(), true),
                    None => (code.trim().to_string(), false),
                };
                let line = match pending.take() {
                    Some(mut p) => {
                        p.text = format!("{} {code}", p.text);
                        p
                    }
                    None if code.is_empty() => continue,
                    None => Line { number, text: code },
                };
                if continues {
                    pending = Some(line);
                } else {
                    block.lines.push(line);
                }
            }
        }
    }
    assert!(
        current.is_none(),
        "README.md: a ```sh block is never closed"
    );
    blocks
}

/// `line` without a `#` comment (a `#` outside quotes that starts a word).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if prev.is_whitespace() => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// Servers a test started, stopped when it ends however it ends.
struct Servers(Vec<Child>);

impl Drop for Servers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Waits until something accepts connections on `port`, at most 30 s.
fn wait_for_port(port: u16, line: &Line) {
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "README.md:{}: `{}` did not listen on port {port} within 30 s",
            line.number,
            line.text
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `args` in `dir` to its end within [`COMMAND_BOUND`], failing with the README line.
fn run_to_end(args: &[String], dir: &Path, line: &Line) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // Read both pipes on threads so a chatty command never blocks on a full pipe.
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out_pipe, &mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err_pipe, &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > COMMAND_BOUND {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    let tail = |s: &str| {
        s.lines()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    };
    match status {
        Some(s) if s.success() => {}
        Some(s) => panic!(
            "README.md:{}: `{}` failed ({s})\nstdout (end):\n{}\nstderr (end):\n{}",
            line.number,
            line.text,
            tail(&out),
            tail(&err)
        ),
        None => panic!(
            "README.md:{}: `{}` still ran after {:?}: stopped",
            line.number, line.text, COMMAND_BOUND
        ),
    }
}

/// Copies each `examples/…` file `args` names into `dir`, with `replace` applied.
fn copy_examples(args: &[String], dir: &Path, replace: &[(String, String)]) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for arg in args.iter().filter(|a| a.starts_with("examples/")) {
        let mut text = std::fs::read_to_string(repo.join(arg))
            .unwrap_or_else(|e| panic!("README.md names {arg}: {e}"));
        for (from, to) in replace {
            text = text.replace(from, to);
        }
        let copy: PathBuf = dir.join(arg);
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::write(copy, text).unwrap();
    }
}

#[test]
fn the_quick_start_is_the_two_commands_and_ci_runs_the_second() {
    let blocks = sh_blocks(&readme());
    let quick: Vec<_> = blocks
        .iter()
        .filter(|b| b.section == "Quick start")
        .collect();
    assert_eq!(quick.len(), 1, "README.md has one Quick start block");
    let commands: Vec<&str> = quick[0].lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(commands, QUICK_START, "README.md's Quick start block");
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| strip_comment(l).trim() == "tests/run"
            || strip_comment(l).trim() == "exec tests/run"),
        ".ci/run must call tests/run, the README's test command"
    );
    // And nothing else: CI is the README's test command, exactly.
    let commands: Vec<&str> = ci
        .lines()
        .map(|l| strip_comment(l).trim())
        .filter(|l| !l.is_empty() && !l.starts_with("set ") && !l.starts_with("cd "))
        .collect();
    assert_eq!(
        commands,
        ["exec tests/run"],
        ".ci/run runs only the README's test command"
    );
}

#[test]
fn the_readme_is_a_front_door_of_at_most_300_lines() {
    let lines = readme().lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: move the detail to docs/"
    );
}

#[test]
fn every_readme_command_runs_as_written_against_the_built_in_target() {
    let _heavy = one_heavy_at_a_time();
    let blocks = sh_blocks(&readme());
    let dir = tempfile::tempdir().unwrap();
    let replace: Vec<(String, String)> = ["127.0.0.1:8080", "127.0.0.1:8081"]
        .iter()
        .map(|a| (a.to_string(), format!("127.0.0.1:{}", free_port())))
        .collect();
    let mut servers = Servers(Vec::new());
    let mut ran = 0;
    for line in blocks
        .iter()
        .filter(|b| !NOT_RUN.contains(&b.section.as_str()))
        .flat_map(|b| &b.lines)
    {
        let mut text = line.text.clone();
        for (from, to) in &replace {
            text = text.replace(from, to);
        }
        let background = text.ends_with(" &");
        let text = text.trim_end_matches(" &");
        let words = shlex::split(text)
            .unwrap_or_else(|| panic!("README.md:{}: cannot split `{}`", line.number, line.text));
        assert_eq!(
            words.first().map(String::as_str),
            Some("headroom"),
            "README.md:{}: `{}` is not a headroom command: the README's ```sh blocks hold only \
             commands this test runs (see tests/integration/readme.rs)",
            line.number,
            line.text
        );
        let args = &words[1..];
        copy_examples(args, dir.path(), &replace);
        if background {
            let child = Command::new(env!("CARGO_BIN_EXE_headroom"))
                .args(args)
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("the binary runs");
            servers.0.push(child);
            let port = replace
                .iter()
                .find(|(_, to)| text.contains(to.as_str()))
                .and_then(|(_, to)| to.rsplit(':').next()?.parse().ok())
                .unwrap_or_else(|| {
                    panic!(
                        "README.md:{}: a background command listens on 127.0.0.1:8080 or :8081",
                        line.number
                    )
                });
            wait_for_port(port, line);
        } else {
            run_to_end(args, dir.path(), line);
        }
        ran += 1;
    }
    // The tour's steps: a test that silently ran nothing would prove nothing.
    assert!(
        ran >= 8,
        "only {ran} README commands ran: is the tour still there?"
    );
    assert!(
        dir.path().join("sweep.html").is_file(),
        "the tour's HTML report"
    );
}

#[test]
fn the_extraction_joins_continuations_and_drops_comments() {
    let md = "## A\n\n```sh\nheadroom attack x \\\n    --rate 5   # a comment\n# only a comment\n\nheadroom run 'a # b'\n```\n\n```yaml\nheadroom: no\n```\n";
    let blocks = sh_blocks(md);
    assert_eq!(blocks.len(), 1);
    let lines: Vec<(usize, &str)> = blocks[0]
        .lines
        .iter()
        .map(|l| (l.number, l.text.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (4, "headroom attack x --rate 5"),
            (8, "headroom run 'a # b'")
        ]
    );
    assert_eq!(blocks[0].section, "A");
}
