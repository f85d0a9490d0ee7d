//! The server watched through a Prometheus endpoint: node_exporter's machine CPU and
//! memory, or any exporter's own process metrics (etcd, a Go or Java service).
//!
//! Scrapes run on a thread of their own, once a second, so a slow exporter never delays
//! the run; each interval takes the latest scrape.

use super::TargetHealth;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest a scrape may take.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);
/// Largest exposition read, so a hostile endpoint cannot exhaust memory.
const MAX_BODY: u64 = 32 * 1024 * 1024;

/// Why an endpoint cannot be watched.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch {url}: {reason}")]
pub struct ScrapeError {
    /// The endpoint.
    pub url: String,
    /// What went wrong, with what to do.
    pub reason: String,
}

/// What one scrape said, cumulative counters as they were.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// When it was read.
    pub at: Instant,
    /// CPU seconds used so far (machine busy time, or the process's).
    pub cpu_secs: f64,
    /// Memory in use: the machine's (total − available) or the process's resident set.
    pub memory_bytes: Option<u64>,
    /// Threads of the process (`go_threads`), when exposed.
    pub threads: Option<u64>,
    /// Open descriptors of the process, when exposed.
    pub open_fds: Option<u64>,
}

/// Reads the metrics headroom uses from a text exposition; `None` without a CPU counter.
pub fn read(text: &str, at: Instant) -> Option<Reading> {
    let mut node_cpu: Option<f64> = None;
    let mut process_cpu = None;
    let (mut mem_total, mut mem_available, mut rss) = (None, None, None);
    let (mut threads, mut fds) = (None, None);
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, labels, value)) = split_sample(line) else {
            continue;
        };
        match name {
            "node_cpu_seconds_total" => {
                let idle = [r#"mode="idle""#, r#"mode="iowait""#, r#"mode="steal""#]
                    .iter()
                    .any(|m| labels.contains(m));
                if !idle {
                    *node_cpu.get_or_insert(0.0) += value;
                }
            }
            "process_cpu_seconds_total" => process_cpu = Some(value),
            "node_memory_MemTotal_bytes" => mem_total = Some(value),
            "node_memory_MemAvailable_bytes" => mem_available = Some(value),
            "process_resident_memory_bytes" => rss = Some(value),
            "go_threads" => threads = Some(value as u64),
            "process_open_fds" => fds = Some(value as u64),
            _ => {}
        }
    }
    // node_exporter exposes its own process too: the machine is what was asked about.
    let machine = node_cpu.is_some();
    Some(Reading {
        at,
        cpu_secs: node_cpu.or(process_cpu)?,
        memory_bytes: match (machine, mem_total, mem_available) {
            (true, Some(t), Some(a)) => Some((t - a).max(0.0) as u64),
            _ => rss.map(|r| r as u64),
        },
        threads: if machine { None } else { threads },
        open_fds: if machine { None } else { fds },
    })
}

/// `name{labels} value [timestamp]` → (name, labels, value).
fn split_sample(line: &str) -> Option<(&str, &str, f64)> {
    let (name, labels, rest) = match line.find('{') {
        Some(open) => {
            let close = open + line[open..].rfind('}')?;
            (&line[..open], &line[open + 1..close], &line[close + 1..])
        }
        None => {
            let split = line.find(char::is_whitespace)?;
            (&line[..split], "", &line[split..])
        }
    };
    let value = rest.split_whitespace().next()?.parse::<f64>().ok()?;
    Some((name.trim(), labels, value))
}

/// The change between two readings, as one interval of the server.
pub fn health(from: &Reading, to: &Reading) -> TargetHealth {
    let wall = to.at.duration_since(from.at);
    TargetHealth {
        cpu_percent: super::target::cpu_percent(to.cpu_secs - from.cpu_secs, wall),
        wall_secs: wall.as_secs_f64(),
        rss_bytes: to.memory_bytes.unwrap_or(0),
        threads: to.threads.unwrap_or(0),
        open_fds: to.open_fds,
        ..TargetHealth::default()
    }
}

/// A Prometheus endpoint scraped every second on a thread of its own.
pub struct PrometheusProbe {
    url: String,
    latest: Arc<Mutex<Option<Reading>>>,
    used: Option<Reading>,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for PrometheusProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusProbe")
            .field("url", &self.url)
            .finish()
    }
}

impl PrometheusProbe {
    /// Scrapes `url` once (so a wrong URL is one clear error now) and keeps scraping.
    pub fn new(url: &str) -> Result<PrometheusProbe, ScrapeError> {
        let first = scrape(url)?;
        let latest = Arc::new(Mutex::new(Some(first)));
        let stop = Arc::new(AtomicBool::new(false));
        let (url_owned, shared, stopping) = (url.to_string(), latest.clone(), stop.clone());
        std::thread::Builder::new()
            .name("headroom-scrape".into())
            .spawn(move || {
                while !stopping.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_secs(1));
                    // A failed scrape leaves the last reading; the gap shows as a flat second.
                    if let Ok(r) = scrape(&url_owned) {
                        *shared.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                    }
                }
            })
            .map_err(|e| ScrapeError {
                url: url.into(),
                reason: e.to_string(),
            })?;
        Ok(PrometheusProbe {
            url: url.into(),
            latest,
            used: Some(first),
            stop,
        })
    }

    /// The endpoint.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The server since the reading the last sample used; `None` until a new scrape came.
    pub fn sample(&mut self) -> Option<TargetHealth> {
        let latest = (*self.latest.lock().unwrap_or_else(|p| p.into_inner()))?;
        let used = self.used.replace(latest)?;
        (latest.at > used.at).then(|| health(&used, &latest))
    }
}

impl Drop for PrometheusProbe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One scrape of `url` (plain HTTP, as exporters serve).
fn scrape(url: &str) -> Result<Reading, ScrapeError> {
    let err = |reason: String| ScrapeError {
        url: url.into(),
        reason,
    };
    let target = crate::plan::Target::parse(url).map_err(|e| err(e.to_string()))?;
    if target.scheme != crate::plan::Scheme::Http {
        return Err(err(
            "only http:// endpoints can be scraped (node_exporter serves http on :9100)".into(),
        ));
    }
    let addr = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|e| err(format!("cannot resolve {}: {e}", target.host)))?
        .next()
        .ok_or_else(|| err(format!("{} has no address", target.host)))?;
    let mut stream = TcpStream::connect_timeout(&addr, SCRAPE_TIMEOUT)
        .map_err(|e| err(format!("cannot connect: {e}; is the exporter running?")))?;
    let _ = stream.set_read_timeout(Some(SCRAPE_TIMEOUT));
    let _ = stream.set_write_timeout(Some(SCRAPE_TIMEOUT));
    // HTTP/1.0: the body ends when the connection closes, never chunked.
    let request = format!(
        "GET {} HTTP/1.0\r\nHost: {}\r\nAccept: text/plain\r\nUser-Agent: headroom\r\n\r\n",
        target.path_and_query, target.authority
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| err(format!("cannot send the scrape: {e}")))?;
    let mut raw = Vec::new();
    stream
        .take(MAX_BODY)
        .read_to_end(&mut raw)
        .map_err(|e| err(format!("cannot read the scrape: {e}")))?;
    let at = Instant::now();
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut head = httparse::Response::new(&mut headers);
    let body_at = match head.parse(&raw) {
        Ok(httparse::Status::Complete(n)) => n,
        _ => return Err(err("the answer is not HTTP".into())),
    };
    if head.code != Some(200) {
        return Err(err(format!(
            "the endpoint answered {}; give the metrics path (e.g. http://host:9100/metrics)",
            head.code.unwrap_or(0)
        )));
    }
    let text = String::from_utf8_lossy(&raw[body_at..]);
    read(&text, at).ok_or_else(|| {
        err(
            "no CPU counter (node_cpu_seconds_total or process_cpu_seconds_total) in the answer"
                .into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_exporter_gives_the_machine_and_other_exporters_their_process() {
        let at = Instant::now();
        let node = r#"
# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
node_cpu_seconds_total{cpu="0",mode="idle"} 1000
node_cpu_seconds_total{cpu="0",mode="user"} 30.5
node_cpu_seconds_total{cpu="0",mode="system"} 9.5
node_cpu_seconds_total{cpu="1",mode="iowait"} 7
node_cpu_seconds_total{cpu="1",mode="user"} 10
node_memory_MemTotal_bytes 8.0e+09
node_memory_MemAvailable_bytes 6.0e+09
process_cpu_seconds_total 0.5
process_resident_memory_bytes 1.5e+07
"#;
        let r = read(node, at).unwrap();
        assert_eq!(r.cpu_secs, 50.0);
        assert_eq!(r.memory_bytes, Some(2_000_000_000));
        let etcd = "process_cpu_seconds_total 12.25\nprocess_resident_memory_bytes 4.2e+07\ngo_threads 11\nprocess_open_fds 40\n";
        let r = read(etcd, at).unwrap();
        assert_eq!(
            (r.cpu_secs, r.memory_bytes, r.threads, r.open_fds),
            (12.25, Some(42_000_000), Some(11), Some(40))
        );
        assert!(read("up 1\n", at).is_none());
    }

    #[test]
    fn a_second_of_counters_becomes_a_share_of_a_core() {
        let t0 = Instant::now();
        let a = Reading {
            at: t0,
            cpu_secs: 10.0,
            memory_bytes: Some(5),
            threads: None,
            open_fds: None,
        };
        let b = Reading {
            at: t0 + Duration::from_secs(2),
            cpu_secs: 11.5,
            ..a
        };
        assert_eq!(health(&a, &b).cpu_percent, 75.0);
    }
}
