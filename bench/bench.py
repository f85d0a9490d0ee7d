#!/usr/bin/env python3
"""Runs headroom and its peers side by side against one nginx and writes bench/RESULTS.md.

Every number here is measured in this run: CPU time (user + system) comes from the kernel's
rusage of each generator process, peak RSS from GNU time around it; rates and percentiles are
what each tool reports.
"""
import argparse
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import shutil
import socket
import tempfile
import threading
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out")
PEERS = os.path.join(OUT, "peers")


def parse_args(argv):
    ap = argparse.ArgumentParser(description="headroom against its peers, side by side, on one nginx")
    ap.add_argument("--quick", action="store_true", help="3 s runs, 1 round: for checking the script itself")
    ap.add_argument("--headroom", default=os.environ.get("HEADROOM_BIN") or os.path.join(ROOT, "target", "release", "headroom"),
                    help="the headroom binary under test (env HEADROOM_BIN; default target/release/headroom)")
    ap.add_argument("--baseline", default=os.environ.get("HEADROOM_BASELINE") or None,
                    help="a second headroom binary, run as the extra tool 'headroom-before' in every row (a)-(f), "
                         "interleaved in the same rounds (env HEADROOM_BASELINE)")
    ap.add_argument("--only", default=os.environ.get("BENCH_ONLY") or None,
                    help="run only these rows, e.g. 'ef' (skips the headroom-only sections at the end)")
    alone = ap.add_mutually_exclusive_group()
    alone.add_argument("--raw-overhead", action="store_true",
                    help="only the --raw section: row (a) at 5,000 req/s with and without --raw, interleaved "
                         "round by round (no peers, no other rows); replaces that section of RESULTS.md")
    alone.add_argument("--push-overhead", action="store_true",
                    help="only the --push section: row (a) at 5,000 req/s without --push, with --push prometheus=… "
                         "to a real Prometheus and with --push influxdb=… to a real InfluxDB on loopback, interleaved "
                         "round by round (no peers, no other rows); replaces that section of RESULTS.md")
    alone.add_argument("--live-overhead", action="store_true",
                    help="only the --live section: row (a) at 5,000 req/s with and without --live, a page following "
                         "the run's events in the second, interleaved round by round (no peers, no other rows); "
                         "replaces that section of RESULTS.md")
    args = ap.parse_args(argv)
    if args.only and (args.raw_overhead or args.push_overhead or args.live_overhead):
        ap.error("--only runs peers' rows; --raw-overhead, --push-overhead and --live-overhead run one section alone")
    return args


ARGS = parse_args(sys.argv[1:] if __name__ == "__main__" else [])
HEADROOM = os.path.abspath(ARGS.headroom)
BASELINE = os.path.abspath(ARGS.baseline) if ARGS.baseline else None
OHA = os.path.join(PEERS, "bin", "oha")
VEGETA = os.path.join(PEERS, "vegeta")
QUICK = ARGS.quick
SECS = 3 if QUICK else 10
ROUNDS = 1 if QUICK else 5
# The --raw and --push sections compare headroom with itself: their differences are a few per
# cent, nearer the round-to-round spread than the peers' are, so they take more rounds.
OVERHEAD_ROUNDS = 1 if QUICK else 10
RATE = 5000
CONNS = 50
H2_CONNS, H2_STREAMS = 10, 10      # (e): connections x streams per connection, closed model
NEWCONN_RATE = 1000                 # (f): one new TLS connection per request at this rate
NGINX_CORE, GEN_CORE = "0", "1"
# BENCH_PORT_OFFSET moves every port, for a machine where something else holds these.
_OFFSET = int(os.environ.get("BENCH_PORT_OFFSET", "0"))
HTTP, HTTPS, MTLS, H2, NEWCONN = (p + _OFFSET for p in (18080, 18443, 18444, 18445, 18446))
PORTS = (HTTP, HTTPS, MTLS, H2, NEWCONN)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def make_certs(d):
    def gen(*args):
        sh(["openssl", *args])
    gen("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
        "-subj", "/CN=bench CA", "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem")
    for name, ext in [("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth"),
                      ("client", "extendedKeyUsage=clientAuth")]:
        gen("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", f"/CN={name}",
            "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.csr")
        with open(f"{d}/{name}.ext", "w") as f:
            f.write(ext + "\n")
        gen("x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/ca.pem", "-CAkey", f"{d}/ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", f"{d}/{name}.ext", "-out", f"{d}/{name}.pem")


def port_taken(port):
    import socket
    try:
        socket.create_connection(("127.0.0.1", port), 0.2).close()
        return True
    except OSError:
        return False


def start_nginx(d):
    taken = [p for p in PORTS if port_taken(p)]
    if taken:
        raise SystemExit(f"ports {taken} are already in use on 127.0.0.1: stop whatever listens there first")
    os.makedirs(f"{d}/logs", exist_ok=True)
    tls = f"ssl_certificate {d}/server.pem; ssl_certificate_key {d}/server.key;"
    # (f)'s server logs one line per request with its connection and whether its TLS session
    # was resumed ("r") or negotiated in full ("."): the handshakes each tool made, counted by
    # the server. (e)'s logs the first request of each connection: the connections that carried
    # requests. /nginx_status (stub_status) counts the connections every tool opened.
    conf = f"""worker_processes 1; daemon off; master_process off;
error_log {d}/logs/error.log warn; pid {d}/nginx.pid;
events {{ worker_connections 20000; }}
http {{
  access_log off; keepalive_requests 10000000;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  log_format handshake '$connection $ssl_session_reused $ssl_protocol $status';
  log_format connection '$connection';
  map $connection_requests $first_request {{ 1 1; default 0; }}
  server {{ listen 127.0.0.1:{HTTP} backlog=4096; location = /nginx_status {{ stub_status; }}
           location / {{ return 200 "ok\\n"; }} }}
  server {{ listen 127.0.0.1:{HTTPS} ssl backlog=4096; {tls} location / {{ return 200 "ok\\n"; }} }}
  server {{ listen 127.0.0.1:{MTLS} ssl backlog=4096; {tls}
           ssl_verify_client on; ssl_client_certificate {d}/ca.pem; location / {{ return 200 "ok\\n"; }} }}
  server {{ listen 127.0.0.1:{H2} ssl http2 backlog=4096; {tls}
           access_log {d}/logs/h2-connections.log connection if=$first_request;
           location / {{ return 200 "ok\\n"; }} }}
  server {{ listen 127.0.0.1:{NEWCONN} ssl backlog=4096; {tls}
           ssl_session_cache shared:bench:10m; ssl_session_timeout 10m;
           access_log {d}/logs/handshakes.log handshake; location / {{ return 200 "ok\\n"; }} }}
}}
"""
    with open(f"{d}/nginx.conf", "w") as f:
        f.write(conf)
    NGINX["handshake_log"] = f"{d}/logs/handshakes.log"
    NGINX["connection_log"] = f"{d}/logs/h2-connections.log"
    p = subprocess.Popen(["taskset", "-c", NGINX_CORE, "nginx", "-p", d, "-c", f"{d}/nginx.conf", "-e",
                          f"{d}/logs/error.log"])
    for _ in range(100):
        if p.poll() is not None:
            raise SystemExit(f"nginx exited: {open(f'{d}/logs/error.log').read()}")
        if all(port_taken(port) for port in PORTS):
            return p
        time.sleep(0.05)
    p.kill()
    raise SystemExit(f"nginx did not listen on all {len(PORTS)} ports")


# The nginx under test, and its share of its core during the last timed run: when it is near
# 100 %, throughput is the server's limit, not the generator's.
NGINX = {"pid": None, "last_share": None, "handshake_log": None, "connection_log": None}
# The last timed run's voluntary context switches: how often the generator went to sleep and
# was woken, which on the benchmark VM costs more CPU than a loopback request does (measured
# by wake_cost); the connections nginx accepted during it ("used": (e)'s that carried
# requests); and (f)'s handshakes as nginx logged them.
GEN = {"wakes": None, "conns": None, "used": None, "handshakes": None}


def process_cpu(pid):
    """User + system seconds of a process, from /proc."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def accepted():
    """Connections nginx has accepted so far, on all ports (stub_status). Asking opens one."""
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{HTTP}/nginx_status", timeout=5) as r:
        return int(r.read().decode().splitlines()[2].split()[0])


def handshakes_since(offset):
    """Parses (f)'s access log from byte offset: one line per request, on a connection of its
    own when the client does not keep it alive: connection, "r" (resumed) or "." (full),
    TLS version, status."""
    full, resumed, served, conns, protocols = 0, 0, 0, set(), {}
    with open(NGINX["handshake_log"], "rb") as f:
        f.seek(offset)
        for line in f.read().decode(errors="replace").splitlines():
            parts = line.split()
            if len(parts) < 4:
                continue
            conn, reused, proto, status = parts[:4]
            if conn not in conns:  # a connection's first request carries its handshake
                conns.add(conn)
                if reused == "r":
                    resumed += 1
                else:
                    full += 1
                protocols[proto] = protocols.get(proto, 0) + 1
            served += status == "200"
    return dict(full=full, resumed=resumed, served=served, protocols=protocols)


def timed(cmd, stdout_path, env=None, stderr_follower=None):
    """Runs cmd on the generator core under GNU time; returns (cpu_seconds, peak_rss_kib).
    CPU is the kernel's rusage of the waited GNU time process, which takes in the generator's
    (wait4: microseconds, where GNU time prints 10 ms, 2 % of a 10 s run at 5,000 req/s); peak
    RSS and wake-ups are GNU time's, the generator's own (the rusage's maxrss would be this
    script's, copied by the fork). Also notes nginx's share of its core, the connections nginx
    accepted and, for (f), the handshakes it logged, during the run."""
    NGINX["last_share"] = None
    GEN.update(wakes=None, conns=None, used=None, handshakes=None)
    tf = tempfile.NamedTemporaryFile(delete=False)
    log, conn_log = NGINX["handshake_log"], NGINX["connection_log"]
    log0 = os.path.getsize(log) if log and os.path.exists(log) else 0
    conn_log0 = os.path.getsize(conn_log) if conn_log and os.path.exists(conn_log) else 0
    accepts0 = accepted()
    server0, wall0 = process_cpu(NGINX["pid"]), time.monotonic()
    with open(stdout_path, "w") as out:
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M %w", "-o", tf.name, "taskset", "-c", GEN_CORE, *cmd],
                                stdout=out, stderr=subprocess.PIPE if stderr_follower else subprocess.DEVNULL,
                                env=env)
        follower = None
        if stderr_follower:
            follower = threading.Thread(target=stderr_follower, args=(proc.stderr,), daemon=True)
            follower.start()
        _, _, usage = os.wait4(proc.pid, 0)
        if follower:
            follower.join(timeout=10)
        proc.returncode = 0  # reaped by wait4; keeps Popen from waiting again
    NGINX["last_share"] = (process_cpu(NGINX["pid"]) - server0) / (time.monotonic() - wall0)
    GEN["conns"] = accepted() - accepts0 - 1  # less the first probe's own connection
    if log and os.path.exists(log):
        GEN["handshakes"] = handshakes_since(log0)
    if conn_log and os.path.exists(conn_log):
        with open(conn_log, "rb") as f:
            f.seek(conn_log0)
            GEN["used"] = f.read().count(b"\n")
    m, w = open(tf.name).read().split()[-2:]
    GEN["wakes"] = int(w)
    os.unlink(tf.name)
    return usage.ru_utime + usage.ru_stime, int(m)


def wake_cost():
    """CPU µs that one timer sleep and wake-up costs on the generator core: 2,000 sleeps of
    1 ms in a Python loop (the interpreter adds well under a microsecond to each)."""
    probe = ("import resource, time\n"
             "r0 = resource.getrusage(resource.RUSAGE_SELF)\n"
             "for _ in range(2000): time.sleep(0.001)\n"
             "r1 = resource.getrusage(resource.RUSAGE_SELF)\n"
             "print((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / 2000 * 1e6)\n")
    return float(sh(["taskset", "-c", GEN_CORE, sys.executable, "-c", probe]).stdout)


def tls_flags(scenario, url, certs):
    """--cacert / --cert / --key, spelled alike by headroom and oha."""
    flags = ["--cacert", f"{certs}/ca.pem"] if url.startswith("https") else []
    if scenario.startswith("d"):
        flags += ["--cert", f"{certs}/client.pem", "--key", f"{certs}/client.key"]
    return flags


def headroom_load(scenario):
    """What headroom is asked to do in each row."""
    if scenario.startswith("b"):
        return ["--http1", "-c", str(CONNS)]
    if scenario.startswith("e"):
        return ["--http2", "--concurrency", str(H2_CONNS * H2_STREAMS), "--max-streams", str(H2_STREAMS),
                "--max-connections", str(H2_CONNS)]
    if scenario.startswith("f"):
        return ["--http1", "--no-keepalive", "--rate", str(NEWCONN_RATE)]
    return ["--http1", "--rate", str(RATE)]


def run_headroom(scenario, url, certs, secs=SECS, binary=None, name="headroom", extra=(), stderr_follower=None):
    out = f"{OUT}/{name}-{scenario}.json"
    run_dir = f"{OUT}/runs/{name}-{scenario}"
    subprocess.run(["rm", "-rf", run_dir])
    cmd = [binary or HEADROOM, "attack", url, "-d", f"{secs}s", "-q", "--format", "json", "--out", run_dir]
    cmd += headroom_load(scenario) + list(extra) + tls_flags(scenario, url, certs)
    cpu, rss = timed(cmd, out, stderr_follower=stderr_follower)
    d = json.load(open(out))
    return dict(done=d["requests"]["total"], ok=d["status_codes"].get("200", 0), rate=d["generator"]["rate_held"],
                tput=d["requests"]["throughput"], p50=d["latency"]["p50_us"], p99=d["latency"]["p99_us"],
                cpu=cpu, rss=rss)


def run_oha(scenario, url, certs, name="oha"):
    if not os.path.exists(OHA):
        return dict(error="oha not installed")
    out = f"{OUT}/{name}-{scenario}.json"
    cmd = [OHA, "-z", f"{SECS}s", "--no-tui", "--output-format", "json", url]
    if scenario == "e":
        # -c connections, -p streams in flight on each: 10 x 10 like the others.
        cmd += ["--http2", "-c", str(H2_CONNS), "-p", str(H2_STREAMS)]
    elif scenario == "f":
        cmd += ["-c", str(CONNS), "--disable-keepalive", "-q", str(NEWCONN_RATE), "--latency-correction"]
    elif scenario.startswith("b"):
        cmd += ["-c", str(CONNS)]
    else:
        cmd += ["-c", str(CONNS), "-q", str(RATE), "--latency-correction"]
    cmd += tls_flags(scenario, url, certs)
    cpu, rss = timed(cmd, out)
    d = json.load(open(out))
    codes = d.get("statusCodeDistribution", {})
    done = sum(codes.values()) + sum(d.get("errorDistribution", {}).values())
    s = d["summary"]
    lat = d.get("latencyPercentiles") or {}
    return dict(done=done, ok=codes.get("200", 0), rate=s["requestsPerSec"], tput=s["requestsPerSec"],
                p50=(lat.get("p50") or 0) * 1e6, p99=(lat.get("p99") or 0) * 1e6, cpu=cpu, rss=rss)


def run_vegeta(scenario, url, certs, name="vegeta"):
    if scenario == "e":
        return None  # vegeta cannot set streams per connection
    if not os.path.exists(VEGETA):
        return dict(error="vegeta not built")
    results = f"{OUT}/{name}-{scenario}.bin"
    attack = [VEGETA, "attack", f"-duration={SECS}s", "-max-body=0", "-http2=false", f"-output={results}"]
    if scenario.startswith("b"):
        attack += ["-rate=0", f"-max-workers={CONNS}", f"-workers={CONNS}"]
    elif scenario == "f":
        attack += [f"-rate={NEWCONN_RATE}", f"-max-workers={CONNS}", "-keepalive=false"]
    else:
        # Uncapped, vegeta over HTTPS/1.1 on one core spirals into a handshake storm (new
        # workers, new connections, seconds of latency, ~1 GB RSS); 50 like oha's -c 50.
        attack += [f"-rate={RATE}", f"-max-workers={CONNS}"]
    if url.startswith("https"):
        attack += [f"-root-certs={certs}/ca.pem"]
    if scenario.startswith("d"):
        attack += [f"-cert={certs}/client.pem", f"-key={certs}/client.key"]
    targets = f"{OUT}/vegeta-targets.txt"
    with open(targets, "w") as f:
        f.write(f"GET {url}\n")
    cpu, rss = timed(attack + [f"-targets={targets}"], os.devnull)
    d = json.loads(sh([VEGETA, "report", "-type=json", results]).stdout)
    return dict(done=d["requests"], ok=d["status_codes"].get("200", 0), rate=d["rate"], tput=d["throughput"],
                p50=d["latencies"]["50th"] / 1e3, p99=d["latencies"]["99th"] / 1e3, cpu=cpu, rss=rss)


def run_wrk(scenario, url, certs, name="wrk"):
    if not scenario.startswith("b"):
        return None  # wrk has no fixed rate (wrk2 is not packaged), no client certificates, no HTTP/2
    out = f"{OUT}/{name}-{scenario}.txt"
    cpu, rss = timed(["wrk", "-t1", f"-c{CONNS}", f"-d{SECS}s", "--latency", url], out)
    text = open(out).read()

    def lat(label):
        m = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)", text, re.M)
        v, unit = float(m.group(1)), m.group(2)
        return v * {"us": 1, "ms": 1e3, "s": 1e6}[unit]
    done = int(re.search(r"(\d+) requests in", text).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    return dict(done=done, ok=done, rate=rps, tput=rps, p50=lat("50"), p99=lat("99"), cpu=cpu, rss=rss)


def run_h2load(scenario, url, certs, name="h2load"):
    if scenario != "e":
        return None
    if not shutil.which("h2load"):
        return dict(error="h2load not installed (nghttp2-client)")
    out = f"{OUT}/{name}-{scenario}.txt"
    # One thread, -c connections with -m streams each, for -D seconds. h2load does not verify
    # the server's certificate, and reports no latency percentiles.
    cpu, rss = timed(["h2load", "-t", "1", "-c", str(H2_CONNS), "-m", str(H2_STREAMS), "-D", str(SECS), url], out)
    text = open(out).read()
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded", text)
    if not m:
        return dict(error="no h2load summary: " + text.strip().replace("\n", " ")[:60])
    done = int(m.group(3))
    ok = int(re.search(r"status codes: (\d+) 2xx", text).group(1))
    m = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", text)
    rps = float(m.group(3))
    return dict(done=done, ok=ok, rate=rps, tput=rps, p50=None, p99=None, cpu=cpu, rss=rss)


H2_FLOOR = os.path.join(ROOT, "target", "release", "examples", "h2_floor")


def run_h2_floor(scenario, url, certs, name="h2-floor"):
    """Row (e)'s load on tokio + rustls + the h2 crate with nothing of headroom's around them
    (bench/h2_floor.rs): the least headroom's HTTP/2 driver, built on them, can spend."""
    if scenario != "e":
        return None
    if not os.path.exists(H2_FLOOR):
        return dict(error="h2_floor not built (cargo build --release --example h2_floor)")
    out = f"{OUT}/{name}-{scenario}.json"
    cpu, rss = timed([H2_FLOOR, url, f"{certs}/ca.pem", str(H2_CONNS), str(H2_STREAMS), str(SECS)], out)
    d = json.load(open(out))
    rps = d["done"] / SECS
    return dict(done=d["done"], ok=d["ok"], rate=rps, tput=rps, p50=None, p99=None, cpu=cpu, rss=rss)


K6 = os.path.join(PEERS, "k6")
K6_SCRIPT = """
import http from 'k6/http';
const scenario = __ENV.SCENARIO;
const url = __ENV.URL;
const certs = __ENV.CERTS;
export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(99)'],
  // k6 cannot trust a CA file; it skips verification (the others verify against the test CA).
  insecureSkipTLSVerify: true,
  tlsAuth: scenario === 'd' ? [{ domains: ['127.0.0.1'], cert: open(certs + '/client.pem'), key: open(certs + '/client.key') }] : [],
  scenarios: {
    load: scenario === 'b'
      ? { executor: 'constant-vus', vus: %(conns)d, duration: '%(secs)ds' }
      : { executor: 'constant-arrival-rate', rate: %(rate)d, timeUnit: '1s', duration: '%(secs)ds',
          preAllocatedVUs: %(conns)d, maxVUs: %(conns)d },
  },
};
export default function () { http.get(url); }
"""

LOCUSTFILE = """
from locust import constant_throughput, task
from locust.contrib.fasthttp import FastHttpUser
import os

class Hit(FastHttpUser):
    # 50 users at 100 req/s each make the asked 5,000 req/s; closed model: no wait.
    wait_time = constant_throughput(100) if os.environ["SCENARIO"] != "b" else (lambda self: 0)

    @task
    def get(self):
        self.client.get("/")
"""


def run_k6(scenario, url, certs, name="k6"):
    if scenario in ("e", "f"):
        return None  # k6 sets neither streams per connection nor, here, one connection per request
    if not os.path.exists(K6):
        return dict(error="k6 not built")
    script = f"{OUT}/k6-script.js"
    with open(script, "w") as f:
        f.write(K6_SCRIPT % dict(conns=CONNS, secs=SECS, rate=RATE))
    summary = f"{OUT}/{name}-{scenario}.json"
    env = dict(os.environ, SCENARIO=scenario, URL=url, CERTS=certs, K6_NO_USAGE_REPORT="true")
    cpu, rss = timed([K6, "run", "--quiet", "--no-color", f"--summary-export={summary}", script], os.devnull, env)
    d = json.load(open(summary))["metrics"]
    reqs = d["http_reqs"]
    dur = d["http_req_duration"]
    failed = d.get("http_req_failed", {}).get("passes", 0)
    attack_rate = reqs["rate"]
    return dict(done=reqs["count"], ok=reqs["count"] - failed, rate=attack_rate, tput=attack_rate,
                p50=dur["med"] * 1e3, p99=dur["p(99)"] * 1e3, cpu=cpu, rss=rss)


def run_locust(scenario, url, certs, name="locust"):
    if scenario not in ("a", "b"):
        return None  # plain HTTP only here: its fast client's TLS options differ from the others'
    if not shutil.which("locust"):
        return dict(error="locust not installed")
    locustfile = f"{OUT}/locustfile.py"
    with open(locustfile, "w") as f:
        f.write(LOCUSTFILE)
    prefix = f"{OUT}/{name}-{scenario}"
    env = dict(os.environ, SCENARIO=scenario)
    cpu, rss = timed(["locust", "-f", locustfile, "--headless", "-u", str(CONNS), "-r", str(CONNS), "-t", f"{SECS}s",
                      "--host", url.rstrip("/"), "--csv", prefix, "--only-summary", "--loglevel", "ERROR"],
                     os.devnull, env)
    import csv
    row = next(r for r in csv.DictReader(open(f"{prefix}_stats.csv")) if r["Name"] == "Aggregated")
    done = int(row["Request Count"])
    rps = float(row["Requests/s"])
    return dict(done=done, ok=done - int(row["Failure Count"]), rate=rps, tput=rps,
                p50=float(row["50%"]) * 1e3, p99=float(row["99%"]) * 1e3, cpu=cpu, rss=rss)


SCENARIOS = [
    ("a", f"(a) {RATE:,} req/s, HTTP/1.1 keep-alive", f"http://127.0.0.1:{HTTP}/"),
    ("b", f"(b) {CONNS} connections, full speed", f"http://127.0.0.1:{HTTP}/"),
    ("c", f"(c) {RATE:,} req/s over HTTPS", f"https://127.0.0.1:{HTTPS}/"),
    ("d", f"(d) {RATE:,} req/s over HTTPS with a client certificate", f"https://127.0.0.1:{MTLS}/"),
    ("e", f"(e) HTTP/2, {H2_CONNS} connections x {H2_STREAMS} streams, full speed", f"https://127.0.0.1:{H2}/"),
    ("f", f"(f) {NEWCONN_RATE:,} req/s over HTTPS, a new connection per request", f"https://127.0.0.1:{NEWCONN}/"),
]
PEER_TOOLS = [("oha", run_oha), ("vegeta", run_vegeta), ("wrk", run_wrk), ("h2load", run_h2load), ("h2-floor", run_h2_floor),
              ("k6", run_k6), ("locust", run_locust)]
# In (f) headroom runs twice, as it comes (it resumes TLS sessions) and with
# --no-session-resumption (every handshake full), so that each kind of handshake has a
# headroom row to hold against the peers that do the same kind.
FULL_HANDSHAKES = "-full"


def tools_for(key):
    """(name, runner) for each tool in a row, in the order they run within a round: each
    headroom variant, its baseline ('headroom-before…') right after it, then the peers."""
    variants = [("", [])]
    if key == "f":
        variants.append((FULL_HANDSHAKES, ["--no-session-resumption"]))
    tools = []
    for suffix, extra in variants:
        for name, binary in [("headroom", HEADROOM)] + ([("headroom-before", BASELINE)] if BASELINE else []):
            name += suffix

            def fn(scenario, url, certs, name=name, binary=binary, extra=extra):
                return run_headroom(scenario, url, certs, binary=binary, name=name, extra=extra)
            tools.append((name, fn))
    return tools + PEER_TOOLS


def is_headroom(name):
    return name.startswith("headroom")


def run_headroom_scenario(certs, secs=SECS):
    """A scenario whose one request fills its path and JSON body from a CSV feeder."""
    feeder = f"{OUT}/feeder.csv"
    if not os.path.exists(feeder):
        with open(feeder, "w") as f:
            f.write("key,value\n")
            for i in range(100_000):
                f.write(f"user-{i:06d},{'v' * 32}{i}\n")
    scenario = f"{OUT}/scenario-templated.yaml"
    with open(scenario, "w") as f:
        f.write(f"""target: {{url: "http://127.0.0.1:{HTTP}", http: http1}}
data: {{rows: {{csv: {feeder}}}}}
requests:
  - name: put
    method: POST
    path: "/kv/{{{{ key }}}}?v=1"
    json: {{value: "{{{{ value }}}}", n: "{{{{ seq }}}}"}}
    data: rows
load: {{rate: {RATE}, duration: {secs}s}}
""")
    out = f"{OUT}/headroom-templated.json"
    run_dir = f"{OUT}/runs/headroom-templated"
    subprocess.run(["rm", "-rf", run_dir])
    cpu, rss = timed([HEADROOM, "run", scenario, "-q", "--format", "json", "--out", run_dir], out)
    d = json.load(open(out))
    return dict(done=d["requests"]["total"], ok=d["status_codes"].get("200", 0), rate=d["generator"]["rate_held"],
                tput=d["requests"]["throughput"], p50=d["latency"]["p50_us"], p99=d["latency"]["p99_us"],
                cpu=cpu, rss=rss)


def dataset_load():
    """Time and memory to load 1,000,000 rows: a 256-byte-value CSV, and a generated set."""
    big = f"{OUT}/million.csv"
    if not os.path.exists(big):
        with open(big, "w") as f:
            f.write("key,value\n")
            pad = "v" * 256
            for i in range(1_000_000):
                f.write(f"key-{i:07d},{pad}\n")
    rows = []
    for name, data in (("CSV file, 1,000,000 rows × 256 B", f"{{csv: {big}}}"),
                       ("generated, 1,000,000 keys × 5 KiB", "{generate: {keys: 1000000, value_bytes: 5120}}")):
        scenario = f"{OUT}/dataset.yaml"
        with open(scenario, "w") as f:
            f.write(f"""target: {{url: "http://127.0.0.1:{HTTP}"}}
data: {{d: {data}}}
requests: [{{name: get, path: "/kv/{{{{ key }}}}", data: d}}]
load: {{rate: 1, duration: 1s}}
""")
        tf = tempfile.NamedTemporaryFile(delete=False)
        t0 = time.monotonic()
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf.name, HEADROOM, "run", scenario, "--check"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        secs = time.monotonic() - t0
        rss = int(open(tf.name).read().split()[-1])
        os.unlink(tf.name)
        rows.append((name, secs, rss))
    return rows, os.path.getsize(big)


def per_request(r):
    return r["cpu"] * 1e6 / r["done"] if r.get("done") else float("inf")


def median_run(rs):
    """The run with the median CPU per request, carrying the range over all rounds."""
    ok = [r for r in rs if "error" not in r]
    if not ok:
        return rs[0]
    ok.sort(key=per_request)
    med = dict(ok[len(ok) // 2])
    med["cpu_range"] = (per_request(ok[0]), per_request(ok[-1]))
    med["rounds"] = len(ok)
    return med


def shown_path(binary):
    """The binary as the results name it: relative to the repository when inside it, else its
    file name alone, so no build host's directories end up in a committed file."""
    path = os.path.abspath(binary)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if path.startswith(repo + os.sep):
        return os.path.relpath(path, repo)
    return os.path.basename(path)


def version(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
        return (r.stdout + r.stderr).strip().splitlines()[0]
    except OSError:
        return "not found"


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((l.split(":", 1)[1].strip() for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
    lines = [
        f"- CPU: {cpu}, {os.cpu_count()} cores; memory {mem}",
        f"- Kernel: {platform.release()}",
        f"- nginx: {version(['nginx', '-v'])}, 1 worker pinned to core {NGINX_CORE}; generators pinned to core {GEN_CORE}",
        f"- headroom: {version([HEADROOM, '--version'])} (`{shown_path(HEADROOM)}`)",
    ]
    if BASELINE:
        lines.append(f"- headroom-before (baseline): {version([BASELINE, '--version'])} (`{shown_path(BASELINE)}`)")
    lines.append(f"- oha: {version([OHA, '--version'])}; vegeta: v12.12.0; wrk: {version(['wrk', '-v'])}; "
                 f"h2load: {version(['h2load', '--version'])}; k6: {version([K6, 'version'])}; "
                 f"locust: {version(['locust', '--version'])}")
    return lines


def fmt_us(v):
    if v is None:
        return "n/a"
    return f"{v / 1000:.2f} ms" if v >= 1000 else f"{v:.0f} µs"


def paired(num, den):
    """Per-round ratios num ÷ den of CPU per request and of throughput, over the rounds where
    both ran: the tools of a row run one after another within a round, so drift on a shared
    machine mostly cancels out of a pair."""
    pairs = [(x, y) for x, y in zip(num, den)
             if "error" not in x and "error" not in y and x.get("done") and y.get("done")]
    cpu = [per_request(x) / per_request(y) for x, y in pairs]
    tput = [x["tput"] / y["tput"] for x, y in pairs if y["tput"]]
    return cpu, tput


def paired_ratios(key, title, runs):
    out = []
    heads = [n for n in runs if is_headroom(n) and not n.startswith("headroom-before")]
    peers = [n for n in runs if not is_headroom(n)]
    for h in heads:
        before = h.replace("headroom", "headroom-before", 1)
        if before in runs:
            cpu, tput = paired(runs[h], runs[before])
            if cpu:
                out.append(dict(key=key, title=title, num=h, den=before, cpu=cpu, tput=tput, baseline=True))
        for peer in peers:
            cpu, tput = paired(runs[h], runs[peer])
            if cpu:
                out.append(dict(key=key, title=title, num=h, den=peer, cpu=cpu,
                                tput=tput if key in ("b", "e") else None, baseline=False))
    return out


def handshake_kind(r):
    """"full", "resumed" or "mixed", from the handshakes nginx logged during the run."""
    h = r.get("handshakes") or {}
    total = h.get("full", 0) + h.get("resumed", 0)
    if not total:
        return "none"
    share = h["resumed"] / total
    return "resumed" if share >= 0.9 else "full" if share <= 0.1 else f"mixed ({share:.0%} resumed)"


def success(r):
    return r["ok"] / r["done"] if r.get("done") else 0.0


def main():
    for binary in [HEADROOM] + ([BASELINE] if BASELINE else []):
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"{binary} is not an executable: build it (cargo build --release) or name the "
                             "binary with --headroom / HEADROOM_BIN (--baseline / HEADROOM_BASELINE)")
    alone = ARGS.raw_overhead or ARGS.push_overhead or ARGS.live_overhead
    scenarios = [s for s in SCENARIOS if (not ARGS.only or s[0] in ARGS.only) and not alone]
    os.makedirs(f"{OUT}/runs", exist_ok=True)
    certs = tempfile.mkdtemp(prefix="headroom-bench-")
    make_certs(certs)
    nginx = start_nginx(certs)
    NGINX["pid"] = nginx.pid
    rows, ratios, extras, raw, push, live = [], [], None, None, None, None
    wake_us = [wake_cost()]
    try:
        for key, title, url in scenarios:
            # Rounds interleave the tools, so drift on a shared machine hits all of them alike.
            runs = {}
            for _ in range(ROUNDS):
                for name, fn in tools_for(key):
                    try:
                        r = fn(key, url, certs)
                    except Exception as e:  # a peer that fails is reported, not fatal
                        r = dict(error=(str(e).splitlines() or [type(e).__name__])[0][:80])
                    if r is None:
                        continue
                    if "error" not in r:
                        r.update(server=NGINX["last_share"], wakes=GEN["wakes"], conns=GEN["conns"],
                                 used=GEN["used"] if key == "e" else None,
                                 handshakes=GEN["handshakes"] if key == "f" else None)
                    runs.setdefault(name, []).append(r)
                    time.sleep(1)
            rows.append((key, title, {name: median_run(rs) for name, rs in runs.items()}))
            # Ratios are paired by round, then the median taken.
            ratios += paired_ratios(key, title, runs)
        if not ARGS.only and not ARGS.push_overhead and not ARGS.live_overhead:
            raw = raw_overhead(certs)
        if not ARGS.only and not ARGS.raw_overhead and not ARGS.live_overhead:
            push = push_overhead(certs)
        if not ARGS.only and not ARGS.raw_overhead and not ARGS.push_overhead:
            live = live_overhead(certs)
        if not ARGS.only and not alone:
            # The templated scenario against (a), both headroom, interleaved: what templates
            # and a feeder cost.
            templated = {"plain attack (a)": [], "templated scenario": []}
            for _ in range(ROUNDS):
                for name, fn in (("plain attack (a)", lambda: run_headroom("a", SCENARIOS[0][2], certs)),
                                 ("templated scenario", lambda: run_headroom_scenario(certs))):
                    r = fn()
                    r["server"] = NGINX["last_share"]
                    templated[name].append(r)
                    time.sleep(1)
            pairs = zip(templated["templated scenario"], templated["plain attack (a)"])
            templated_ratio = [per_request(t) / per_request(p) for t, p in pairs]
            templated = {name: median_run(rs) for name, rs in templated.items()}
            templated["ratio"] = templated_ratio
            datasets = dataset_load()
            long_rss = {}
            for secs in (10, 60) if not QUICK else (3, 6):
                long_rss[secs] = run_headroom(f"a-{secs}s", SCENARIOS[0][2], certs, secs)["rss"]
            extras = (long_rss, templated, datasets)
        wake_us.append(wake_cost())
    finally:
        nginx.send_signal(signal.SIGTERM)
        nginx.wait()
    write_results(rows, ratios, extras, wake_us, raw, push, live)


PROMETHEUS_PORT = 19090 + _OFFSET


def start_prometheus():
    """A real Prometheus on loopback (remote-write receiver, native histograms), pinned to the
    server's core beside nginx so it takes nothing from the generator's; returns the process."""
    d = tempfile.mkdtemp(prefix="headroom-bench-prom-")
    with open(f"{d}/prometheus.yml", "w") as f:
        f.write("global:\n  scrape_interval: 1m\n")
    proc = subprocess.Popen(["taskset", "-c", NGINX_CORE, "prometheus", f"--config.file={d}/prometheus.yml",
                             f"--storage.tsdb.path={d}/data", f"--web.listen-address=127.0.0.1:{PROMETHEUS_PORT}",
                             "--web.enable-remote-write-receiver", "--enable-feature=native-histograms"],
                            stdout=subprocess.DEVNULL, stderr=open(f"{d}/prometheus.log", "w"))
    import urllib.request
    for _ in range(300):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{PROMETHEUS_PORT}/-/ready", timeout=1).status == 200:
                return proc
        except Exception:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit(f"prometheus did not get ready on port {PROMETHEUS_PORT} (log: {d}/prometheus.log)")


INFLUXDB_PORT = 18086 + _OFFSET


def start_influxdb():
    """A real InfluxDB 1.x on loopback with a database `bench`, pinned to the server's core
    beside nginx like Prometheus; returns the process."""
    import urllib.request
    d = tempfile.mkdtemp(prefix="headroom-bench-influx-")
    with open(f"{d}/influxdb.conf", "w") as f:
        f.write(f'reporting-disabled = true\nbind-address = "127.0.0.1:{INFLUXDB_PORT + 2}"\n'
                f'[meta]\n  dir = "{d}/meta"\n[data]\n  dir = "{d}/data"\n  wal-dir = "{d}/wal"\n'
                f'  query-log-enabled = false\n[monitor]\n  store-enabled = false\n'
                f'[http]\n  bind-address = "127.0.0.1:{INFLUXDB_PORT}"\n  log-enabled = false\n')
    proc = subprocess.Popen(["taskset", "-c", NGINX_CORE, "influxd", "-config", f"{d}/influxdb.conf"],
                            stdout=subprocess.DEVNULL, stderr=open(f"{d}/influxd.log", "w"))
    for _ in range(300):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{INFLUXDB_PORT}/ping", timeout=1).status == 204:
                req = urllib.request.Request(f"http://127.0.0.1:{INFLUXDB_PORT}/query?q=CREATE+DATABASE+bench",
                                             method="POST")
                urllib.request.urlopen(req, timeout=5).read()
                return proc
        except Exception:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit(f"influxd did not get ready on port {INFLUXDB_PORT} (log: {d}/influxd.log)")


PUSH_PLAIN = "plain attack (a)"
PUSH_VARIANTS = (("with --push prometheus", "headroom-push",
                  f"prometheus=http://127.0.0.1:{PROMETHEUS_PORT}/api/v1/write"),
                 ("with --push influxdb", "headroom-influx",
                  f"influxdb=http://127.0.0.1:{INFLUXDB_PORT}/write?db=bench"))


def push_overhead(certs):
    """Row (a) without --push, with --push to a real Prometheus and with --push to a real
    InfluxDB, interleaved round by round: what writing each second live costs the generator.
    Returns the median runs and the ratios to the plain run, paired by round."""
    url = SCENARIOS[0][2]
    backends = [start_prometheus(), start_influxdb()]
    runs = {PUSH_PLAIN: [], **{name: [] for name, _, _ in PUSH_VARIANTS}}
    try:
        for _ in range(OVERHEAD_ROUNDS):
            for name, tool, extra in ((PUSH_PLAIN, "headroom", ()),
                                      *((n, t, ("--push", w)) for n, t, w in PUSH_VARIANTS)):
                r = run_headroom("a", url, certs, name=tool, extra=extra)
                r["server"] = NGINX["last_share"]
                outputs = f"{OUT}/runs/{tool}-a/outputs.json"
                if extra and os.path.exists(outputs):
                    o = json.load(open(outputs))[0]
                    r["push"] = (o["sent"], sum(o.get("dropped", {}).values()))
                runs[name].append(r)
                time.sleep(1)
    finally:
        for b in backends:
            b.terminate()
            b.wait()
    ratios = {name: [per_request(w) / per_request(p) for w, p in zip(runs[name], runs[PUSH_PLAIN])]
              for name, _, _ in PUSH_VARIANTS}
    return {name: median_run(rs) for name, rs in runs.items()}, ratios


def push_section(push):
    medians, ratios = push
    lines = [f"## Live outputs (`--push`) at {RATE:,} req/s", "",
             "Row (a) as above, run without `--push`, with `--push prometheus=…` to a real Prometheus (remote",
             "write, native histograms) and with `--push influxdb=…` to a real InfluxDB 1.x (line protocol)",
             f"on loopback (both pinned to nginx's core) in each of {OVERHEAD_ROUNDS} rounds.", "",
             "| run | completed | rate held (req/s) | p50 | p99 | CPU µs/req | peak RSS | samples or points sent (dropped) |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in medians.items():
        if "error" in r:
            lines.append(f"| {name} | failed: {r['error']} |" + " |" * 6)
            continue
        lo, hi = r["cpu_range"]
        sent = f"{r['push'][0]:,} ({r['push'][1]:,})" if r.get("push") else "–"
        lines.append(f"| {name} | {r['done']:,} | {r['rate']:,.1f} | {fmt_us(r['p50'])} | {fmt_us(r['p99'])} | "
                     f"{per_request(r):.2f} ({lo:.2f}–{hi:.2f}) | {r['rss'] / 1024:.1f} MiB | {sent} |")
    lines.append("")
    for name, ratio in ratios.items():
        if ratio:
            m = statistics.median(ratio)
            lines.append(f"- {name} ÷ plain CPU per request, paired by round: **{m:.3f}** "
                         f"({min(ratio):.3f}–{max(ratio):.3f}); goal ≤ 1.05 → **{'met' if m <= 1.05 else 'NOT met'}**.")
    return lines + [""]


def raw_overhead(certs):
    """Row (a) with and without --raw, interleaved round by round against the same nginx:
    what keeping every request's record costs. Returns the median runs and the paired ratios."""
    url = SCENARIOS[0][2]
    runs = {"plain attack (a)": [], "with --raw": []}
    for _ in range(OVERHEAD_ROUNDS):
        for name, tool, extra in (("plain attack (a)", "headroom", ()), ("with --raw", "headroom-raw", ("--raw",))):
            r = run_headroom("a", url, certs, name=tool, extra=extra)
            r["server"] = NGINX["last_share"]
            end = f"{OUT}/runs/{tool}-a/raw.json"
            if extra and os.path.exists(end):
                r["raw"] = json.load(open(end))
                r["raw_bytes"] = os.path.getsize(f"{OUT}/runs/{tool}-a/raw.bin")
            runs[name].append(r)
            time.sleep(1)
    ratio = [per_request(w) / per_request(p) for w, p in zip(runs["with --raw"], runs["plain attack (a)"])]
    return {name: median_run(rs) for name, rs in runs.items()}, ratio


def follow_live_page(found):
    """Reads headroom's stderr; at the live page's address (its first line), opens the page and
    follows its events as a browser's page does, counting the frames, until the run ends it."""
    def viewer(url):
        u = urllib.parse.urlsplit(url)
        urllib.request.urlopen(url, timeout=10).read()
        s = socket.create_connection((u.hostname, u.port), timeout=30)
        s.sendall(f"GET /events?{u.query} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        frames, tail = 0, b""
        while True:
            b = s.recv(1 << 16)
            if not b:
                break
            frames += (tail + b).count(b"event: frame")
            tail = b[-16:]
            found["frames"] = frames
        s.close()

    def follow(stream):
        for line in iter(stream.readline, b""):
            text = line.decode(errors="replace").strip()
            if text.startswith("headroom: live page at ") and "url" not in found:
                found["url"] = text.split(" at ", 1)[1]
                threading.Thread(target=viewer, args=(found["url"],), daemon=True).start()
    return follow


def live_overhead(certs):
    """Row (a) with and without --live, interleaved round by round against the same nginx, a
    page following the run's events in the second: what serving the live page costs the
    generator. Returns the median runs, the paired ratios and the frames each page was sent."""
    url = SCENARIOS[0][2]
    runs = {"plain attack (a)": [], "with --live, a page following": []}
    frames = []
    for _ in range(OVERHEAD_ROUNDS):
        for name, tool, extra in (("plain attack (a)", "headroom", ()),
                                  ("with --live, a page following", "headroom-live", ("--live",))):
            found = {}
            r = run_headroom("a", url, certs, name=tool, extra=extra,
                             stderr_follower=follow_live_page(found) if extra else None)
            r["server"] = NGINX["last_share"]
            if extra:
                frames.append(found.get("frames", 0))
            runs[name].append(r)
            time.sleep(1)
    ratio = [per_request(w) / per_request(p)
             for w, p in zip(runs["with --live, a page following"], runs["plain attack (a)"])]
    return {name: median_run(rs) for name, rs in runs.items()}, ratio, frames


def live_section(live):
    medians, ratio, frames = live
    lines = [f"## The live page (`--live`) at {RATE:,} req/s", "",
             f"Row (a) as above, run with and without `--live` in each of {OVERHEAD_ROUNDS} rounds (same nginx, same URL); "
             "with it, a page follows the run (the page fetched, then its events read as a browser's page reads "
             "them; the browser's own drawing is not the generator's CPU). CPU is the headroom process's, its "
             "live page's threads included.", "",
             "| run | completed | rate held (req/s) | p50 | p99 | CPU µs/req | peak RSS |",
             "|---|---|---|---|---|---|---|"]
    for name, r in medians.items():
        if "error" in r:
            lines.append(f"| {name} | failed: {r['error']} |" + " |" * 5)
            continue
        lo, hi = r["cpu_range"]
        lines.append(f"| {name} | {r['done']:,} | {r['rate']:,.1f} | {fmt_us(r['p50'])} | {fmt_us(r['p99'])} | "
                     f"{per_request(r):.2f} ({lo:.2f}–{hi:.2f}) | {r['rss'] / 1024:.1f} MiB |")
    if frames:
        lines += ["", f"Frames each page was sent: {min(frames)}–{max(frames)} (a frame a second)."]
    if ratio:
        m = statistics.median(ratio)
        lines += ["", f"With `--live` ÷ plain CPU per request, paired by round: **{m:.3f}** "
                      f"({min(ratio):.3f}–{max(ratio):.3f}); goal ≤ 1.05 → **{'met' if m <= 1.05 else 'NOT met'}**."]
    return lines + [""]


def raw_section(raw):
    medians, ratio = raw
    lines = [f"## Keeping every request's record (`--raw`) at {RATE:,} req/s", "",
             f"Row (a) as above, run with and without `--raw` in each of {OVERHEAD_ROUNDS} rounds (same nginx, same URL); the",
             "records go to the run directory's raw.bin as the run goes.", "",
             "| run | completed | rate held (req/s) | p50 | p99 | CPU µs/req | peak RSS | records kept (dropped) | raw.bin |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r in medians.items():
        if "error" in r:
            lines.append(f"| {name} | failed: {r['error']} |" + " |" * 7)
            continue
        lo, hi = r["cpu_range"]
        kept = f"{r['raw']['records']:,} ({r['raw']['dropped']:,})" if r.get("raw") else "–"
        size = f"{r['raw_bytes'] / 2**20:.1f} MiB" if r.get("raw_bytes") is not None else "–"
        lines.append(f"| {name} | {r['done']:,} | {r['rate']:,.1f} | {fmt_us(r['p50'])} | {fmt_us(r['p99'])} | "
                     f"{per_request(r):.2f} ({lo:.2f}–{hi:.2f}) | {r['rss'] / 1024:.1f} MiB | {kept} | {size} |")
    if ratio:
        m = statistics.median(ratio)
        lines += ["", f"With `--raw` ÷ plain CPU per request, paired by round: **{m:.3f}** "
                      f"({min(ratio):.3f}–{max(ratio):.3f}); goal ≤ 1.10 → **{'met' if m <= 1.10 else 'NOT met'}**."]
    return lines + [""]


def fmt_paired(values):
    if not values:
        return ""
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def goals(rows, ratios):
    """The goal lines for (e) and (f), from the paired ratios."""
    lines = []
    by_key = {key: results for key, _, results in rows}

    def ratio(key, num, den):
        return next((x for x in ratios if x["key"] == key and x["num"] == num and x["den"] == den), None)
    if "e" in by_key:
        x = ratio("e", "headroom", "h2load")
        if x is None:
            lines.append("- (e) headroom CPU per request ≤ 0.75 × h2load's: **not measured** (a run failed)")
        else:
            m = statistics.median(x["cpu"])
            opened = ", ".join(f"{n} {r['used'] if r.get('used') is not None else '?'}"
                               for n, r in by_key["e"].items() if "error" not in r)
            lines.append(f"- (e) headroom CPU per request ≤ 0.75 × h2load's: headroom ÷ h2load = **{m:.2f}** "
                         f"(paired by round) → **{'met' if m <= 0.75 else 'NOT met'}** (connections that "
                         f"carried requests, median round: {opened})")
            over_floor = ratio("e", "headroom", "h2-floor")
            floor, h2load = by_key["e"].get("h2-floor", {}), by_key["e"].get("h2load", {})
            if over_floor and "error" not in floor and h2load.get("done"):
                lines.append(f"  - the floor under it: tokio + rustls + the h2 crate alone (bench/h2_floor.rs) "
                             f"spend **{per_request(floor) / per_request(h2load):.2f}** × h2load's CPU per request "
                             f"(medians); headroom ÷ that floor = {statistics.median(over_floor['cpu']):.2f} "
                             f"(paired by round)")
    if "f" in by_key:
        results = by_key["f"]
        for name, r in results.items():
            if not is_headroom(name) or name.startswith("headroom-before") or "error" in r:
                continue
            kind = handshake_kind(r)
            same = [(per_request(p), peer) for peer, p in results.items()
                    if not is_headroom(peer) and "error" not in p and handshake_kind(p) == kind]
            head = f"- (f) {name} ({kind} handshakes) CPU per request ≤ 0.5 × the best peer's with {kind} handshakes: "
            if not same:
                lines.append(head + f"**no peer did {kind} handshakes**; headroom's success "
                             f"{success(r):.1%}")
                continue
            best = min(same)[1]
            x = ratio("f", name, best)
            m = statistics.median(x["cpu"]) if x else float("inf")
            ok = success(r) >= 0.99
            verdict = "met" if m <= 0.5 and ok else "NOT met"
            why = "" if ok else f" (headroom's success is {success(r):.1%}: no goal is met on failed requests)"
            lines.append(head + f"best is {best} ({per_request(results[best]):.1f} µs/req, success "
                         f"{success(results[best]):.1%}); {name} ÷ {best} = **{m:.2f}** → **{verdict}**{why}")
    return lines


def replace_section(section):
    """Puts `section` (lines from its `## ` heading) in place of the section of that heading in
    bench/RESULTS.md, or at its end: a --raw-overhead or --push-overhead run re-measures one
    section and leaves the rest of the full run's file as it was."""
    path = os.path.join(ROOT, "bench", "RESULTS.md")
    old = open(path).read().splitlines() if os.path.exists(path) else []
    heading = section[0].split(" at ")[0]
    start = next((i for i, l in enumerate(old) if l.startswith(heading)), None)
    if not old:
        old = ["# Benchmark results", "", "Only sections re-measured alone are here yet: run `bench/run.sh` for the rest."]
    if start is None:
        kept = old + [""]
        at = len(kept)
    else:
        end = next((i for i in range(start + 1, len(old)) if old[i].startswith("## ")), len(old))
        kept = old[:start] + old[end:]
        at = start
    flag = ("--push-overhead" if ARGS.push_overhead else
            "--live-overhead" if ARGS.live_overhead else "--raw-overhead")
    stamp = time.strftime("%Y-%m-%d", time.gmtime())
    quick = " **Quick mode (3 s, one round): for checking the script, not for quoting.**" if QUICK else ""
    section = [section[0], "", f"*Re-measured alone by `bench/run.sh {flag}` on {stamp}, after the rest of this "
               f"file, on this machine:*{quick}", "", *machine(), "", *section[2:]]
    text = "\n".join(kept[:at] + section + kept[at:]).rstrip("\n") + "\n"
    with open(path, "w") as f:
        f.write(text)
    print("\n".join(section))


def write_results(rows, ratios, extras, wake_us, raw=None, push=None, live=None):
    if ARGS.raw_overhead or ARGS.push_overhead or ARGS.live_overhead:
        replace_section(raw_section(raw) if ARGS.raw_overhead else
                        push_section(push) if ARGS.push_overhead else live_section(live))
        return
    lines = ["# Benchmark results", "",
             "Generated by `bench/run.sh` (do not edit by hand). Each generator ran alone against the same",
             f"nginx on loopback, one after another, in one run: {ROUNDS} round{'s' if ROUNDS > 1 else ''} "
             "per scenario with the tools",
             "interleaved, each row the tool's median round by CPU per request (the range over rounds in",
             "brackets). CPU is user + system time of the generator process (its rusage, under GNU time); µs/req divides",
             "it by the requests completed. Latency percentiles are as",
             "each tool reports them (oha with --latency-correction; wrk's are not corrected for",
             "coordinated omission). oha and vegeta get at most 50 connections in (a)–(d) and (f);",
             "uncapped, vegeta over HTTPS/1.1 spiralled into a handshake storm here (seconds of latency,",
             "~1 GB RSS). k6 gets 50 VUs and skips certificate verification (it cannot trust a CA",
             "file); Locust runs 50 FastHttpUsers, plain HTTP only. headroom opens connections as the",
             "rate needs them. \"connections\" is what nginx accepted during the run (its stub_status,",
             "less the probe's own). \"nginx's core\" is nginx's CPU time over the",
             "run's wall time: near 100 %, the throughput is nginx's limit, not the generator's."]
    if BASELINE:
        lines += ["", "`headroom-before` is a second headroom binary (the baseline, `--baseline`) run as one more",
                  "tool in every row, right after `headroom` in each round; its paired ratios are under",
                  "\"No regression\" below."]
    lines += ["", "## Machine", "", *machine(), ""]
    if QUICK:
        lines += ["**Quick mode (3 s runs): for checking the script, not for quoting.**", ""]
    if ARGS.raw_overhead:
        lines += ["**Only the `--raw` section was run (`--raw-overhead`).**", ""]
    if ARGS.push_overhead:
        lines += ["**Only the `--push` section was run (`--push-overhead`).**", ""]
    if ARGS.only:
        lines += [f"**Only rows {', '.join(ARGS.only)} were run (`--only`).**", ""]
    for key, title, results in rows:
        lines += [f"## {title}", ""]
        if key == "f":
            lines += ["| tool | completed | 200 OK | success | 200s nginx sent | handshakes/s | full | resumed | "
                      "kind | TLS | CPU µs/req | CPU µs/handshake | p50 | p99 | peak RSS | nginx's core |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        else:
            lines += ["| tool | completed | 200 OK | rate held (req/s) | throughput (req/s) | p50 | p99 | CPU µs/req | "
                      "wake-ups/req | connections | peak RSS | nginx's core |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for name, r in results.items():
            if "error" in r:
                lines.append(f"| {name} | failed: {r['error']} |" + " |" * (14 if key == "f" else 10))
                continue
            lo, hi = r["cpu_range"]
            spread = f" ({lo:.1f}–{hi:.1f})" if r["rounds"] > 1 else ""
            conns = f"{r['conns']:,}" if r.get("conns") is not None else "?"
            if r.get("used") is not None:
                conns += f" ({r['used']:,} with requests)"
            wakes = f"{r['wakes'] / r['done']:.2f}" if r.get("wakes") is not None and r["done"] else "?"
            if key == "f":
                h = r.get("handshakes") or dict(full=0, resumed=0, served=0, protocols={})
                n = h["full"] + h["resumed"]
                tls = ", ".join(sorted(h["protocols"])) or "–"
                per_hs = f"{r['cpu'] * 1e6 / n:.1f}" if n else "–"
                lines.append(f"| {name} | {r['done']:,} | {r['ok']:,} | {success(r):.1%} | {h['served']:,} | {n / SECS:,.1f} | "
                             f"{h['full']:,} | {h['resumed']:,} | {handshake_kind(r)} | {tls} | "
                             f"{per_request(r):.1f}{spread} | {per_hs} | {fmt_us(r['p50'])} | {fmt_us(r['p99'])} | "
                             f"{r['rss'] / 1024:.1f} MiB | {r['server']:.0%} |")
            else:
                lines.append(f"| {name} | {r['done']:,} | {r['ok']:,} | {r['rate']:,.1f} | {r['tput']:,.1f} | "
                             f"{fmt_us(r['p50'])} | {fmt_us(r['p99'])} | {per_request(r):.1f}{spread} | "
                             f"{wakes} | {conns} | {r['rss'] / 1024:.1f} MiB | {r['server']:.0%} |")
        lines.append("")
        if key == "d":
            lines += ["wrk cannot pace a fixed rate or present a client certificate; Locust was run on",
                      "plain HTTP only.", ""]
        if key == "e":
            lines += [f"Closed model over HTTP/2 (TLS, ALPN h2): {H2_CONNS} connections with {H2_STREAMS} streams "
                      f"in flight on each. headroom: `--http2 --concurrency {H2_CONNS * H2_STREAMS} "
                      f"--max-streams {H2_STREAMS} --max-connections {H2_CONNS}`; h2load: `-t 1 -c {H2_CONNS} "
                      f"-m {H2_STREAMS} -D {SECS}` (it does not verify the server's certificate and reports no "
                      f"latency percentiles); oha: `--http2 -c {H2_CONNS} -p {H2_STREAMS}`. \"connections\" "
                      "is what each tool opened, counted by nginx (in brackets, those that carried requests). vegeta, wrk, k6 and Locust cannot set "
                      "streams per connection and are not run here.", ""]
        if key == "f":
            lines += [f"Open model at {NEWCONN_RATE:,} req/s, every request on a new TLS connection: headroom "
                      f"`--http1 --no-keepalive --rate {NEWCONN_RATE}` as it comes (it resumes TLS sessions) and "
                      f"with `--no-session-resumption` (headroom{FULL_HANDSHAKES}); vegeta `-keepalive=false "
                      f"-rate={NEWCONN_RATE} -max-workers={CONNS}`; oha `--disable-keepalive -q {NEWCONN_RATE} "
                      f"-c {CONNS}`. \"success\" is the tool's own count of 200 responses over the requests it "
                      "completed or failed; \"200s nginx sent\" is the server's count of the same. The handshakes are counted by nginx: its access log for this port "
                      "carries each connection's `$ssl_session_reused` (\"r\" resumed, \".\" full) and TLS "
                      "version, and only a connection that carried a request is logged; handshakes/s is "
                      f"their count over the {SECS} s run. \"kind\" is full or resumed when at least 90 % "
                      "are; CPU µs/handshake divides the tool's CPU by them.", ""]
    lines += wakeup_section(rows, wake_us)
    if ratios:
        lines += ["## Ratios (headroom ÷ peer; below 1 is better for CPU, above 1 for throughput)", "",
                  "Each round's headroom run divided by the same round's peer run, then the median over the",
                  "rounds (the range in brackets).", "",
                  "| scenario | headroom | peer | CPU per request | throughput |", "|---|---|---|---|---|"]
        kinds = {(key, name): handshake_kind(r) for key, _, results in rows if key == "f"
                 for name, r in results.items() if "error" not in r}
        for x in ratios:
            if x["baseline"]:
                continue
            num, den = x["num"], x["den"]
            if (x["key"], num) in kinds:
                num += f" ({kinds[(x['key'], num)]})"
                den += f" ({kinds.get((x['key'], den), '?')})"
            lines.append(f"| {x['title']} | {num} | {den} | {fmt_paired(x['cpu'])} | {fmt_paired(x['tput'])} |")
        lines.append("")
    if BASELINE:
        lines += ["## No regression (headroom ÷ headroom-before)", "",
                  "The binary under test against the baseline binary, paired by round. CPU per request: below 1",
                  "is better; throughput: above 1 is better (in the open-model rows it is the rate asked for,",
                  "held or not).", "",
                  "| scenario | run | CPU per request | throughput |", "|---|---|---|---|"]
        for x in ratios:
            if x["baseline"]:
                lines.append(f"| {x['title']} | {x['num']} ÷ {x['den']} | {fmt_paired(x['cpu'])} | "
                             f"{fmt_paired(x['tput'])} |")
        lines.append("")
    goal_lines = goals(rows, ratios)
    if goal_lines:
        lines += ["## Goals", "", *goal_lines, ""]
    if raw:
        lines += raw_section(raw)
    if push:
        lines += push_section(push)
    if live:
        lines += live_section(live)
    if extras:
        lines += extras_section(*extras)
    text = "\n".join(lines).rstrip("\n") + "\n"
    with open(os.path.join(ROOT, "bench", "RESULTS.md"), "w") as f:
        f.write(text)
    print(text)


def wakeup_section(rows, wake_us):
    lo, hi = min(wake_us), max(wake_us)
    lines = ["## What a wake-up costs here", "",
             f"One timer sleep and wake-up cost **{lo:.1f}–{hi:.1f} µs** of CPU on the generator core "
             "(2,000 sleeps of 1 ms in a Python loop, measured before and after the scenarios). "
             "\"wake-ups/req\" above is each generator's voluntary context switches (all its threads) "
             "per completed request. headroom's pacer sleeps once per coalescing window (`--coalesce`, "
             "default 1 ms) whatever the rate."]
    h = next((results.get("headroom", {}) for key, _, results in rows if key == "a"), {})
    if h.get("done") and h.get("wakes") is not None:
        share = h["wakes"] / h["done"] * statistics.median(wake_us) / per_request(h)
        lines[-1] += (f" In (a) that is {h['wakes'] / h['done']:.2f} wake-ups per request: about "
                      f"{share:.0%} of its CPU per request goes to waking up.")
    return lines + [""]


def extras_section(long_rss, templated, datasets):
    lines = ["## 5,000 req/s of a templated scenario vs the plain attack", "",
             "A POST whose path and JSON body are filled from a 100,000-row CSV feeder on every send,",
             "against the same endpoint as (a); both runs are headroom, interleaved.", "",
             "| run | completed | rate held (req/s) | p50 | p99 | CPU µs/req | peak RSS |",
             "|---|---|---|---|---|---|---|"]
    ratio = templated.pop("ratio")
    for name, r in templated.items():
        lo, hi = r["cpu_range"]
        lines.append(f"| {name} | {r['done']:,} | {r['rate']:,.1f} | {fmt_us(r['p50'])} | {fmt_us(r['p99'])} | "
                     f"{per_request(r):.1f} ({lo:.1f}–{hi:.1f}) | {r['rss'] / 1024:.1f} MiB |")
    lines += ["", f"Templated ÷ plain CPU per request, paired by round: **{statistics.median(ratio):.2f}** "
                  f"({min(ratio):.2f}–{max(ratio):.2f})."]
    data_rows, csv_bytes = datasets
    lines += ["", "## Loading a data set of 1,000,000 rows", "",
              f"`headroom run --check` on a scenario whose data set has a million rows (the CSV file is "
              f"{csv_bytes / 2**20:.0f} MiB); time and peak RSS of the whole process.", "",
              "| data set | load time | peak RSS |", "|---|---|---|"]
    for name, secs, rss in data_rows:
        lines.append(f"| {name} | {secs:.2f} s | {rss / 1024:.0f} MiB |")
    lines += ["", "## Memory over run length", "",
              "| headroom run | peak RSS |", "|---|---|"]
    for secs, rss in long_rss.items():
        lines.append(f"| (a) for {secs} s | {rss / 1024:.1f} MiB |")
    return lines


if __name__ == "__main__":
    main()
