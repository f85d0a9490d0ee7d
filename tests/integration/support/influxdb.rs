//! A real InfluxDB 1.x on loopback, started by a test on free ports with a configuration of its
//! own in a temporary directory, and stopped (by its PID) when dropped: 1.6 (Debian's
//! `influxdb` package, its `influxd`, not its service), or 1.8, whose `influxd` `tests/run`
//! builds from its Go module (Debian has no 1.8) for its InfluxDB 2 write API
//! (`/api/v2/write?bucket=DB`, `Authorization: Token USER:PASSWORD`).

use super::loopback_http::{percent_encode, request};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The `influxd` of InfluxDB 1.8 that `tests/run` builds (pinned there):
/// `HEADROOM_INFLUXD_18`, or where `tests/run` keeps it by default.
pub fn influxd_1_8() -> PathBuf {
    let path = std::env::var_os("HEADROOM_INFLUXD_18").map_or_else(
        || {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/headroom/influxd-1.8.10/influxd")
        },
        PathBuf::from,
    );
    assert!(
        path.is_file(),
        "InfluxDB 1.8's influxd is not at {}: run the tests with tests/run, which builds it",
        path.display()
    );
    path
}

/// A running InfluxDB.
pub struct Influxdb {
    child: Child,
    dir: tempfile::TempDir,
    /// Its HTTP port.
    pub port: u16,
}

/// The admin user of an InfluxDB started with authentication on.
pub const ADMIN: (&str, &str) = ("admin", "adm1n-pw");

impl Influxdb {
    /// Starts InfluxDB 1.6, Debian's (with HTTP authentication when `auth`), and waits until it
    /// answers.
    pub fn start(auth: bool) -> Influxdb {
        Influxdb::launch(
            Path::new("influxd"),
            auth,
            "influxd starts (apt-get install -y influxdb; tests/run installs it)",
        )
    }

    /// Starts InfluxDB 1.8, the build of `tests/run` (with HTTP authentication when `auth`),
    /// and waits until it answers.
    pub fn start_1_8(auth: bool) -> Influxdb {
        Influxdb::launch(&influxd_1_8(), auth, "InfluxDB 1.8's influxd starts")
    }

    fn launch(influxd: &Path, auth: bool, missing: &str) -> Influxdb {
        let dir = tempfile::tempdir().unwrap();
        let port = super::free_port();
        let rpc = super::free_port();
        let d = dir.path().display();
        let config = format!(
            r#"reporting-disabled = true
bind-address = "127.0.0.1:{rpc}"

[meta]
  dir = "{d}/meta"

[data]
  dir = "{d}/data"
  wal-dir = "{d}/wal"
  query-log-enabled = false

[monitor]
  store-enabled = false

[continuous_queries]
  enabled = false

[http]
  enabled = true
  bind-address = "127.0.0.1:{port}"
  auth-enabled = {auth}
  log-enabled = false
"#
        );
        let path = dir.path().join("influxdb.conf");
        std::fs::write(&path, config).unwrap();
        let child = Command::new(influxd)
            .arg("-config")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("influxd.log")).unwrap())
            .spawn()
            .expect(missing);
        let mut db = Influxdb { child, dir, port };
        db.wait_ready();
        if auth {
            // The first user may be made without credentials, and must be an admin.
            db.query_post(&format!(
                "CREATE USER {} WITH PASSWORD '{}' WITH ALL PRIVILEGES",
                ADMIN.0, ADMIN.1
            ));
        }
        db
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("influxd exited with {status}; its log:\n{}", self.log());
            }
            if request(self.port, "GET", "/ping").is_some_and(|(code, _)| code == 204) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("influxd was not ready on port {} within 30 s", self.port);
    }

    /// The tail of its log, for a failing assertion.
    pub fn log(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("influxd.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Runs a statement that changes something (`CREATE DATABASE …`), as the admin when
    /// authentication is on; panics when InfluxDB reports an error.
    pub fn query_post(&self, q: &str) {
        let path = format!("/query?u={}&p={}&q={}", ADMIN.0, ADMIN.1, percent_encode(q));
        let (code, body) = request(self.port, "POST", &path).expect("influxd answers a query");
        assert!(
            code == 200 && !body.contains("\"error\""),
            "{q}: {code} {body}"
        );
    }

    /// The series of the InfluxQL `q` on database `db`, with times in ms since the epoch.
    pub fn select(&self, db: &str, q: &str) -> serde_json::Value {
        let path = format!(
            "/query?u={}&p={}&db={db}&epoch=ms&q={}",
            ADMIN.0,
            ADMIN.1,
            percent_encode(q)
        );
        let (code, body) = request(self.port, "GET", &path).expect("influxd answers");
        assert_eq!(code, 200, "{q}: {body}");
        let json: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{q}: {e}: {body}"));
        assert!(json["results"][0]["error"].is_null(), "{q}: {body}");
        json["results"][0]["series"].clone()
    }
}

impl Drop for Influxdb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
