#!/usr/bin/env python3
"""Keeps H200 run records xz-compressed (issue 39: the tracked tree is mostly run records).

A record becomes NAME.json.xz beside where it was written; the harness reads it by its written name
(harness/report/results.rs, `read_text`), so do tools/pins.py and tools/suite_cost.py, tests that walk the archive
read it through the compression, and `xz -dk NAME.json.xz` gives the file back. Left as plain JSON: the two newest
runs of each suite with at least half as many trials as its largest (the whole-suite runs a reviewer, or the
before-stop check, reads first). With --old-rule, also the runs at the top of results/h200/ and every run named
anywhere in the code, pins, tools, docs or hypotheses (what this tool kept before those readers took .xz).

Usage, from the repository root: python3 tools/archive-results.py [--dry-run] [--most-mb N] [--old-rule]
--most-mb caps the megabytes of JSON compressed in one go (a submission's diffs count what a change removes); the
top-level runs go first. Then `git add -A results` and commit.
"""
import argparse
import glob
import json
import lzma
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READERS = ["pins", "tools", "harness", "ablations", "microbench", "calibration", "docs", "hypotheses", "README.md",
           "results/h200/README.md"]


def named_anywhere():
    """All the text of the files that may name a run."""
    files = subprocess.run(["git", "ls-files", *READERS], cwd=ROOT, capture_output=True, text=True).stdout.split()
    text = []
    for f in files:
        if f.endswith((".rs", ".py", ".sh", ".md", ".json", ".toml", ".txt")):
            with open(os.path.join(ROOT, f), errors="replace") as fh:
                text.append(fh.read())
    return "\n".join(text)


def runs():
    """Every run record under results/, with its suite, commit, date and trial names."""
    found = {}
    for f in glob.glob(os.path.join(ROOT, "results", "**", "*.json"), recursive=True):
        try:
            with open(f) as fh:
                d = json.load(fh)
        except (ValueError, OSError):
            continue
        if isinstance(d, dict) and isinstance(d.get("trials"), list):
            env = d.get("environment") or {}
            names = {t.get("name") for t in d["trials"] if isinstance(t, dict)}
            found[f] = (d.get("suite", "?"), str(env.get("commit", ""))[:9], str(env.get("date", "")), names)
    return found


def kept_plain(records):
    """The files of the two newest big runs of each suite (a run may be several shard files of one commit)."""
    groups = {}
    for f, (suite, commit, date, names) in records.items():
        g = groups.setdefault((suite, commit), {"files": [], "names": set(), "date": ""})
        g["files"].append(f)
        g["names"] |= names
        g["date"] = max(g["date"], date)
    keep = set()
    for suite in {k[0] for k in groups}:
        mine = [g for k, g in groups.items() if k[0] == suite]
        most = max(len(g["names"]) for g in mine)
        big = sorted((g for g in mine if len(g["names"]) >= 0.5 * most), key=lambda g: g["date"], reverse=True)
        for g in big[:2]:
            keep.update(g["files"])
    return keep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--most-mb", type=float, default=100.0)
    ap.add_argument("--old-rule", action="store_true")
    args = ap.parse_args()
    records = runs()
    keep = kept_plain(records)
    named = named_anywhere() if args.old_rule else ""
    top = os.path.join(ROOT, "results", "h200")
    chosen, total = [], 0
    at_top = lambda f: os.sep not in os.path.relpath(f, top)
    for f in sorted(records, key=lambda f: (not at_top(f), -os.path.getsize(f))):
        rel = os.path.relpath(f, top)
        stem = os.path.basename(f)[: -len(".json")]
        if f in keep or (args.old_rule and (at_top(f) or stem in named or rel in named)):
            continue
        size = os.path.getsize(f)
        if total + size > args.most_mb * 1e6:
            continue
        chosen.append(f)
        total += size
    print(f"{len(chosen)} records, {total / 1e6:.1f} MB of JSON to compress" + (" (dry run)" if args.dry_run else ""))
    if args.dry_run:
        return
    packed = 0
    for f in chosen:
        with open(f, "rb") as fh:
            data = lzma.compress(fh.read(), preset=9)
        with open(f + ".xz", "wb") as fh:
            fh.write(data)
        packed += len(data)
        os.remove(f)
    print(f"written as {packed / 1e6:.1f} MB of .json.xz")


if __name__ == "__main__":
    main()
