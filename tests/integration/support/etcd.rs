//! A real etcd on loopback, started by a test in its own temporary directory and stopped
//! (by its PID) when dropped.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running etcd with its v3 JSON gateway.
pub struct Etcd {
    child: Child,
    dir: tempfile::TempDir,
    /// The client port.
    pub port: u16,
}

impl Etcd {
    /// Starts etcd on free loopback ports and waits until it answers.
    pub fn start() -> Etcd {
        let dir = tempfile::tempdir().unwrap();
        let (client, peer) = (super::free_port(), super::free_port());
        let client_url = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let child = Command::new("etcd")
            .args(["--name", "test", "--data-dir"])
            .arg(dir.path().join("data"))
            .args(["--listen-client-urls", &client_url])
            .args(["--advertise-client-urls", &client_url])
            .args(["--listen-peer-urls", &peer_url])
            .args(["--initial-advertise-peer-urls", &peer_url])
            .args(["--initial-cluster", &format!("test={peer_url}")])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("etcd.log")).unwrap())
            .spawn()
            .expect("etcd starts (apt-get install -y etcd-server; .ci/run installs it)");
        let mut etcd = Etcd {
            child,
            dir,
            port: client,
        };
        etcd.wait_ready();
        etcd
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log =
                    std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default();
                let lines: Vec<&str> = log.lines().collect();
                let tail = lines[lines.len().saturating_sub(5)..].join("\n");
                panic!("etcd exited with {status}; its last lines:\n{tail}");
            }
            if self.answers() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("etcd did not answer on port {} within 20 s", self.port);
    }

    /// True when a range request gets a 200.
    fn answers(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let body = r#"{"key":"AA=="}"#;
        let request = format!(
            "POST /v3/kv/range HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
        let mut answer = String::new();
        s.write_all(request.as_bytes()).is_ok()
            && s.read_to_string(&mut answer).is_ok()
            && answer.starts_with("HTTP/1.1 200")
    }

    /// Its process id, for --monitor-pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The base URL of its client API.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
