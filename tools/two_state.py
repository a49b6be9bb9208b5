#!/usr/bin/env python3
"""H141 (ablations/HYPOTHESES.md): which of the two states each round of each worker process ran in.

Reads the records of tools/h100-two-state.sh (or a calibration run) and, per arm, prints each comparison's
processes as strings of round states ('H' where the round's mean log ratio is above THRESHOLD, 'L' below), then
how many processes ran rounds of both states and the share of 'H' rounds.

Usage: python3 tools/two_state.py two-state.tgz|DIR [THRESHOLD [NAME_PART]]   (default 0.01: midway between the H100's two
states of the multicast pair, log ratios -0.024 and +0.043)
"""
import glob
import json
import lzma
import os
import sys
import tarfile
import tempfile

def by_process(trial):
    """The comparison's rounds grouped by the worker process they ran in (a record leaves out `process` 0)."""
    groups = {}
    for r in trial["comparison"]["rounds"]:
        groups.setdefault(r.get("process", 0), []).append(r)
    return [groups[p] for p in sorted(groups)]


def process_states(trial, threshold):
    return [
        "".join("H" if sum(r["log_ratios"]) / len(r["log_ratios"]) > threshold else "L" for r in rounds)
        for rounds in by_process(trial)
    ]


def process_maps(trial, side):
    """Per process, the distinct CTA-to-SM maps of one side (0 baseline, 1 candidate) over its rounds, each as a
    short name: place_probe=1 records (H142); none where the kernel did not record them."""
    names = []
    for rounds in by_process(trial):
        maps = {tuple(r["placement"][side]) for r in rounds if r.get("placement")}
        names.append(sorted(MAPS.setdefault(m, f"m{len(MAPS)}") for m in maps if m))
    return names


MAPS = {}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    src, threshold = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.01
    part = sys.argv[3] if len(sys.argv) > 3 else "multicast"
    if os.path.isfile(src):
        tmp = tempfile.mkdtemp()
        tarfile.open(src).extractall(tmp)
        src = tmp
    files = sorted(
        f
        for pattern in ("*.json", "*.json.xz")
        for f in glob.glob(os.path.join(src, "**", pattern), recursive=True)
        if not f.endswith(".summary.json")
    )
    by_arm = {}
    for path in files:
        with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
            run = json.load(f)
        arm = os.path.basename(os.path.dirname(path))
        for t in run.get("trials", []):
            if part in t["name"] and t.get("comparison") and t["comparison"].get("rounds"):
                by_arm.setdefault(arm, []).append(
                    (t["name"], process_states(t, threshold), process_maps(t, 0), process_maps(t, 1))
                )
    for arm, comparisons in by_arm.items():
        procs = [p for _, ps, _, _ in comparisons for p in ps]
        mixed = sum(1 for p in procs if "H" in p and "L" in p)
        rounds = "".join(procs)
        print(f"{arm}: {len(comparisons)} comparisons, {len(procs)} processes, {mixed} with rounds of both states, "
              f"{rounds.count('H')} of {len(rounds)} rounds H")
        seen = {}
        for name, ps, base_maps, cand_maps in comparisons:
            print(f"  {name}: {' '.join(ps)}")
            for p, bm, cm in zip(ps, base_maps, cand_maps):
                if bm or cm:
                    print(f"    {p}: baseline maps {','.join(bm)}, candidate maps {','.join(cm)}")
                for m in bm:
                    seen.setdefault(m, set()).update(set(p))
        for m, states in sorted(seen.items()):
            idle = "?"
            for full, short in MAPS.items():
                if short == m:
                    idle = len(set(full))
            print(f"  baseline map {m}: states {''.join(sorted(states))}, {idle} distinct SMs")


if __name__ == "__main__":
    main()
