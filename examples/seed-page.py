#!/usr/bin/env python3
"""The page of one seed reproduction: the seed's own table beside headroom's, row by row,
under a conclusion where the seed has one.

The seed's numbers and conclusions are quoted from its text (shared/seeds/NNN_*.txt);
headroom's are cells of the markdown headroom generated in the same directory (report.md,
compare.md, ...) and numbers of the runs' JSON (`headroom report RUN --format json`), never
typed by hand. A row of the seed that the generated report does not have is an error, so a
page is never built from a run that does not match the seed.

usage: seed-page.py SEED SEEDS_DIR DOCS_DIR quick|full FULL_COMMAND DURATIONS RUNS_DIR \
           [MAX_RATE [CUT_RATES]] > README.md
(HEADROOM: the headroom binary, by default the release build of this checkout.)
"""

import glob
import json
import os
import re
import subprocess
import sys

HEADROOM = os.environ.get("HEADROOM") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "headroom")


def seed_text(seeds, seed):
    (path,) = glob.glob(os.path.join(seeds, f"{seed}_*.txt"))
    with open(path, encoding="utf-8") as f:
        return os.path.basename(path), f.read()


def cells(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.strip() for c in line.split("|")]


def is_rule(line):
    return bool(re.fullmatch(r"\|?\s*:?-{3,}:?\s*(\|\s*:?-*:?\s*)*\|?", line.strip()))


def tables(text):
    """Every markdown table of `text`: (the heading above it, header cells, rows of cells)."""
    out, heading, lines, i = [], "", text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if "|" in line and i + 1 < len(lines) and is_rule(lines[i + 1]):
            header, rows, i = cells(line), [], i + 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append(cells(lines[i]))
                i += 1
            out.append((heading, header, rows))
            continue
        i += 1
    return out


def table(text, heading_pattern, where):
    found = [t for t in tables(text) if re.search(heading_pattern, t[0])]
    if not found:
        sys.exit(f"seed-page.py: no table under a heading matching {heading_pattern!r} in {where}")
    return found[0]


def column(header, name, where):
    for i, h in enumerate(header):
        if h.lower() == name.lower():
            return i
    # A column with a note after its name: "99% (95% CI)".
    for i, h in enumerate(header):
        if h.lower().startswith(name.lower() + " ("):
            return i
    sys.exit(f"seed-page.py: {where} has no column {name!r} (it has {', '.join(header)})")


def read(docs, name):
    with open(os.path.join(docs, name), encoding="utf-8") as f:
        return f.read()


def run_json(run):
    """A stored run's report as JSON (`headroom report RUN --format json`)."""
    out = subprocess.run([HEADROOM, "report", run, "--format", "json"], capture_output=True,
                         text=True)
    if out.returncode != 0:
        sys.exit(f"seed-page.py: headroom report {run} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def quote(text, pattern, where):
    """The first match of `pattern` in the seed's `text`, whitespace folded: the seed's own
    words, never retyped."""
    m = re.search(pattern, text, flags=re.S)
    if not m:
        sys.exit(f"seed-page.py: {where} has nothing matching {pattern!r}")
    return " ".join(m.group(0).split())


def num(x, digits=0):
    return f"{x:,.{digits}f}"


def ms(us):
    return f"{us / 1000:.1f} ms"


def row(values):
    return "| " + " | ".join(str(v) for v in values) + " |"


def md_table(header, rows, right_from=1):
    rule = ["---" if i < right_from else "---:" for i in range(len(header))]
    return "\n".join([row(header), row(rule)] + [row(r) for r in rows])


def preamble(seed, source, title, mode, full, durations, files, conclusion=()):
    what = (
        "These figures are from a **quick** run (`--quick`): every stage shortened to seconds, "
        "so latencies and error rates describe a few hundred requests, not the seed's minutes "
        f"of load. The full reproduction is `{full}` (hours)."
        if mode == "quick"
        else f"These figures are from the full reproduction, `{full}`."
    )
    links = ", ".join(f"[{label}]({name})" for label, name in files)
    return "\n".join(
        [
            f"# Seed {seed}: {title}",
            "",
        ]
        + list(conclusion)
        + [
            f"The seed's own table (quoted from `shared/seeds/{source}`) beside headroom's, row "
            "by row: headroom's cells are copied from the markdown headroom generated next to "
            f"this page ({links}), by `examples/seed-page.py`.",
            "",
            f"{what} Durations used: {durations}.",
            "",
            "Servers: `examples/servers.sh` on loopback (nginx, a bearer-token gate in front of "
            "etcd, etcd), on the shared 2-core development machine. The seed's service ran on "
            "its own hardware: the comparison is of what the tables show, not of the numbers.",
            "",
        ]
    )


def page_000(seeds, docs, mode, full, durations, ctx):
    source, text = seed_text(seeds, "000")
    # The seed's table has a header of 9 cells and a rule of 7: read it by its rows.
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Category"))
    seed_rows = [cells(l) for l in lines[start + 2 :] if l.count("|") >= 8]
    report = read(docs, "report.md")
    _, header, rows = table(report, r"^Matrix of", "report.md")
    want = ["Category", "Operation Performed", "%Reads", "%Writes", "Ramp time", "Steady state",
            "Requests Per Second", "req/s", "errors", "p95"]
    col = {n: column(header, n, "report.md") for n in want}
    cpu = [i for i, h in enumerate(header) if h.endswith(" CPU")]
    if len(rows) != len(seed_rows):
        sys.exit(f"seed-page.py: the seed has {len(seed_rows)} rows, report.md {len(rows)}")
    out_rows = []
    for n, (s, h) in enumerate(zip(seed_rows, rows), 1):
        s = s + [""] * (9 - len(s))
        for seed_cell, name in [(s[0], "Category"), (s[1], "Operation Performed"),
                                (s[2], "%Reads"), (s[6], "Requests Per Second")]:
            if seed_cell != h[col[name]]:
                sys.exit(f"seed-page.py: row {n}: the seed has {seed_cell!r}, report.md {h[col[name]]!r}")
        out_rows.append([n, "seed", s[0], s[1], s[2], s[3], s[4], s[5].replace("&nbsp;", " "),
                         s[6], "", s[7] or "(blank)", s[8]] + ["" for _ in cpu])
        out_rows.append([n, "headroom"] + [h[col[k]] for k in want[:7]] + [h[col["req/s"]],
                         h[col["errors"]], h[col["p95"]]] + [h[i] for i in cpu])
    head = ["#", "", "Category", "Operation", "%Reads", "%Writes", "Ramp", "Steady state",
            "RPS (target)", "req/s achieved", "Error rate", "Response time (headroom: p95)"]
    head += [header[i] for i in cpu]
    return "\n".join([
        preamble("000", source, "a secrets service (Gatling)", mode, full, durations,
                 [("report", "report.md"), ("HTML", "report.html")]),
        "Command: `headroom run examples/000-secrets-service-matrix.yaml --monitor-pid NGINX,ETCD`"
        " (one variant per row of the seed's table, in its order), after the secrets are "
        "written once. Reads are etcd range requests through the token gate, writes etcd puts, "
        "\"Viewing SDB\" lists the box's keys, the DDoS rows carry a garbage token and expect "
        "401. headroom's error rate counts answers the scenario did not expect (the DDoS rows' "
        "401s are expected). The seed gave the servers' CPU for the whole test only (\"5% - "
        "45%\"); headroom gives the gate's (nginx) and the store's (etcd) mean CPU per row, as "
        "% of one core. Each variant's ramp is a warm-up stage: req/s achieved, error rate, "
        "latency and CPU are of its steady state (the logins, made during the ramp, are counted "
        "with it).",
        "",
        md_table(head, out_rows, right_from=8),
        "",
        "Per-request tables (login, read, list, write, invalid read and write, each with min, "
        "median, p95, p99, max, mean and std dev per row) are in [report.md](report.md).",
        "",
    ])


def page_002(seeds, docs, mode, full, durations, ctx):
    source, text = seed_text(seeds, "002")
    report = read(docs, "report.md")
    sections = []
    for seed_heading, request, batch in [("Get One", "get one", False),
                                         ("Get Many", r"get many \(5\)", True)]:
        _, sh, srows = table(text, rf"^{seed_heading}$", source)
        _, hh, hrows = table(report, rf"^Request {request}$", "report.md")
        hcol = {n: column(hh, n, "report.md") for n in
                ["Req Throughput (rps)", "Payload size", "req/s", "min", "median", "p99", "max",
                 "std dev"]}
        rate_s, size_s = column(sh, "Req Throughput (rps)", source), column(sh, "Payload size", source)
        stats_s = [column(sh, n, source) for n in ["Min", "Median", "99 Percentile", "Max", "Std Dev"]]
        out = []
        for s in srows:
            match = [h for h in hrows if h[hcol["Req Throughput (rps)"]] == s[rate_s]
                     and h[hcol["Payload size"]] == s[size_s]]
            if len(match) != 1:
                sys.exit(f"seed-page.py: report.md has {len(match)} rows for {s[rate_s]} rps, {s[size_s]}")
            (h,) = match
            extra = [s[column(sh, "Batch size", source)]] if batch else []
            out.append([s[rate_s], s[size_s]] + extra + ["seed", ""] + [s[i] for i in stats_s])
            out.append([s[rate_s], s[size_s]] + (["5"] if batch else []) + ["headroom", h[hcol["req/s"]]]
                       + [h[hcol[n]] for n in ["min", "median", "p99", "max", "std dev"]])
        head = ["Req Throughput (rps)", "Payload size"] + (["Batch size"] if batch else []) + \
               ["", "req/s achieved", "Min", "Median", "99 percentile", "Max", "Std Dev"]
        sections += [f"## {seed_heading}", "", md_table(head, out, right_from=2), ""]
    return "\n".join([
        preamble("002", source, "a key-value API (Gatling)", mode, full, durations,
                 [("report", "report.md"), ("HTML", "report.html")]),
        "Command: the two data sets written (`examples/002-kv-fill.yaml`, 256 B values under "
        "`perf256-`, then 5 KB values under `perf5k-`), then `headroom run "
        "examples/002-kv-matrix.yaml`: one variant per rate and payload, each sending \"get one\""
        " and \"get many\" (5 consecutive keys) at the row's rate each, its ramp a warm-up: the "
        "figures are of the steady state. The store is etcd's v3 "
        "JSON API on loopback; the seed's was an HTTP service over DynamoDB.",
        "",
    ] + sections)


def vegeta_blocks(text):
    """Each vegeta report block of `text`: (the heading or label line before it, its lines)."""
    out, label, block, lines = [], "", None, text.splitlines()
    for line in lines:
        if line.startswith("```"):
            if block is None:
                block = []
            else:
                if any(l.startswith("Requests") for l in block):
                    out.append((label, block))
                block = None
            continue
        if block is not None:
            block.append(line)
        elif re.match(r"(#+ )?(Step \d+ of|[\d,]+\s*rps)", line.strip()):
            label = line.strip()
    return out


def vegeta_fields(block):
    """A vegeta block's numbers by name (requests, rate, throughput, latencies, success,
    status codes, error set)."""
    f, errors, in_errors = {}, [], False
    for line in block:
        if in_errors:
            if line.strip():
                errors.append(re.sub(r"^Get https?://\S+?: ", "", line.strip()))
            continue
        m = re.match(r"(\w[\w ]*?)\s+\[([^\]]*)\]\s+(.*)$", line)
        if m:
            names = [n.strip() for n in m.group(2).split(",")]
            values = [v.strip() for v in m.group(3).split(",")] if "," in m.group(3) else [m.group(3).strip()]
            if m.group(1) == "Status Codes":
                f["status codes"] = " ".join(m.group(3).split())
            else:
                for n, v in zip(names, values):
                    f[f"{m.group(1).lower()} {n}"] = v
        elif line.startswith("Error Set"):
            in_errors = True
    # The first three kinds, each cut short: the page is a table, the report has them all.
    cut = [e if len(e) <= 60 else e[:57] + "..." for e in errors[:3]]
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    f["error set"] = "; ".join(cut) + more if errors else "(empty)"
    return f


# Seed 001's ways of ending TLS: its section heading, the variant's run, the page's title, and
# how its TL;DR names it.
SECTIONS_001 = [("Load Balancer", "balancer", "TLS ended at the load balancer", "On the Load Balancer"),
                ("Client Peer Verification", "mtls", "TLS ended on the instance, client certificates verified",
                 "On the instance (with client peer verification)"),
                ("Loadtest with Instance TLS Termination", "tls", "TLS ended on the instance",
                 "On the instance (no client peer verification)")]
# The limits of a step that held its rate: nothing at its limit, or a transient only.
HELD = {"neither", "transient"}


def steps_001(runs, variant, docs):
    """The measured steps of one variant's sweep, by rate: its JSON stage (rate, requests,
    failures, verdict, server CPU) and the `limit` cell of its row in the generated
    markdown's Stages table (headroom's words for the step's verdict)."""
    report = run_json(os.path.join(runs, variant))
    _, header, rows = table(read(docs, f"{variant}.md"), r"^Stages$", f"{variant}.md")
    name, limit = column(header, "stage", f"{variant}.md"), column(header, "limit", f"{variant}.md")
    words = {r[name]: r[limit] for r in rows}
    out = {}
    for s in report["stages"]:
        if s["warmup"]:
            continue
        if s["name"] not in words:
            sys.exit(f"seed-page.py: {variant}.md has no Stages row {s['name']!r}")
        findings = s["verdict"]["findings"]
        held = (s["verdict"]["limit"] in HELD and s["failures"] == 0 and s["errors"] == 0
                and not any(f["finding"] == "rate_short" for f in findings))
        out[int(round(s["from"]))] = {"held": held, "stage": s, "words": words[s["name"]]}
    return out


def why_001(step):
    """Why a step did not hold its rate, in headroom's words: the step's verdict cell, and its
    failures when the verdict names none."""
    s, words = step["stage"], step["words"]
    if s["failures"] or s["errors"]:
        codes = ", ".join(f"{k}: {v}" for k, v in sorted(s.get("status_codes", {}).items()))
        words += f" ({num(s['failures'])} of {num(s['count'])} requests failed; status codes {codes})"
    return words


def conclusion_001(text, source, runs, docs, ctx):
    cut = [int(r) for r in ctx["cut"].split(",") if r]
    tldr = [quote(text, r"Terminating TLS on the instance is much less performant\.", source),
            quote(text, r"From this we can see[^\n]*", source)]
    rows, steps = [], {}
    for key, variant, title, seed_name in SECTIONS_001:
        steps[variant] = steps_001(runs, variant, docs)
        # "- On the Load Balancer\n    - over 10000rps": the line under the variant's name.
        seed_said = quote(text, re.escape(seed_name) + r"\s*\n\s*- [^\n]*", source).split("- ")[-1]
        by_rate = steps[variant]
        held = [r for r in sorted(by_rate) if by_rate[r]["held"]]
        failed = [r for r in sorted(by_rate) if not by_rate[r]["held"]]
        best = f"{num(held[-1])} req/s" if held else "none"
        if failed:
            first = f"{num(failed[0])} req/s"
            why = why_001(by_rate[failed[0]])
            if len(failed) > 1:
                why += f" (not held either: {', '.join(num(r) for r in failed[1:])} req/s)"
        else:
            first = "none"
            why = "every rate run was held" + (
                f"; {', '.join(num(r) for r in cut)} req/s not run (above MAX_RATE)" if cut else "")
        rows.append([title, seed_said, best, first, why])
    rates = sorted({r for v in steps.values() for r in v})
    cpu_rows = []
    for r in rates:
        cells = [num(r)]
        for _, variant, _, _ in SECTIONS_001:
            step = steps[variant].get(r)
            cpu = step and step["stage"].get("server_cpu_percent")
            cell = "-" if cpu is None else f"{cpu:.0f}%"
            if step and not step["held"]:
                cell += " (not held)"
            cells.append(cell)
        cpu_rows.append(cells)
    seed_cpu = quote(text, r"[^.\n]*CPU isn't the bottleneck[^.]*\.", source)
    cap = (f" Rates above MAX_RATE={ctx['max_rate']} req/s ({', '.join(num(r) for r in cut)}) "
           "were not run." if cut else "")
    return [
        "## Conclusion",
        "",
        "Computed from the runs (`headroom report RUN --format json`) and the generated "
        "reports: a rate is **held** when its step sent the rate, every request succeeded and "
        "headroom's verdict for the step names no limit (`neither`, or a `transient` only); "
        "the reason a rate was not held is the step's verdict as headroom words it (the "
        f"*limit* cell of the report's Stages table).{cap}",
        "",
        md_table(["", "seed: highest rps achieved", "headroom: highest rate held",
                  "first rate not held", "why (headroom's verdict for that step)"], rows,
                 right_from=5),
        "",
        f"The seed's TL;DR: \"{tldr[0]}\" … \"{tldr[1]}\"",
        "",
        "Server CPU (nginx, mean over each step, % of one core) per rate:",
        "",
        md_table(["rate (req/s)"] + [s[2] for s in SECTIONS_001], cpu_rows),
        "",
        f"The seed: \"{seed_cpu}\"",
        "",
    ]


def page_001(seeds, docs, mode, full, durations, ctx):
    source, text = seed_text(seeds, "001")
    cut = {int(r) for r in ctx["cut"].split(",") if r}
    parts = re.split(r"^## ", text, flags=re.M)
    out = []
    for key, variant, title, _ in SECTIONS_001:
        (part,) = [p for p in parts if p.startswith("Loadtest") and key in p.splitlines()[0]
                   and (variant != "tls" or "Client Peer" not in p.splitlines()[0])]
        ours = {}
        for label, block in vegeta_blocks(read(docs, f"{variant}.md")):
            m = re.match(r"Step \d+ of \d+: (\d+) req/s", label.lstrip("#").strip())
            if m:
                ours[int(m.group(1))] = vegeta_fields(block)
        rows, shown = [], set()
        for label, block in vegeta_blocks(part):
            m = re.match(r"([\d,]+)\s*rps", label)
            if not m:
                continue
            rate = int(m.group(1).replace(",", ""))
            # The seed's text has µ read as Latin-1 in places.
            sf = vegeta_fields([l.replace("Âµ", "µ") for l in block])
            keys = ["requests total", "requests rate", "requests throughput", "latencies mean",
                    "latencies 50", "latencies 95", "latencies 99", "latencies max",
                    "success ratio", "status codes", "error set"]
            rows.append([rate, f"seed: {label}"] + [sf.get(k, "") for k in keys])
            hf = ours.get(rate)
            if rate in shown:
                # The seed ran some rates again (another try, 240 s, HTTP/2 off): headroom ran
                # each rate once, shown beside the seed's first run of it.
                note = "headroom: (same rate as above)"
            elif hf is None and rate in cut:
                note = f"headroom: not run (above MAX_RATE={ctx['max_rate']})"
            elif hf is None:
                note = "headroom: not reached (the sweep stopped before)"
            else:
                note = None
            if note:
                rows.append([rate, note] + [""] * len(keys))
            else:
                rows.append([rate, "headroom"] + [hf.get(k, "") for k in keys])
            shown.add(rate)
        head = ["rate", "", "requests", "rate", "throughput", "mean", "50", "95", "99", "max",
                "success", "status codes", "error set"]
        out += [f"## {title}", "", f"headroom: [{variant}.md]({variant}.md) ([HTML]({variant}.html)).",
                "", md_table(head, rows, right_from=2), ""]
    return "\n".join([
        preamble("001", source, "TLS termination (vegeta)", mode, full, durations,
                 [("balancer", "balancer.md"), ("TLS", "tls.md"), ("mutual TLS", "mtls.md"),
                  ("compared", "compare.md")],
                 conclusion_001(text, source, ctx["runs"], docs, ctx)),
        "Command: one `headroom sweep --rate 1000,2000,...,20000` per way of ending TLS "
        "(`examples/001-capacity-{balancer,tls,mtls}.yaml`: plain HTTP as behind the balancer, "
        "TLS on nginx, TLS with client certificates on nginx), each step reported as a vegeta "
        "block; the three compared rate by rate in [compare.md](compare.md). Each seed block is "
        "set beside the headroom step of the same rate; where the seed ran a rate again (another "
        "try, 240 s, HTTP/2 off), headroom's step is shown beside its first run only. vegeta's "
        "latencies include failed requests; headroom's are the answered requests' (failures "
        "are timed on their own line of the report).",
        "",
    ] + out)


def knee_003(report):
    """The run's saturation finding (the knee), or None."""
    found = [f for f in report["verdict"]["findings"] if f["finding"] == "saturated"]
    return found[0] if found else None


def conclusion_003(text, source, runs):
    rows, plateaus = [], {}
    for n, label in [("1-instance", "1"), ("2-instances", "2")]:
        report = run_json(os.path.join(runs, n))
        steps = [s for s in report["stages"] if not s["warmup"]]
        one = min(steps, key=lambda s: s["from"])
        k = knee_003(report)
        if k is None:
            rows.append([label, f"{num(one['rps'])} req/s, {ms(one['latency']['mean_us'])} mean",
                         "no knee found (headroom's verdict for the run: "
                         f"`{report['verdict']['limit']}`)", "", "", ""])
            continue
        plateaus[label] = k["throughput"]
        rows.append([label, f"{num(one['rps'])} req/s, {ms(k['base_latency_us'])} mean",
                     num(k["knee_users"], 1), f"{num(k['throughput'])} req/s",
                     f"{num(k['from_users'])} users: p50 {ms(k['from_p50_us'])}",
                     f"{num(k['to_users'])} users: p50 {ms(k['to_p50_us'])}"])
    scaled = ""
    if len(plateaus) == 2:
        scaled = (f" Two instances saturated at {plateaus['2'] / plateaus['1']:.2f} times one "
                  "instance's throughput.")
    seed_said = quote(text, r"At this stage, the database[^.]*\.[^.]*\.", source)
    return [
        "## Conclusion",
        "",
        "Computed from each run's verdict (`headroom report RUN --format json`, its finding "
        "`saturated`): past the knee, more users added no throughput, only latency (each waited "
        "for the others). The knee is where the two asymptotes meet: users ≈ plateau throughput "
        f"× the latency at one user.{scaled}",
        "",
        md_table(["instances", "one user", "knee (users)", "plateau throughput",
                  "first step judged saturated", "heaviest step"], rows),
        "",
        "The seed's results are plots; the conclusion it states is of its 10-instance run, "
        f"which this reproduction does not run: \"{seed_said}\"",
        "",
    ]


def page_003(seeds, docs, mode, full, durations, ctx):
    source, text = seed_text(seeds, "003")
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Request Type Instances"))
    rows, kind = [], ""
    for l in lines[start + 1:start + 7]:
        # "Get 1, 2, 4 500 1 1 60 30000", then "10 500 1 1 120 60000" for the same type.
        m = re.fullmatch(r"(?:([A-Za-z]+) )?([\d, ]+?) (\d+) (\d+) (\d+) (\d+) (\d+)", l.strip())
        if not m:
            sys.exit(f"seed-page.py: {source}: cannot read the request plan line {l!r}")
        kind = m.group(1) or kind
        rows.append(["seed", f"{kind}, {m.group(2)} instance(s)"] + list(m.group(3, 4, 5, 6))
                    + [f"{int(m.group(7)):,}", "(plots only)"])
    for n, label in [("1-instance", "1"), ("2-instances", "2")]:
        md = read(docs, f"{n}.md")
        _, header, steps = table(md, r"^Stages$", f"{n}.md")
        c = {k: column(header, k, f"{n}.md") for k in ["load", "requests", "throughput", "99%"]}
        users = [int(re.sub(r"\D", "", r[c["load"]])) for r in steps]
        per_step = sorted({r[c["requests"]] for r in steps})
        total = sum(int(r[c["requests"]].replace(",", "")) for r in steps)
        best = max(steps, key=lambda r: float(re.sub(r"[^\d.]", "", r[c["throughput"]])))
        rows.append(["headroom", f"GET (mutual TLS), {label} instance(s)", ", ".join(per_step),
                     users[1] - users[0] if len(users) > 1 else "", users[0], users[-1],
                     f"{total:,}", f"{best[c['throughput']]} (p99 {best[c['99%']]})"])
    head = ["", "Request type, instances", "requests/step", "concurrency step", "min", "max",
            "total requests", "best step's throughput"]
    return "\n".join([
        preamble("003", source, "a credential service (forked hey)", mode, full, durations,
                 [("1 instance", "1-instance.md"), ("2 instances", "2-instances.md"),
                  ("compared", "compare.md")], conclusion_003(text, source, ctx["runs"])),
        "Command (of the full run; the durations above are this run's): `headroom sweep "
        "--scenario examples/003-capacity-N.yaml --concurrency 1..120 "
        "--step 1 --step-requests 500 --raw` for 1 and 2 instances (each an nginx port verifying "
        "client certificates, taking 5 ms a request and answering at most 2,000 req/s: nginx's "
        "`echo_sleep` and `limit_req`), as `capacity-studies.sh 003`. "
        "The seed's results are headroom plots only (images, no numbers): its request plan is "
        "quoted below (its rows as its text has them), beside the plan headroom ran, and the "
        "headroom plots follow.",
        "",
        md_table(head, rows, right_from=2),
        "",
        "Each run's headroom plot (mean, p50, p95 and p99 per step, each point labelled with its "
        "users), and both runs' p99 together:",
        "",
        "![1 instance](plots/1-instance-headroom.png)",
        "![2 instances](plots/2-instances-headroom.png)",
        "![compared](plots/compare-headroom.png)",
        "",
        "Every request's record, for the seed's own plotting scripts: "
        "[1-instance.csv.gz](1-instance.csv.gz), [2-instances.csv.gz](2-instances.csv.gz) "
        "(`headroom export RUN --format csv`: request, method, stage, intended and actual send "
        "time, latency, status, bytes, error).",
        "",
    ])


# The seed's operations (method, how its name ends) and the requests of 004-key-lifecycle.yaml.
OPERATIONS_004 = [("POST", "upload-key", "create key"), ("GET", "keys/[id]", "get key"),
                  ("PATCH", "keys/[id]", "patch key"), ("GET", "versions", "list versions"),
                  ("POST", "schedule-destroy", "destroy key")]


def page_004(seeds, docs, mode, full, durations, ctx):
    source, text = seed_text(seeds, "004")
    report = read(docs, "report.md")
    _, hh, hrows = table(report, r"^Requests by stage$", "report.md")
    ours_cols = ["# reqs", "# fails", "Avg", "Min", "Max", "Avg size", "RPS", "Fails/s", "50%",
                 "60%", "70%", "80%", "90%", "95%", "99%", "100%"]
    hc = {k: column(hh, k, "report.md") for k in ["Stage", "Name"] + ours_cols}
    # The seed's levels: "Response with request coverage in percentile (10 VUS, 180 seconds)".
    levels = re.split(r"^Response with request coverage in percentile \((\d+) VUS, (\d+) seconds\)$",
                      text, flags=re.M)
    out = []
    # headroom's Failures table as generated (request, reason, count, share), when it has one.
    found = [t for t in tables(report) if t[0] == "Failures"]
    failures = []
    if found:
        _, fh, frows = found[0]
        failures = ["## Failures (headroom, the whole run)", "", md_table(fh, frows, right_from=3), ""]
    for i in range(1, len(levels), 3):
        users, seconds, body = levels[i], levels[i + 1], levels[i + 2]
        t1 = [r for h, hd, rs in tables(body) if hd[:2] == ["Method", "Name"] and "# Requests" in hd
              for r in rs if r[0] != "Aggregated"]
        t2 = [r for h, hd, rs in tables(body) if hd[:2] == ["Method", "Name"] and "50%ile (ms)" in hd
              for r in rs if r[0] != "Aggregated"]
        rows = []
        for method, ending, ours in OPERATIONS_004:
            s1 = [r for r in t1 if r[0] == method and r[1].rstrip().endswith(ending)]
            s2 = [r for r in t2 if r[1] == s1[0][1] and r[0] == s1[0][0]] if s1 else []
            if s1:
                # Table 1: method, name, requests, fails, average, min, max, size, RPS, fails/s;
                # table 2: method, name, then the 50, 60, 70, 80, 90, 95, 99 and 100 % columns.
                a, b = s1[0], (s2[0] if s2 else [""] * 10)
                rows.append([f"{a[0]} {a[1]}", "seed", a[2], a[3], a[4] + " ms", a[5] + " ms",
                             a[6] + " ms", a[7] + " B", a[8], a[9]]
                            + [v + " ms" for v in b[2:10]])
            h = [r for r in hrows if r[hc["Stage"]] == f"{users} users" and r[hc["Name"]] == ours]
            if len(h) != 1:
                sys.exit(f"seed-page.py: report.md has {len(h)} rows for {ours} at {users} users")
            h = h[0]
            rows.append([f"POST {ours}", "headroom"] + [h[hc[k]] for k in ours_cols])
        head = ["Operation", "", "# Requests", "# Fails", "Average", "Min", "Max", "Avg size",
                "RPS", "Failures/s", "50%", "60%", "70%", "80%", "90%", "95%", "99%", "100%"]
        out += [f"## {users} users (the seed: {seconds} s)", "", md_table(head, rows, right_from=2), ""]
    return "\n".join([
        preamble("004", source, "a key manager (Locust)", mode, full, durations,
                 [("report", "report.md"), ("HTML", "report.html")]),
        "Command: `headroom run examples/004-key-lifecycle.yaml` in one run of three stages (10, "
        "30 and 50 users), each user running a key's lifecycle against etcd's v3 JSON API: "
        "create, read and patch a key of its own, then, as the seed's delete did (\"listing key "
        "version(s) and schedule destroy\"), list the keys and destroy the first one listed; "
        "headroom's rows are its *Requests by stage* table. The seed ran each operation in a "
        "Locust run of its own against a cloud key manager (seconds per request). Its destroys "
        "failed with 400 when users destroyed the same version at once; here users that list at "
        "the same time destroy the same key, and those that find it gone get etcd's 200 with "
        "nothing deleted, which the scenario does not expect (`deleted: 1`): headroom's Failures "
        "table below gives each failure's request and reason, which the seed's Locust table "
        "(`# Fails` alone) could not.",
        "",
    ] + out + failures + [
        "Latency by percentile per operation (Locust's 50…100 % columns as a curve), over the "
        "run and per user level, then per operation at each user level (the seed's graph for "
        "each of its runs):",
        "",
        "![by percentile](plots/latency-by-percentile.png)",
        "![by percentile and stage](plots/latency-by-percentile-by-stage.png)",
    ] + [f"![per operation at level {n}](plots/latency-by-percentile-stage-{n}.png)"
         for n in (1, 2, 3)] + [
        "",
    ])


PAGES = {"000": page_000, "001": page_001, "002": page_002, "003": page_003, "004": page_004}


def main():
    seed, seeds, docs, mode, full, durations, runs = sys.argv[1:8]
    extra = sys.argv[8:] + ["", ""]
    ctx = {"runs": runs, "max_rate": extra[0], "cut": extra[1]}
    if seed not in PAGES:
        sys.exit(f"seed-page.py: no page for seed {seed}")
    sys.stdout.write(PAGES[seed](seeds, docs, mode, full, durations, ctx))


if __name__ == "__main__":
    main()
