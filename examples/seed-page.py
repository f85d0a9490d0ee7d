#!/usr/bin/env python3
"""The page of one seed reproduction: the seed's own table beside headroom's, row by row.

The seed's numbers are quoted from its text (shared/seeds/NNN_*.txt); headroom's are cells of
the markdown headroom generated in the same directory (report.md, compare.md, ...), never
typed by hand. A row of the seed that the generated report does not have is an error, so a
page is never built from a run that does not match the seed.

usage: seed-page.py SEED SEEDS_DIR DOCS_DIR quick|full FULL_COMMAND DURATIONS > README.md
"""

import glob
import os
import re
import sys


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
    sys.exit(f"seed-page.py: {where} has no column {name!r} (it has {', '.join(header)})")


def read(docs, name):
    with open(os.path.join(docs, name), encoding="utf-8") as f:
        return f.read()


def row(values):
    return "| " + " | ".join(str(v) for v in values) + " |"


def md_table(header, rows, right_from=1):
    rule = ["---" if i < right_from else "---:" for i in range(len(header))]
    return "\n".join([row(header), row(rule)] + [row(r) for r in rows])


def preamble(seed, source, title, mode, full, durations, files):
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


def page_000(seeds, docs, mode, full, durations):
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
        "% of one core. req/s achieved is over the ramp and the steady state together.",
        "",
        md_table(head, out_rows, right_from=8),
        "",
        "Per-request tables (login, read, list, write, invalid read and write, each with min, "
        "median, p95, p99, max, mean and std dev per row) are in [report.md](report.md).",
        "",
    ])


def page_002(seeds, docs, mode, full, durations):
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
        " and \"get many\" (5 consecutive keys) at the row's rate each. The store is etcd's v3 "
        "JSON API on loopback; the seed's was an HTTP service over DynamoDB.",
        "",
    ] + sections)


PAGES = {"000": page_000, "002": page_002}


def main():
    seed, seeds, docs, mode, full, durations = sys.argv[1:7]
    if seed not in PAGES:
        sys.exit(f"seed-page.py: no page for seed {seed}")
    sys.stdout.write(PAGES[seed](seeds, docs, mode, full, durations))


if __name__ == "__main__":
    main()
