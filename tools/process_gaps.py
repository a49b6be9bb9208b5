#!/usr/bin/env python3
"""Which trials' processes fall into separate groups (H142's two-state signature), from records where each
comparison ran in one process (f66c017's agreement sweeps) or over worker processes.

For each trial seen in at least 5 processes: the processes' mean log ratios sorted, the widest gap between two
neighbours, and that gap over the typical standard error of one process's mean (its rounds' sd over sqrt(rounds)).
A gap many times the standard error says the processes ran in discrete states, as placement makes them (H141-H148).
sd/se, the processes' standard deviation over the root mean square of their standard errors, says whether they
differ by more than their own rounds allow at all (near 1: no; H152 read a noisy pair's span without it).

Usage: python3 tools/process_gaps.py [--under WORD] ARCHIVE.tar.xz|DIR [...]   (prints the 20 widest, gap/se
first; --under keeps only records below a folder of that name, such as one arm of tools/h100-two-state.sh)
"""
import glob
import json
import math
import os
import statistics
import sys
import tarfile
import tempfile


def processes(trial):
    """Per worker process of one comparison: (mean log ratio, its standard error), set-aside rounds left out."""
    groups = {}
    for r in trial["comparison"]["rounds"]:
        if not r.get("set_aside"):
            groups.setdefault(r.get("process", 0), []).append(sum(r["log_ratios"]) / len(r["log_ratios"]))
    out = []
    for lrs in groups.values():
        se = statistics.stdev(lrs) / math.sqrt(len(lrs)) if len(lrs) > 1 else float("nan")
        out.append((sum(lrs) / len(lrs), se))
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    args = sys.argv[1:]
    under = None
    if args[:1] == ["--under"] and len(args) > 2:
        under, args = args[1], args[2:]
    per = {}
    for src in args:
        if os.path.isfile(src):
            tmp = tempfile.mkdtemp()
            tarfile.open(src).extractall(tmp)
            src = tmp
        for path in glob.glob(os.path.join(src, "**", "*.json"), recursive=True):
            if under and under not in os.path.relpath(path, src).split(os.sep)[:-1]:
                continue
            try:
                with open(path) as f:
                    run = json.load(f)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            for t in run.get("trials", []) if isinstance(run, dict) else []:
                if t.get("comparison") and t["comparison"].get("rounds"):
                    per.setdefault(t["name"], []).extend(processes(t))
    rows = []
    for name, ps in per.items():
        ses = [se for _, se in ps if not math.isnan(se)]
        if len(ps) < 5 or not ses:
            continue
        means = sorted(m for m, _ in ps)
        gap = max(b - a for a, b in zip(means, means[1:]))
        se = max(statistics.median(ses), 1e-6)
        sd_over_se = statistics.stdev(means) / max(math.sqrt(sum(e * e for e in ses) / len(ses)), 1e-6)
        rows.append((gap / se, name, len(ps), means[-1] - means[0], gap, se, sd_over_se))
    rows.sort(reverse=True)
    print("gap/se  sd/se  trial  processes  range  widest gap  se (log ratio, %)")
    for ratio, name, n, spread, gap, se, sd_over_se in rows[:20]:
        print(f"{ratio:6.1f}  {sd_over_se:5.1f}  {name}  {n}  {100 * spread:.2f}  {100 * gap:.2f}  {100 * se:.3f}")


if __name__ == "__main__":
    main()
