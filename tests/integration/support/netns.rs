//! Network namespaces a test makes for itself, and removes on drop (also when it fails):
//! a namespace of its own, or a small LAN of them joined by a bridge, each generator with an
//! address of its own, as the machines of a cluster have.
//!
//! Nothing is added to the host's own namespace: a veth pair is made with each end already
//! in its namespace, addresses are taken from 198.18.0.0/15 (RFC 2544's benchmarking range)
//! and live only inside the namespaces, and no namespace has a route out of its LAN.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `ip args`, panicking with its error unless it succeeds.
fn ip(args: &[&str]) {
    let o = Command::new("ip")
        .args(args)
        .output()
        .expect("ip (iproute2) runs");
    assert!(
        o.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A network namespace with loopback up, deleted on drop.
pub struct Netns {
    name: String,
}

impl Netns {
    /// A new namespace named after this process and a counter, so tests running at once and
    /// test binaries running beside each other never share one.
    pub fn new() -> Netns {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("hr-test-{}-{n}", std::process::id());
        ip(&["netns", "add", &name]);
        // Owned from here: whatever fails next, drop deletes it.
        let ns = Netns { name };
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    /// Its name, for `ip netns exec`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `ip -n NAME args`, panicking with its error unless it succeeds.
    pub fn ip(&self, args: &[&str]) {
        let mut all = vec!["-n", &self.name];
        all.extend_from_slice(args);
        ip(&all);
    }

    /// `program` run inside the namespace.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).arg(program);
        c
    }

    /// Waits (10 s at most) until a socket in the namespace listens on `addr`.
    pub fn wait_listening(&self, addr: SocketAddr) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.is_listening(addr) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("nothing listened on {addr} in {}", self.name);
    }

    /// True when a TCP socket in the namespace listens on `addr`.
    pub fn is_listening(&self, addr: SocketAddr) -> bool {
        let o = self.command("ss").args(["-ltnH"]).output().unwrap();
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| l.split_whitespace().nth(3) == Some(&addr.to_string()))
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Its interfaces (a bridge, veth ends) go with it, and a veth pair with either end.
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

/// A LAN: a server namespace holding a bridge at [`Lan::SERVER`], and `hosts` namespaces each
/// joined to the bridge by a veth pair, host `i` at 198.18.0.(11 + i).
pub struct Lan {
    /// Where the server runs; the bridge's address is its own.
    pub server: Netns,
    /// The hosts, each with its address.
    pub hosts: Vec<(Netns, Ipv4Addr)>,
}

impl Lan {
    /// The server's address.
    pub const SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);

    /// Makes the namespaces and links; on a failure midway, those made are removed.
    pub fn new(hosts: u8) -> Lan {
        assert!(hosts <= 100, "one /24 holds them");
        let mut lan = Lan {
            server: Netns::new(),
            hosts: Vec::new(),
        };
        let server = &lan.server;
        server.ip(&["link", "add", "br0", "type", "bridge"]);
        server.ip(&["addr", "add", &format!("{}/24", Lan::SERVER), "dev", "br0"]);
        server.ip(&["link", "set", "br0", "up"]);
        for i in 0..hosts {
            let host = Netns::new();
            let addr = Ipv4Addr::new(198, 18, 0, 11 + i);
            let port = format!("p{i}");
            // Both ends are made where they live: the bridge's port in the server's namespace,
            // `eth0` straight into the host's.
            lan.server.ip(&[
                "link",
                "add",
                &port,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                host.name(),
            ]);
            lan.server
                .ip(&["link", "set", &port, "master", "br0", "up"]);
            host.ip(&["addr", "add", &format!("{addr}/24"), "dev", "eth0"]);
            host.ip(&["link", "set", "eth0", "up"]);
            lan.hosts.push((host, addr));
        }
        lan
    }
}
