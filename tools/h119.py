#!/usr/bin/env python3
"""H119's judgement (ablations/HYPOTHESES.md), from the records of a whole suite run with kept worker processes
(GEMM_ABLATE_WORKERS=kept), each clause against the numbers written before the run:

  (a) the "gpu opened" mark under 0.05 s in every worker but the first of each kept process, and the suite's trials
      taking 14-16.5 minutes;
  (b) the between-process spread refitted from its comparisons of two or more processes (tools/suite_prior.py)
      within 0.11-0.22% for ours and 0.18-0.37% against cuBLAS, and 1.9-2.5 processes a comparison; where a spread
      falls under its range, the decider is agreement with 1d1f9c2's fresh processes: intervals overlapping in at
      least 95% of the trials both runs share (`gemm-ablate agree`).

It prints each clause and exits 0 only if H119 holds. It writes nothing: `kept` becomes the default in its own
commit, naming the run.

Usage, from the repository root, with the release binary built:
  python3 tools/h119.py KEPT_RUN.json[.xz]...
"""
import glob
import json
import lzma
import re
import subprocess
import sys

FRESH_RUNS = "results/h200/1d1f9c2/suite/runs/ablations-*.json.xz"
MINUTES = (14.0, 16.5)
REUSED_OPEN_S = 0.05
SPREAD = {"ours": (0.11, 0.22), "cublas": (0.18, 0.37)}
PROCESSES = (1.9, 2.5)
OVERLAP = 0.95


def load(path):
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
        return json.load(f)


def workers_and_time(paths):
    """Trial seconds in all, comparisons' processes, and each worker's 'gpu opened' mark."""
    total, processes, comparisons, opened = 0.0, 0, 0, []
    for path in paths:
        for t in load(path).get("trials", []):
            total += t.get("duration_s") or 0.0
            for label, at in t.get("phases", []):
                if label.endswith("gpu opened"):
                    opened.append(at)
            c = t.get("comparison")
            if c:
                comparisons += 1
                processes += c["estimate"].get("looks", 1) if c["estimate"].get("processes") else 1
    return total, processes / max(comparisons, 1), opened


def refit(paths):
    out = subprocess.run(
        [sys.executable, "tools/suite_prior.py", *paths], capture_output=True, text=True, check=True
    ).stdout
    return {kind: float(sd) for kind, sd in re.findall(r"^(\w+): .*? sd ([0-9.]+)%", out, re.M)}, out


def agreement(kept_ablations):
    out = subprocess.run(
        ["target/release/gemm-ablate", "agree", *sorted(glob.glob(FRESH_RUNS)), *kept_ablations],
        capture_output=True,
        text=True,
    ).stdout
    m = re.search(r"(\d+) trials: verdicts agree in (\d+), intervals overlap in (\d+)", out)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def main(paths):
    if not paths:
        sys.exit(__doc__)
    held = True

    def clause(ok, text):
        nonlocal held
        held &= ok
        print(f"{'holds ' if ok else 'FAILS '} {text}")

    total, per_comparison, opened = workers_and_time(paths)
    reused = [at for at in opened if at < REUSED_OPEN_S]
    fresh = len(opened) - len(reused)
    minutes = total / 60
    clause(len(reused) > 0, f"(a) {len(reused)} of {len(opened)} workers found their kept process's GPU open"
           f" (under {REUSED_OPEN_S} s); {fresh} opened it")
    clause(MINUTES[0] <= minutes <= MINUTES[1], f"(a) {minutes:.1f} minutes of trials (expected {MINUTES[0]}-{MINUTES[1]})")
    clause(PROCESSES[0] <= per_comparison <= PROCESSES[1],
           f"(b) {per_comparison:.2f} processes a comparison (expected {PROCESSES[0]}-{PROCESSES[1]})")
    spreads, text = refit(paths)
    print("    " + text.strip().replace("\n", "\n    "))
    under = False
    for kind, (low, high) in SPREAD.items():
        sd = spreads.get(kind)
        if sd is None:
            clause(False, f"(b) no refit for {kind}")
        elif sd > high:
            clause(False, f"(b) {kind}: spread {sd:.3f}% over the {low}-{high}% expected")
        elif sd < low:
            under = True
            print(f"under  (b) {kind}: spread {sd:.3f}% under {low}%: agreement with fresh processes decides")
        else:
            clause(True, f"(b) {kind}: spread {sd:.3f}% within {low}-{high}%")
    kept_ablations = [p for p in paths if "/ablations-" in p or p.split("/")[-1].startswith("ablations-")]
    shared = agreement(kept_ablations)
    if shared is None:
        clause(not under, "(b) no agreement with 1d1f9c2 could be read (is target/release/gemm-ablate built?)")
    else:
        n, verdicts, overlap = shared
        text = (f"(b) against 1d1f9c2's fresh processes: intervals overlap in {overlap} of {n} trials "
                f"({overlap / max(n, 1):.1%}; at least {OVERLAP:.0%}), verdicts agree in {verdicts}")
        if under:
            clause(overlap >= OVERLAP * n, text)
        else:
            print(f"       {text}")
    print("H119 holds" if held else "H119 does not hold: kept workers stay off")
    sys.exit(0 if held else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
