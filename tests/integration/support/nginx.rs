//! Starts a real nginx as a single process (so SIGSTOP freezes all of it) with its own
//! config, logs and temp files in a temporary directory; stops it by PID on drop.

use super::certs::Certs;
use super::netns::Netns;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// TLS settings of a test nginx.
pub enum Tls<'a> {
    /// Plain HTTP.
    None,
    /// HTTPS (HTTP/1.1 and HTTP/2 by ALPN).
    Server(&'a Certs),
    /// HTTPS that requires a client certificate signed by the test CA.
    ClientCert(&'a Certs),
    /// HTTPS that speaks HTTP/1.1 only: no `h2` offered in ALPN.
    ServerHttp1Only(&'a Certs),
}

/// The access log's format unless a test gives its own.
const DEFAULT_LOG_FORMAT: &str =
    "$server_protocol $status $ssl_client_verify $request_uri $ssl_session_reused";

/// A running nginx.
pub struct Nginx {
    child: Child,
    dir: tempfile::TempDir,
    pub port: u16,
    ip: Ipv4Addr,
}

/// Where a test nginx runs: here on loopback, or inside a test's network namespace at one
/// of its addresses (started through `ip netns exec`, which execs it: the PID is nginx's).
struct Place<'a> {
    netns: Option<&'a Netns>,
    ip: Ipv4Addr,
}

const LOOPBACK: Place<'static> = Place {
    netns: None,
    ip: Ipv4Addr::LOCALHOST,
};

fn nginx_binary() -> PathBuf {
    for candidate in ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"] {
        if Path::new(candidate).exists() {
            return candidate.into();
        }
    }
    panic!("nginx not found: install it (apt-get install -y nginx) or run .ci/run, which does");
}

impl Nginx {
    /// Starts nginx answering `ok` on every path, logging protocol, status and client-cert state.
    pub fn start(tls: Tls<'_>) -> Nginx {
        Nginx::start_with(tls, "keepalive_requests 1000000;")
    }

    /// Like [`Nginx::start`], with `http_conf` added to the `http` block.
    pub fn start_with(tls: Tls<'_>, http_conf: &str) -> Nginx {
        Nginx::launch(
            tls,
            http_conf,
            r#"location / { return 200 "ok\n"; }"#,
            DEFAULT_LOG_FORMAT,
        )
    }

    /// Like [`Nginx::start`], serving `locations` instead of `ok` everywhere.
    pub fn with_locations(tls: Tls<'_>, locations: &str) -> Nginx {
        Nginx::launch(
            tls,
            "keepalive_requests 1000000;",
            locations,
            DEFAULT_LOG_FORMAT,
        )
    }

    /// Seed 000's gate, plain HTTP: `/v3/login` answers the example token, and only requests
    /// bearing it pass on to `upstream` (without it: 401).
    pub fn token_gate(upstream: &str) -> Nginx {
        Nginx::with_locations(
            Tls::None,
            &format!(
                r#"location = /v3/login {{ return 200 '{{"token":"example-token"}}'; }}
    location / {{
      if ($http_authorization != "Bearer example-token") {{ return 401; }}
      proxy_pass {upstream}; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Authorization "";
    }}"#
            ),
        )
    }

    /// Like [`Nginx::with_locations`], writing each access log line in `log_format` (nginx
    /// variables, e.g. `$request_method $request_uri $server_protocol`).
    pub fn with_locations_and_log(tls: Tls<'_>, locations: &str, log_format: &str) -> Nginx {
        Nginx::launch(tls, "keepalive_requests 1000000;", locations, log_format)
    }

    /// Like [`Nginx::with_locations_and_log`] (plain HTTP), run inside `netns` and
    /// listening on its address `ip`.
    pub fn in_netns(netns: &Netns, ip: Ipv4Addr, locations: &str, log_format: &str) -> Nginx {
        Nginx::launch_conf(
            Tls::None,
            &Place {
                netns: Some(netns),
                ip,
            },
            "worker_processes 1;\nmaster_process off;",
            "worker_connections 4096;",
            "keepalive_requests 1000000;",
            locations,
            log_format,
        )
    }

    /// Starts nginx with `events` in its `events` block, `http_conf` in its `http` block
    /// and `locations` in its server.
    pub fn launch_with(tls: Tls<'_>, events: &str, http_conf: &str, locations: &str) -> Nginx {
        Nginx::launch_full(tls, events, http_conf, locations, DEFAULT_LOG_FORMAT)
    }

    fn launch(tls: Tls<'_>, http_conf: &str, locations: &str, log_format: &str) -> Nginx {
        Nginx::launch_full(
            tls,
            "worker_connections 4096;",
            http_conf,
            locations,
            log_format,
        )
    }

    /// Starts nginx with the dynamic `modules` loaded (`"lua"` with the development kit it
    /// needs, `"echo"`; Debian's libnginx-mod-http-lua and libnginx-mod-http-echo, which
    /// tests/run installs), `http_conf` in its `http` block and `locations` in its server.
    pub fn with_modules(tls: Tls<'_>, modules: &[&str], http_conf: &str, locations: &str) -> Nginx {
        let mut main = String::new();
        for m in modules {
            let files: &[&str] = match *m {
                "lua" => &["ndk_http_module", "ngx_http_lua_module"],
                "echo" => &["ngx_http_echo_module"],
                other => panic!("no nginx module {other:?} is known to the tests"),
            };
            for f in files {
                let path = Path::new("/usr/lib/nginx/modules").join(format!("{f}.so"));
                assert!(
                    path.exists(),
                    "{} is missing: install libnginx-mod-http-{m} (tests/run does)",
                    path.display()
                );
                main += &format!("load_module {};\n", path.display());
            }
        }
        main += "worker_processes 1;\nmaster_process off;";
        Nginx::launch_conf(
            tls,
            &LOOPBACK,
            &main,
            "worker_connections 4096;",
            http_conf,
            locations,
            DEFAULT_LOG_FORMAT,
        )
    }

    /// nginx answering `ok` for `secs` seconds from its first request, then holding every
    /// request for `hold_secs` without an answer (Lua: the first request's time is kept in
    /// a shared dictionary): a server that hangs mid-run.
    pub fn hanging_after(secs: u32, hold_secs: u32) -> Nginx {
        Nginx::with_modules(
            Tls::None,
            &["lua"],
            "keepalive_requests 1000000;\n  lua_shared_dict hang 1m;",
            &format!(
                r#"location / {{
      content_by_lua_block {{
        local d = ngx.shared.hang
        d:add("first", ngx.now())
        if ngx.now() - d:get("first") >= {secs} then
          ngx.sleep({hold_secs})
        end
        ngx.say("ok")
      }}
    }}"#
            ),
        )
    }

    /// nginx as it runs in production: a master process and `workers` worker processes.
    pub fn with_workers(workers: u32) -> Nginx {
        Nginx::launch_conf(
            Tls::None,
            &LOOPBACK,
            &format!("worker_processes {workers};\nmaster_process on;"),
            "worker_connections 4096;",
            "",
            r#"location / { return 200 "ok\n"; }"#,
            DEFAULT_LOG_FORMAT,
        )
    }

    /// Plain HTTP with the echo module loaded (Debian's libnginx-mod-http-echo), serving
    /// `locations`: `echo_sleep` makes a server whose every answer takes at least so long.
    pub fn with_echo(locations: &str) -> Nginx {
        Nginx::launch_conf(
            Tls::None,
            &LOOPBACK,
            "load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;\nworker_processes 1;\nmaster_process off;",
            "worker_connections 4096;",
            "keepalive_requests 1000000;",
            locations,
            DEFAULT_LOG_FORMAT,
        )
    }

    fn launch_full(
        tls: Tls<'_>,
        events: &str,
        http_conf: &str,
        locations: &str,
        log_format: &str,
    ) -> Nginx {
        Nginx::launch_conf(
            tls,
            &LOOPBACK,
            "worker_processes 1;\nmaster_process off;",
            events,
            http_conf,
            locations,
            log_format,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn launch_conf(
        tls: Tls<'_>,
        place: &Place<'_>,
        processes: &str,
        events: &str,
        http_conf: &str,
        locations: &str,
        log_format: &str,
    ) -> Nginx {
        assert!(
            !log_format.contains('\''),
            "the log format goes between single quotes"
        );
        let dir = tempfile::tempdir().unwrap();
        let port = super::free_port();
        let root = dir.path();
        for sub in ["tmp", "logs"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let (listen, tls_conf) = match &tls {
            Tls::None => (format!("{}:{port}", place.ip), String::new()),
            Tls::Server(c) | Tls::ClientCert(c) | Tls::ServerHttp1Only(c) => {
                let mut conf = format!(
                    "ssl_certificate {};\n    ssl_certificate_key {};\n    ssl_session_cache shared:hr:1m;\n",
                    c.server_cert.display(),
                    c.server_key.display()
                );
                if let Tls::ClientCert(c) = &tls {
                    conf += &format!(
                        "    ssl_verify_client on;\n    ssl_client_certificate {};\n",
                        c.ca.display()
                    );
                }
                let http2 = if matches!(tls, Tls::ServerHttp1Only(_)) {
                    ""
                } else {
                    " http2"
                };
                (format!("{}:{port} ssl{http2}", place.ip), conf)
            }
        };
        let r = root.display();
        let conf = format!(
            r#"{processes}
daemon off;
error_log {r}/logs/error.log warn;
pid {r}/nginx.pid;
events {{ {events} }}
http {{
  log_format hr '{log_format}';
  access_log {r}/logs/access.log hr;
  client_body_temp_path {r}/tmp/body;
  proxy_temp_path {r}/tmp/proxy;
  fastcgi_temp_path {r}/tmp/fastcgi;
  uwsgi_temp_path {r}/tmp/uwsgi;
  scgi_temp_path {r}/tmp/scgi;
  {http_conf}
  server {{
    listen {listen};
    {tls_conf}
    {locations}
  }}
}}
"#
        );
        std::fs::write(root.join("nginx.conf"), conf).unwrap();
        let mut command = match place.netns {
            Some(ns) => ns.command(nginx_binary()),
            None => Command::new(nginx_binary()),
        };
        let child = command
            .arg("-p")
            .arg(root)
            .arg("-c")
            .arg(root.join("nginx.conf"))
            .arg("-e")
            .arg(root.join("logs/error.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nginx starts");
        let mut nginx = Nginx {
            child,
            dir,
            port,
            ip: place.ip,
        };
        let addr = SocketAddr::from((place.ip, port));
        match place.netns {
            Some(ns) => nginx.wait_ready(|| ns.is_listening(addr)),
            None => nginx.wait_ready(|| std::net::TcpStream::connect(addr).is_ok()),
        }
        nginx
    }

    fn wait_ready(&mut self, listening: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = std::fs::read_to_string(self.dir.path().join("logs/error.log"))
                    .unwrap_or_default();
                panic!("nginx exited with {status}: {log}");
            }
            if listening() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("nginx did not listen on {} within 10 s", self.port);
    }

    /// The access log's lines so far.
    pub fn access_log(&self) -> Vec<String> {
        // nginx writes each line with one write(2); give the last ones a moment to land.
        std::thread::sleep(Duration::from_millis(100));
        std::fs::read_to_string(self.dir.path().join("logs/access.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The nginx process id, for SIGSTOP/SIGCONT.
    pub fn pid(&self) -> rustix::process::Pid {
        rustix::process::Pid::from_child(&self.child)
    }

    /// `scheme://ip:port/path` (127.0.0.1 unless it runs in a namespace).
    pub fn url(&self, scheme: &str, path: &str) -> String {
        format!("{scheme}://{}:{}{path}", self.ip, self.port)
    }

    /// Stops nginx and returns its whole access log: once it has exited, every request it
    /// answered has its line, and no line comes later.
    pub fn stop(&mut self) -> Vec<String> {
        self.terminate();
        std::fs::read_to_string(self.dir.path().join("logs/access.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn terminate(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let pid = self.pid();
        // A stopped process cannot act on SIGTERM: continue it first.
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::CONT);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.terminate();
    }
}
