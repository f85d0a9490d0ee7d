//! PyYAML, a YAML 1.1 reader as kubectl's is (it reads `yes` and `on` as booleans, `1:20` as
//! a number, `2026-11-25` as a date): YAML text read back as JSON by `yaml.safe_load_all`,
//! in one Python process for many texts. Debian's python3-yaml, run by Debian's python3
//! (tests/run installs it), so the reader is the same whatever Python is first on the PATH.

use serde_json::Value as Json;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Reads each line (a JSON string of YAML text) and answers a line: the documents, or the
/// error. A value JSON has no type for (a date) is answered as its `repr`, so it differs
/// from any string it was written as.
const SCRIPT: &str = r#"
import json, sys, yaml
for line in sys.stdin:
    try:
        answer = {"docs": list(yaml.safe_load_all(json.loads(line)))}
    except yaml.YAMLError as e:
        answer = {"error": str(e)}
    print(json.dumps(answer, default=repr), flush=True)
"#;

/// A running PyYAML reader; stopped when dropped.
pub struct PyYaml {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl PyYaml {
    /// Starts the reader.
    pub fn start() -> PyYaml {
        let mut child = Command::new("/usr/bin/python3")
            .args(["-c", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "/usr/bin/python3 cannot run ({e}): run tests/run, which installs python3-yaml"
                )
            });
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        PyYaml {
            child,
            input,
            output,
        }
    }

    /// Every document of `text` as `yaml.safe_load_all` reads it, or PyYAML's error.
    pub fn load_all(&mut self, text: &str) -> Result<Vec<Json>, String> {
        writeln!(self.input, "{}", serde_json::to_string(text).unwrap()).unwrap();
        self.input.flush().unwrap();
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        let answer: Json = serde_json::from_str(&line).unwrap_or_else(|e| {
            panic!("PyYAML answered {line:?} ({e}): is python3-yaml installed?")
        });
        match (&answer["docs"], &answer["error"]) {
            (Json::Array(docs), _) => Ok(docs.clone()),
            (_, Json::String(e)) => Err(e.clone()),
            _ => panic!("PyYAML answered {answer}"),
        }
    }
}

impl Drop for PyYaml {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
