//! A real Prometheus on loopback (Debian's `prometheus` package, not its service), started
//! by a test with the remote-write receiver and native histograms on, in its own temporary
//! directory, and stopped (by its PID) when dropped.

use super::loopback_http::{percent_encode, request};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running Prometheus.
pub struct Prometheus {
    child: Child,
    dir: tempfile::TempDir,
    /// Its HTTP port.
    pub port: u16,
}

impl Prometheus {
    /// Starts Prometheus on a free loopback port and waits until it is ready.
    pub fn start() -> Prometheus {
        Prometheus::start_with(true)
    }

    /// Starts Prometheus as [`start`](Self::start) does, but without native histograms: the
    /// setup mistake a new user makes, whose remote writes Prometheus answers with a 500.
    pub fn start_without_native_histograms() -> Prometheus {
        Prometheus::start_with(false)
    }

    fn start_with(native_histograms: bool) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        // Nothing to scrape: the test writes to it.
        std::fs::write(&config, "global:\n  scrape_interval: 1m\n").unwrap();
        let port = super::free_port();
        let mut command = Command::new("prometheus");
        if native_histograms {
            command.arg("--enable-feature=native-histograms");
        }
        let child = command
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--web.enable-remote-write-receiver")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap())
            .spawn()
            .expect("prometheus starts (apt-get install -y prometheus; tests/run installs it)");
        let mut p = Prometheus { child, dir, port };
        p.wait_ready();
        p
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("prometheus exited with {status}; its log:\n{}", self.log());
            }
            if request(self.port, "GET", "/-/ready").is_some_and(|(code, _)| code == 200) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("prometheus was not ready on port {} within 30 s", self.port);
    }

    /// The tail of its log, for a failing assertion.
    pub fn log(&self) -> String {
        let log =
            std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Its remote-write URL.
    pub fn write_url(&self) -> String {
        format!("http://127.0.0.1:{}/api/v1/write", self.port)
    }

    /// The result vector of the instant query `expr` (evaluated now), as JSON.
    pub fn query(&self, expr: &str) -> serde_json::Value {
        let path = format!("/api/v1/query?query={}", percent_encode(expr));
        let (code, body) = request(self.port, "GET", &path).expect("prometheus answers a query");
        let json: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("query {expr}: {e}: {body}"));
        assert_eq!(code, 200, "query {expr}: {body}");
        json["data"]["result"].clone()
    }

    /// The single float value of the instant query `expr`.
    pub fn scalar(&self, expr: &str) -> f64 {
        let result = self.query(expr);
        let value = result[0]["value"][1]
            .as_str()
            .unwrap_or_else(|| panic!("{expr} gave no value: {result}\n{}", self.log()));
        value.parse().unwrap()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
