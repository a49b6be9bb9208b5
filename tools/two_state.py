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
import os
import sys
import tarfile
import tempfile

ROUNDS_PER_PROCESS = 4  # GEMM_ABLATE_ROUNDS_PER_PROCESS's default: a worker's rounds follow one another


def process_states(trial, threshold):
    rounds = trial["comparison"]["rounds"]
    states = ["H" if sum(r["log_ratios"]) / len(r["log_ratios"]) > threshold else "L" for r in rounds]
    return ["".join(states[i : i + ROUNDS_PER_PROCESS]) for i in range(0, len(states), ROUNDS_PER_PROCESS)]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    src, threshold = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.01
    part = sys.argv[3] if len(sys.argv) > 3 else "multicast"
    if os.path.isfile(src):
        tmp = tempfile.mkdtemp()
        tarfile.open(src).extractall(tmp)
        src = tmp
    files = sorted(glob.glob(os.path.join(src, "**", "*.json"), recursive=True))
    by_arm = {}
    for path in files:
        with open(path) as f:
            run = json.load(f)
        arm = os.path.basename(os.path.dirname(path))
        for t in run.get("trials", []):
            if part in t["name"] and t.get("comparison") and t["comparison"].get("rounds"):
                by_arm.setdefault(arm, []).append((t["name"], process_states(t, threshold)))
    for arm, comparisons in by_arm.items():
        procs = [p for _, ps in comparisons for p in ps]
        mixed = sum(1 for p in procs if "H" in p and "L" in p)
        rounds = "".join(procs)
        print(f"{arm}: {len(comparisons)} comparisons, {len(procs)} processes, {mixed} with rounds of both states, "
              f"{rounds.count('H')} of {len(rounds)} rounds H")
        for name, ps in comparisons:
            print(f"  {name}: {' '.join(ps)}")


if __name__ == "__main__":
    main()
