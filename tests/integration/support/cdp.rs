//! Headless Chromium driven over the DevTools protocol (`--remote-debugging-pipe`: JSON
//! messages ended by a NUL byte on descriptors 3 and 4, so no WebSocket is needed), for a page
//! that changes while it is open (the live page): evaluate script in it at any moment, read
//! the errors it logged, take a screenshot. `chromium.rs` serves pages that are done once
//! loaded; this one serves pages that are never done.

use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long one answer from Chromium may take before the test fails rather than hangs.
const ANSWER: Duration = Duration::from_secs(60);

/// One page open in a headless Chromium of its own.
pub struct Browser {
    child: Child,
    to: ChildStdin,
    from: mpsc::Receiver<Value>,
    next: u64,
    session: String,
    events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Opens `url` in a 1280 × 800 window.
    pub fn open(url: &str) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        // The shell hands Chromium our pipes as descriptors 3 (what it reads) and 4 (what it
        // writes), which std's Command cannot place without unsafe code.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "exec chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --remote-debugging-pipe --user-data-dir={} --window-size=1280,800 about:blank 3<&0 4>&1 0</dev/null 1>/dev/null",
                profile.path().display()
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium is needed for this test (tests/run installs Debian's chromium)");
        let to = child.stdin.take().unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, from) = mpsc::channel();
        std::thread::spawn(move || loop {
            let mut message = Vec::new();
            match out.read_until(0, &mut message) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    message.pop();
                    if let Ok(v) = serde_json::from_slice::<Value>(&message) {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut b = Browser {
            child,
            to,
            from,
            next: 0,
            session: String::new(),
            events: Vec::new(),
            _profile: profile,
        };
        let target = b.call("Target.createTarget", json!({ "url": "about:blank" }));
        let id = target["targetId"].as_str().unwrap().to_string();
        let attached = b.call(
            "Target.attachToTarget",
            json!({ "targetId": id, "flatten": true }),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            b.call(domain, json!({}));
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false }),
        );
        b.call("Page.navigate", json!({ "url": url }));
        b
    }

    /// Sends one command (to the page once attached) and waits for its answer, keeping the
    /// events that arrive meanwhile.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let answer = self.answer(method, params);
        assert!(answer.get("error").is_none(), "{method} failed: {answer}");
        answer["result"].clone()
    }

    /// Sends one command and returns its whole answer, an error included.
    fn answer(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).expect("chromium reads its pipe");
        loop {
            let v = self
                .from
                .recv_timeout(ANSWER)
                .unwrap_or_else(|e| panic!("chromium did not answer {method}: {e}"));
            if v["id"] == json!(id) {
                return v;
            }
            self.events.push(v);
        }
    }

    /// The value of `expression` in the page now (a promise is awaited).
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expression} threw: {r}"
        );
        r["result"]["value"].clone()
    }

    /// The value of `expression` in the page now, or `None` while there is no page to ask
    /// (between two documents) or it threw.
    pub fn try_eval(&mut self, expression: &str) -> Option<Value> {
        let a = self.answer(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
        );
        let r = a.get("result")?;
        if a.get("error").is_some() || r.get("exceptionDetails").is_some() {
            return None;
        }
        Some(r["result"]["value"].clone())
    }

    /// Every error the page logged so far: uncaught exceptions, `console.error`, and the
    /// browser's own error entries (a failed load, a refused request).
    pub fn errors(&mut self) -> Vec<String> {
        self.eval("0");
        self.events
            .iter()
            .filter_map(|e| match e["method"].as_str()? {
                "Runtime.exceptionThrown" => Some(e["params"]["exceptionDetails"].to_string()),
                "Runtime.consoleAPICalled" if e["params"]["type"] == "error" => {
                    Some(e["params"]["args"].to_string())
                }
                "Log.entryAdded" if e["params"]["entry"]["level"] == "error" => Some(format!(
                    "{} ({})",
                    e["params"]["entry"]["text"], e["params"]["entry"]["url"]
                )),
                _ => None,
            })
            .collect()
    }

    /// The window as a PNG.
    pub fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine;
        let shot = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
