#!/usr/bin/env python3
"""Runs headroom and its peers side by side against one nginx and writes bench/RESULTS.md.

Every number here is measured in this run: CPU time (user + system) and peak RSS come from
GNU time around each generator process; rates and percentiles are what each tool reports.
"""
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out")
PEERS = os.path.join(OUT, "peers")
HEADROOM = os.path.join(ROOT, "target", "release", "headroom")
OHA = os.path.join(PEERS, "bin", "oha")
VEGETA = os.path.join(PEERS, "vegeta")
QUICK = "--quick" in sys.argv
SECS = 3 if QUICK else 10
ROUNDS = 1 if QUICK else 5
RATE = 5000
CONNS = 50
NGINX_CORE, GEN_CORE = "0", "1"
HTTP, HTTPS, MTLS = 18080, 18443, 18444


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
    taken = [p for p in (HTTP, HTTPS, MTLS) if port_taken(p)]
    if taken:
        raise SystemExit(f"ports {taken} are already in use on 127.0.0.1: stop whatever listens there first")
    os.makedirs(f"{d}/logs", exist_ok=True)
    tls = f"ssl_certificate {d}/server.pem; ssl_certificate_key {d}/server.key;"
    conf = f"""worker_processes 1; daemon off; master_process off;
error_log {d}/logs/error.log warn; pid {d}/nginx.pid;
events {{ worker_connections 20000; }}
http {{
  access_log off; keepalive_requests 10000000;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{ listen 127.0.0.1:{HTTP} backlog=4096; location / {{ return 200 "ok\\n"; }} }}
  server {{ listen 127.0.0.1:{HTTPS} ssl backlog=4096; {tls} location / {{ return 200 "ok\\n"; }} }}
  server {{ listen 127.0.0.1:{MTLS} ssl backlog=4096; {tls}
           ssl_verify_client on; ssl_client_certificate {d}/ca.pem; location / {{ return 200 "ok\\n"; }} }}
}}
"""
    with open(f"{d}/nginx.conf", "w") as f:
        f.write(conf)
    p = subprocess.Popen(["taskset", "-c", NGINX_CORE, "nginx", "-p", d, "-c", f"{d}/nginx.conf", "-e",
                          f"{d}/logs/error.log"])
    for _ in range(100):
        if p.poll() is not None:
            raise SystemExit(f"nginx exited: {open(f'{d}/logs/error.log').read()}")
        if all(port_taken(port) for port in (HTTP, HTTPS, MTLS)):
            return p
        time.sleep(0.05)
    p.kill()
    raise SystemExit("nginx did not listen on all three ports")


# The nginx under test, and its share of its core during the last timed run: when it is near
# 100 %, throughput is the server's limit, not the generator's.
NGINX = {"pid": None, "last_share": None}
# The last timed run's voluntary context switches: how often the generator went to sleep and
# was woken, which on the benchmark VM costs more CPU than a loopback request does (measured
# by wake_cost).
GEN = {"wakes": None}


def process_cpu(pid):
    """User + system seconds of a process, from /proc."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(cmd, stdout_path):
    """Runs cmd on the generator core under GNU time; returns (cpu_seconds, peak_rss_kib)."""
    tf = tempfile.NamedTemporaryFile(delete=False)
    server0, wall0 = process_cpu(NGINX["pid"]), time.monotonic()
    with open(stdout_path, "w") as out:
        subprocess.run(["/usr/bin/time", "-f", "%U %S %M %w", "-o", tf.name, "taskset", "-c", GEN_CORE, *cmd],
                       stdout=out, stderr=subprocess.DEVNULL, check=False)
    NGINX["last_share"] = (process_cpu(NGINX["pid"]) - server0) / (time.monotonic() - wall0)
    u, s, m, w = open(tf.name).read().split()[-4:]
    GEN["wakes"] = int(w)
    os.unlink(tf.name)
    return float(u) + float(s), int(m)


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


def run_headroom(scenario, url, certs, secs=SECS):
    out = f"{OUT}/headroom-{scenario}.json"
    run_dir = f"{OUT}/runs/headroom-{scenario}"
    subprocess.run(["rm", "-rf", run_dir])
    cmd = [HEADROOM, "attack", url, "-d", f"{secs}s", "-q", "--format", "json", "--out", run_dir, "--http1"]
    cmd += ["-c", str(CONNS)] if scenario.startswith("b") else ["--rate", str(RATE)]
    cmd += tls_flags(scenario, url, certs)
    cpu, rss = timed(cmd, out)
    d = json.load(open(out))
    return dict(done=d["requests"]["total"], ok=d["status_codes"].get("200", 0), rate=d["generator"]["rate_held"],
                tput=d["requests"]["throughput"], p50=d["latency"]["p50_us"], p99=d["latency"]["p99_us"],
                cpu=cpu, rss=rss, conns=d["connect"]["count"])


def run_oha(scenario, url, certs):
    out = f"{OUT}/oha-{scenario}.json"
    cmd = [OHA, "-c", str(CONNS), "-z", f"{SECS}s", "--no-tui", "--output-format", "json", url]
    if not scenario.startswith("b"):
        cmd += ["-q", str(RATE), "--latency-correction"]
    cmd += tls_flags(scenario, url, certs)
    cpu, rss = timed(cmd, out)
    d = json.load(open(out))
    codes = d.get("statusCodeDistribution", {})
    done = sum(codes.values()) + sum(d.get("errorDistribution", {}).values())
    s = d["summary"]
    return dict(done=done, ok=codes.get("200", 0), rate=s["requestsPerSec"], tput=s["requestsPerSec"],
                p50=d["latencyPercentiles"]["p50"] * 1e6, p99=d["latencyPercentiles"]["p99"] * 1e6, cpu=cpu, rss=rss)


def run_vegeta(scenario, url, certs):
    results = f"{OUT}/vegeta-{scenario}.bin"
    attack = [VEGETA, "attack", f"-duration={SECS}s", "-max-body=0", "-http2=false", f"-output={results}"]
    if scenario.startswith("b"):
        attack += ["-rate=0", f"-max-workers={CONNS}", f"-workers={CONNS}"]
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


def run_wrk(scenario, url, certs):
    if not scenario.startswith("b"):
        return None  # wrk has no fixed rate (wrk2 is not packaged) and no client certificates
    out = f"{OUT}/wrk-{scenario}.txt"
    cpu, rss = timed(["wrk", "-t1", f"-c{CONNS}", f"-d{SECS}s", "--latency", url], out)
    text = open(out).read()

    def lat(label):
        m = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)", text, re.M)
        v, unit = float(m.group(1)), m.group(2)
        return v * {"us": 1, "ms": 1e3, "s": 1e6}[unit]
    done = int(re.search(r"(\d+) requests in", text).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    return dict(done=done, ok=done, rate=rps, tput=rps, p50=lat("50"), p99=lat("99"), cpu=cpu, rss=rss)


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


def run_k6(scenario, url, certs):
    if not os.path.exists(K6):
        return dict(error="k6 not built")
    script = f"{OUT}/k6-script.js"
    with open(script, "w") as f:
        f.write(K6_SCRIPT % dict(conns=CONNS, secs=SECS, rate=RATE))
    summary = f"{OUT}/k6-{scenario}.json"
    env = dict(os.environ, SCENARIO=scenario, URL=url, CERTS=certs, K6_NO_USAGE_REPORT="true")
    tf = tempfile.NamedTemporaryFile(delete=False)
    subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", tf.name, "taskset", "-c", GEN_CORE, K6, "run",
                    "--quiet", "--no-color", f"--summary-export={summary}", script],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    u, sy, m = open(tf.name).read().split()[-3:]
    os.unlink(tf.name)
    d = json.load(open(summary))["metrics"]
    reqs = d["http_reqs"]
    dur = d["http_req_duration"]
    failed = d.get("http_req_failed", {}).get("passes", 0)
    attack_rate = reqs["rate"]
    return dict(done=reqs["count"], ok=reqs["count"] - failed, rate=attack_rate, tput=attack_rate,
                p50=dur["med"] * 1e3, p99=dur["p(99)"] * 1e3, cpu=float(u) + float(sy), rss=int(m))


def run_locust(scenario, url, certs):
    if scenario not in ("a", "b"):
        return None  # plain HTTP only here: its fast client's TLS options differ from the others'
    locustfile = f"{OUT}/locustfile.py"
    with open(locustfile, "w") as f:
        f.write(LOCUSTFILE)
    prefix = f"{OUT}/locust-{scenario}"
    env = dict(os.environ, SCENARIO=scenario)
    tf = tempfile.NamedTemporaryFile(delete=False)
    subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", tf.name, "taskset", "-c", GEN_CORE, "locust",
                    "-f", locustfile, "--headless", "-u", str(CONNS), "-r", str(CONNS), "-t", f"{SECS}s",
                    "--host", url.rstrip("/"), "--csv", prefix, "--only-summary", "--loglevel", "ERROR"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    u, sy, m = open(tf.name).read().split()[-3:]
    os.unlink(tf.name)
    import csv
    row = next(r for r in csv.DictReader(open(f"{prefix}_stats.csv")) if r["Name"] == "Aggregated")
    done = int(row["Request Count"])
    rps = float(row["Requests/s"])
    return dict(done=done, ok=done - int(row["Failure Count"]), rate=rps, tput=rps,
                p50=float(row["50%"]) * 1e3, p99=float(row["99%"]) * 1e3, cpu=float(u) + float(sy), rss=int(m))


SCENARIOS = [
    ("a", f"(a) {RATE:,} req/s, HTTP/1.1 keep-alive", f"http://127.0.0.1:{HTTP}/"),
    ("b", f"(b) {CONNS} connections, full speed", f"http://127.0.0.1:{HTTP}/"),
    ("c", f"(c) {RATE:,} req/s over HTTPS", f"https://127.0.0.1:{HTTPS}/"),
    ("d", f"(d) {RATE:,} req/s over HTTPS with a client certificate", f"https://127.0.0.1:{MTLS}/"),
]
TOOLS = [("headroom", run_headroom), ("oha", run_oha), ("vegeta", run_vegeta), ("wrk", run_wrk),
         ("k6", run_k6), ("locust", run_locust)]


def run_headroom_scenario(certs, secs=SECS):
    """(e): a scenario whose one request fills its path and JSON body from a CSV feeder."""
    feeder = f"{OUT}/feeder.csv"
    if not os.path.exists(feeder):
        with open(feeder, "w") as f:
            f.write("key,value\n")
            for i in range(100_000):
                f.write(f"user-{i:06d},{'v' * 32}{i}\n")
    scenario = f"{OUT}/scenario-e.yaml"
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
    out = f"{OUT}/headroom-e.json"
    run_dir = f"{OUT}/runs/headroom-e"
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


def version(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
        return (r.stdout + r.stderr).strip().splitlines()[0]
    except OSError:
        return "not found"


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((l.split(":", 1)[1].strip() for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
    return [
        f"- CPU: {cpu}, {os.cpu_count()} cores; memory {mem}",
        f"- Kernel: {platform.release()}",
        f"- nginx: {version(['nginx', '-v'])}, 1 worker pinned to core {NGINX_CORE}; generators pinned to core {GEN_CORE}",
        f"- headroom: {version([HEADROOM, '--version'])}; oha: {version([OHA, '--version'])}; "
        f"vegeta: v12.12.0; wrk: {version(['wrk', '-v'])}; k6: {version([K6, 'version'])}; "
        f"locust: {version(['locust', '--version'])}",
    ]


def fmt_us(v):
    return f"{v / 1000:.2f} ms" if v >= 1000 else f"{v:.0f} µs"


def main():
    os.makedirs(f"{OUT}/runs", exist_ok=True)
    certs = tempfile.mkdtemp(prefix="headroom-bench-")
    make_certs(certs)
    nginx = start_nginx(certs)
    NGINX["pid"] = nginx.pid
    rows, ratios = [], []
    wake_us = [wake_cost()]
    try:
        for key, title, url in SCENARIOS:
            # Rounds interleave the tools, so drift on a shared machine hits all of them alike.
            runs = {}
            for _ in range(ROUNDS):
                for name, fn in TOOLS:
                    try:
                        r = fn(key, url, certs)
                    except Exception as e:  # a peer that fails is reported, not fatal
                        r = dict(error=str(e).splitlines()[0][:80])
                    if r is not None:
                        if "error" not in r:
                            r["server"] = NGINX["last_share"]
                            r["wakes"] = GEN["wakes"]
                        runs.setdefault(name, []).append(r)
                    time.sleep(1)
            results = {name: median_run(rs) for name, rs in runs.items()}
            rows.append((title, results))
            # Ratios are paired by round (headroom and the peer ran within a minute of each
            # other), then the median taken: drift on a shared machine cancels out of a pair.
            hs = runs.get("headroom", [])
            for name, rs in runs.items():
                if name == "headroom":
                    continue
                pairs = [(h, r) for h, r in zip(hs, rs)
                         if "error" not in h and "error" not in r and h.get("done") and r.get("done")]
                if not pairs:
                    continue
                cpu = [per_request(h) / per_request(r) for h, r in pairs]
                tput = [h["tput"] / r["tput"] for h, r in pairs] if key == "b" else None
                ratios.append((title, name, cpu, tput))
        # (e) against (a), both headroom, interleaved: what templates and a feeder cost.
        templated = {"plain attack (a)": [], "templated scenario (e)": []}
        for _ in range(ROUNDS):
            for name, fn in (("plain attack (a)", lambda: run_headroom("a", SCENARIOS[0][2], certs)),
                             ("templated scenario (e)", lambda: run_headroom_scenario(certs))):
                r = fn()
                r["server"] = NGINX["last_share"]
                templated[name].append(r)
                time.sleep(1)
        pairs = zip(templated["templated scenario (e)"], templated["plain attack (a)"])
        templated_ratio = [per_request(t) / per_request(p) for t, p in pairs]
        templated = {name: median_run(rs) for name, rs in templated.items()}
        templated["ratio"] = templated_ratio
        datasets = dataset_load()
        long_rss = {}
        for secs in (10, 60) if not QUICK else (3, 6):
            long_rss[secs] = run_headroom(f"a-{secs}s", SCENARIOS[0][2], certs, secs)["rss"]
        wake_us.append(wake_cost())
    finally:
        nginx.send_signal(signal.SIGTERM)
        nginx.wait()
    write_results(rows, ratios, long_rss, templated, datasets, wake_us)


def write_results(rows, ratios, long_rss, templated, datasets, wake_us):
    opened = rows[0][1].get("headroom", {}).get("conns") if rows else None
    opened = f"{opened} in (a)'s median round" if opened is not None else "see its runs"
    lines = ["# Benchmark results", "",
             "Generated by `bench/run.sh` (do not edit by hand). Each generator ran alone against the same",
             "nginx on loopback, one after another, in one run: five rounds per scenario with the tools",
             "interleaved, each row the tool's median round by CPU per request (the range over rounds in",
             "brackets). CPU is user + system time of the generator process (GNU time); µs/req divides",
             "it by the requests completed. Latency percentiles are as",
             "each tool reports them (oha with --latency-correction; wrk's are not corrected for",
             "coordinated omission). oha and vegeta get at most 50 connections in every scenario;",
             "uncapped, vegeta over HTTPS/1.1 spiralled into a handshake storm here (seconds of latency,",
             "~1 GB RSS). k6 gets 50 VUs and skips certificate verification (it cannot trust a CA",
             "file); Locust runs 50 FastHttpUsers, plain HTTP only. headroom opens connections as the",
             f"rate needs them ({opened}). \"nginx's core\" is nginx's CPU time over the",
             "run's wall time: near 100 %, the throughput is nginx's limit, not the generator's.",
             "", "## Machine", "", *machine(), ""]
    if QUICK:
        lines += ["**Quick mode (3 s runs): for checking the script, not for quoting.**", ""]
    for title, results in rows:
        lines += [f"## {title}", "",
                  "| tool | completed | 200 OK | rate held (req/s) | throughput (req/s) | p50 | p99 | CPU µs/req | "
                  "wake-ups/req | peak RSS | nginx's core |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for name, r in results.items():
            if "error" in r:
                lines.append(f"| {name} | failed: {r['error']} | | | | | | | | | |")
                continue
            lo, hi = r["cpu_range"]
            spread = f" ({lo:.1f}–{hi:.1f})" if r["rounds"] > 1 else ""
            lines.append(f"| {name} | {r['done']:,} | {r['ok']:,} | {r['rate']:,.1f} | {r['tput']:,.1f} | "
                         f"{fmt_us(r['p50'])} | {fmt_us(r['p99'])} | {per_request(r):.1f}{spread} | "
                         f"{r['wakes'] / r['done']:.2f} | {r['rss'] / 1024:.1f} MiB | {r['server']:.0%} |")
        if "(d)" in title:
            lines.append("")
            lines.append("wrk cannot pace a fixed rate or present a client certificate; Locust was run on")
            lines.append("plain HTTP only.")
        lines.append("")
    lo, hi = min(wake_us), max(wake_us)
    lines += ["## What a wake-up costs here", "",
              f"One timer sleep and wake-up cost **{lo:.1f}–{hi:.1f} µs** of CPU on the generator core "
              "(2,000 sleeps of 1 ms in a Python loop, measured before and after the scenarios). "
              "\"wake-ups/req\" above is each generator's voluntary context switches (all its threads) "
              "per completed request. headroom's pacer sleeps once per coalescing window (`--coalesce`, "
              "default 1 ms) whatever the rate."]
    h = rows[0][1].get("headroom", {}) if rows else {}
    if h.get("done") and h.get("wakes") is not None:
        share = h["wakes"] / h["done"] * statistics.median(wake_us) / per_request(h)
        lines[-1] += (f" In (a) that is {h['wakes'] / h['done']:.2f} wake-ups per request: about "
                      f"{share:.0%} of its CPU per request goes to waking up.")
    lines.append("")
    lines += ["## Ratios (headroom ÷ peer; below 1 is better for CPU, above 1 for throughput)", "",
              "Each round's headroom run divided by the same round's peer run, then the median over the",
              "rounds (the range in brackets).", "",
              "| scenario | peer | CPU per request | throughput |", "|---|---|---|---|"]

    def paired(values):
        if not values:
            return ""
        return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"

    for title, name, cpu, tput in ratios:
        lines.append(f"| {title} | {name} | {paired(cpu)} | {paired(tput) if tput else ''} |")
    lines += ["", "## (e) 5,000 req/s of a templated scenario vs the plain attack", "",
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
    text = "\n".join(lines) + "\n"
    with open(os.path.join(ROOT, "bench", "RESULTS.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
