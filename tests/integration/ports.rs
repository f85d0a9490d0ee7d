//! Running out of ephemeral ports (in a network namespace of the test's own with a port range
//! of eight, so the host is untouched) or of descriptors. The report must blame the generator,
//! and the generator must not spin on the shortage.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A private network namespace with loopback up and a tiny ephemeral port range.
struct Netns {
    name: String,
}

impl Netns {
    fn new() -> Netns {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("hr-test-{}-{n}", std::process::id());
        let ip = |args: &[&str]| {
            let o = Command::new("ip")
                .args(args)
                .output()
                .expect("ip (iproute2) runs");
            assert!(
                o.status.success(),
                "ip {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        };
        ip(&["netns", "add", &name]);
        let ns = Netns { name };
        ip(&["-n", &ns.name, "link", "set", "lo", "up"]);
        ip(&[
            "netns",
            "exec",
            &ns.name,
            "sysctl",
            "-q",
            "-w",
            "net.ipv4.ip_local_port_range=40000 40007",
        ]);
        ns
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        c
    }

    fn wait_listening(&self, port: u16) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let o = self.command("ss").args(["-ltn"]).output().unwrap();
            if String::from_utf8_lossy(&o.stdout).contains(&format!("127.0.0.1:{port}")) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("nothing listened on {port} in {}", self.name);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn running_out_of_ports_is_blamed_on_the_generator() {
    let _one = crate::support::one_heavy_at_a_time();
    let ns = Netns::new();
    let bin = env!("CARGO_BIN_EXE_headroom");
    let _target = Killed(
        ns.command(bin)
            .args([
                "target",
                "--listen",
                "127.0.0.1:18080",
                "--latency",
                "300ms",
                "--threads",
                "1",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    ns.wait_listening(18080);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // 100 req/s at 300 ms needs about 30 connections; the namespace has 8 local ports.
    let o = ns
        .command(bin)
        .args([
            "attack",
            "http://127.0.0.1:18080/",
            "--rate",
            "100",
            "-n",
            "60",
            "-q",
            "--format",
            "json",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let errors = v["errors"].as_array().unwrap();
    let ports = errors
        .iter()
        .find(|e| e["key"] == "port_exhaustion")
        .unwrap_or_else(|| panic!("{errors:?}"));
    assert_eq!(ports["side"], "client");
    let verdict = &v["verdict"];
    assert!(
        ["generator", "both"].contains(&verdict["limit"].as_str().unwrap()),
        "{verdict}"
    );
    assert!(
        verdict["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["finding"] == "shortage" && f["error"] == "port_exhaustion"),
        "{verdict}"
    );
    assert_eq!(v["requests"]["total"], 60, "every request is accounted for");
}

#[test]
fn running_out_of_descriptors_backs_off_instead_of_spinning() {
    let _one = crate::support::one_heavy_at_a_time();
    use crate::support::certs;
    use crate::support::nginx::{Nginx, Tls};
    let dir = tempfile::tempdir().unwrap();
    let c = certs::make(dir.path());
    let plain = Nginx::start(Tls::None);
    let tls = Nginx::start(Tls::Server(&c));
    let ca = c.ca.display().to_string();
    let cases: [(&Nginx, String, Vec<&str>); 2] = [
        (&plain, plain.url("http", "/"), vec!["--http1"]),
        (
            &tls,
            tls.url("https", "/"),
            vec!["--http2", "--max-streams", "2", "--cacert", &ca],
        ),
    ];
    for (nginx, url, extra) in cases {
        let out = dir.path().join(format!("run-{}", extra[0]));
        // 200 users need 200 connections (100 over HTTP/2); 64 descriptors hold about 50.
        let o = Command::new("sh")
            .args(["-c", "ulimit -n 64 && exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_headroom"))
            .args(["attack", &url, "-c", "200", "-d", "2s", "--threads", "2"])
            .args(["-q", "--format", "json"])
            .args(&extra)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let errors = v["errors"].as_array().unwrap();
        let keys: Vec<&str> = errors.iter().filter_map(|e| e["key"].as_str()).collect();
        assert_eq!(keys, ["too_many_open_files"], "{url}: {errors:?}");
        // Each failed attempt pauses opening for at least 10 ms, per thread: over 2 s (and
        // the second of grace) no more than 2 × 300 attempts can fail, however fast the
        // machine. Spinning on the shortage failed tens of thousands.
        let failed = errors[0]["count"].as_u64().unwrap();
        assert!(failed <= 600, "{url}: {failed} failures");
        let answered = v["status_codes"]["200"].as_u64().unwrap_or(0);
        assert!(answered > 0, "{url}: the connections that opened were used");
        assert_eq!(nginx.access_log().len() as u64, answered, "{url}");
    }
}
