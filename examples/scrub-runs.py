#!/usr/bin/env python3
"""Keeps this machine out of the pages made from stored runs: headroom stores each run's
command line as it was typed (meta.json's `command`), which names the binary by its path on
the build host, the run directory by its absolute path, and the server processes watched by
their PIDs. Rewritten here, in every JSON file of the runs, before the pages are rendered:
the binary as `headroom`, paths under EXAMPLES relative to it (as if typed there), and the
value of `--monitor-pid` as LABEL (e.g. NGINX). Nothing else in a run is changed.

usage: scrub-runs.py RUNS_DIR EXAMPLES_DIR LABEL
"""

import json
import os
import sys


def scrub(command, examples, label):
    out, prefix = [], examples.rstrip("/") + "/"
    for i, arg in enumerate(command):
        if i == 0:
            arg = "headroom"
        elif out and out[-1] == "--monitor-pid":
            arg = label
        elif arg.startswith("--monitor-pid="):
            arg = f"--monitor-pid={label}"
        else:
            arg = arg.replace(prefix, "")
        out.append(arg)
    return out


def walk(node, examples, label):
    """Every `command` list of strings in `node`, scrubbed; True when any changed."""
    changed = False
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "command" and isinstance(value, list) and all(isinstance(a, str) for a in value):
                new = scrub(value, examples, label)
                changed |= new != value
                node[key] = new
            else:
                changed |= walk(value, examples, label)
    elif isinstance(node, list):
        for item in node:
            changed |= walk(item, examples, label)
    return changed


def main():
    runs, examples, label = sys.argv[1:4]
    examples = os.path.realpath(examples)
    for root, _, files in os.walk(runs):
        for name in files:
            if not name.endswith(".json"):
                continue
            path = os.path.join(root, name)
            try:
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
            except (ValueError, UnicodeDecodeError):
                continue
            if walk(doc, examples, label):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(doc, f, indent=2)
                    f.write("\n")


if __name__ == "__main__":
    main()
