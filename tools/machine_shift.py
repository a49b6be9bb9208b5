#!/usr/bin/env python3
"""Which pinned ratios move with the machine: each RatioNear pin's held-out runs (commits named on the command
line, each `results/h200/COMMIT/suite/runs/`) in two groups, A and B, and the trials whose runs in B all sit on one
side of every run in A by more than the kind's pooled between-run sd (pins/h200.json), with each run's time of
both sides so that one can see which kernel moved. A group is a claim about machines (their GPU UUIDs, printed):
the kernels are the same cubins in every run compared (tools/cubin-identity.sh), so a trial that splits by group
points at the machine, not the code. Writes nothing.

Usage, from the repository root: python3 tools/machine_shift.py A1,A2,.. B1,B2,..
"""
import glob
import json
import lzma
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
        return json.load(f)


def runs_of(commit):
    """trial -> (ratio, baseline us, candidate us, uuid) over the commit's suite records."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "results", "h200", commit, "suite", "runs", "*.json*"))):
        if "summary" in path:
            continue
        record = load(path)
        uuid = (record["environment"].get("device") or {}).get("uuid") or "no UUID recorded"
        for t in record["trials"]:
            c = t.get("comparison")
            if c and "estimate" in c:
                out[t["name"]] = (c["estimate"]["ratio"], c["baseline_median_us"], c["candidate_median_us"], uuid)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    groups = [a.split(",") for a in sys.argv[1:]]
    pin_file = load(os.path.join(ROOT, "pins", "h200.json"))
    pins = {p["trial"]: p for p in pin_file["pins"]}
    kind_sd = {k: v["sd"] for k, v in pin_file["spreads"].items()}
    data = {c: runs_of(c) for g in groups for c in g}
    for g in groups:
        print("group", ", ".join(f"{c} ({sorted({v[3] for v in data[c].values()})[0][:12]})" for c in g))
    split = 0
    for name, pin in sorted(pins.items()):
        if "RatioNear" not in pin["expect"]:
            continue
        kind = "cublas" if pin.get("cublas_path") else "ours"
        sides = [[math.log(data[c][name][0]) for c in g if name in data[c]] for g in groups]
        if min(map(len, sides)) < 1 or sum(map(len, sides)) < 3:
            continue
        a, b = sides
        gap = min(b) - max(a) if min(b) > max(a) else (min(a) - max(b) if min(a) > max(b) else 0.0)
        if gap > kind_sd[kind]:
            split += 1
            p = pin["expect"]["RatioNear"]
            print(f"{name} ({kind}, pin {p['ratio']:.4f} +-{100 * p['tolerance']:.1f}%):")
            for g in groups:
                for c in g:
                    if name in data[c]:
                        r, base, cand, _ = data[c][name]
                        print(f"    {c}: {r:.4f} (baseline {base:.1f} us, candidate {cand:.1f} us)")
    print(f"{split} pinned ratios split by group by more than their kind's between-run sd")


if __name__ == "__main__":
    main()
