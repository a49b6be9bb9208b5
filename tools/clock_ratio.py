#!/usr/bin/env python3
"""Does a pinned ratio follow the SM clock its comparison settled at? Under the H200's power cap the clock a pair
runs at moves between machine starts (prefill_mlp_up's comparisons: 1050-1410 MHz over the whole suites), and where
the two kernels draw different power, their ratio moves with it (c1c2b83's red, `ablation::pingpong::prefill_mlp_up`
at 1065 MHz). For every trial with a ratio in at least MIN_RUNS whole suites (results/h200/*/suite/runs), it fits
log(ratio) = a + b (clock - mean) and prints the correlation and the slope; with --hold-out COMMIT it selects the
trials on the other runs alone (|r| >= 0.9 there), then predicts the held-out run's ratio from its clock and says
how far off the prediction lands, in the fit's residual sd (a test of the model on a run that did not build it).

Usage, from the repository root: python3 tools/clock_ratio.py [--hold-out COMMIT] [--min-runs N] [--top K]
"""
import argparse
import collections
import glob
import json
import lzma
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pins import line_fit  # noqa: E402  (one line fit for the distiller and this reading)


def suite_ratios():
    """trial -> [(commit, clock MHz, ratio)] over the whole-suite ablations records."""
    out = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(ROOT, "results/h200/*/suite/runs/ablations-*.json*"))):
        if path.endswith(".summary.json"):
            continue
        commit = os.path.relpath(path, ROOT).split(os.sep)[2]
        opener = lzma.open if path.endswith(".xz") else open
        with opener(path, "rt") as f:
            run = json.load(f)
        for trial in run["trials"]:
            comparison = trial.get("comparison") or {}
            ratio = (comparison.get("estimate") or {}).get("ratio")
            clock = comparison.get("sm_clock_median_mhz")
            if ratio and clock:
                out[trial["name"]].append((commit, clock, ratio))
    return out


def fit(points):
    """(r, slope of log ratio per MHz, intercept at mean clock, mean clock, residual sd) or None, by pins.py's
    line_fit."""
    line = line_fit([(p[1], math.log(p[2])) for p in points])
    if not line:
        return None
    mk, ml, slope, r, sd = line
    return r, slope, ml, mk, sd


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hold-out", help="a whole suite's commit folder, predicted from the others")
    parser.add_argument("--min-runs", type=int, default=6)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    data = suite_ratios()
    rows = []
    for name, points in data.items():
        kept = [p for p in points if p[0] != args.hold_out]
        if len(kept) < args.min_runs:
            continue
        f = fit(kept)
        if f:
            rows.append((name, kept, f, [p for p in points if p[0] == args.hold_out]))
    strong = [row for row in rows if abs(row[2][0]) >= 0.9]
    print(f"{len(rows)} trials in at least {args.min_runs} whole suites"
          + (f" besides {args.hold_out}" if args.hold_out else "")
          + f"; |r| >= 0.9 between log ratio and clock: {len(strong)}, >= 0.8: "
          + str(sum(1 for row in rows if abs(row[2][0]) >= 0.8)))
    for name, kept, (r, slope, ml, mk, sd), held in sorted(rows, key=lambda row: -abs(row[2][0]))[: args.top]:
        clocks = [p[1] for p in kept]
        line = (f"  r {r:+.2f}  {100 * slope * 100:+.2f}% per 100 MHz  residual sd {100 * sd:.2f}%  "
                f"{len(kept)} runs at {min(clocks):.0f}-{max(clocks):.0f} MHz  {name}")
        for commit, clock, ratio in held:
            predicted = math.exp(ml + slope * (clock - mk))
            off = (math.log(ratio) - math.log(predicted)) / sd if sd > 0 else float("nan")
            line += f"\n      {commit} at {clock:.0f} MHz: read {ratio:.4f}, predicted {predicted:.4f} ({off:+.1f} residual sd)"
        print(line)
    if args.hold_out:
        judged = [(row, held) for row in strong for held in row[3]]
        within = sum(
            1 for (name, kept, (r, slope, ml, mk, sd), _), (c, clock, ratio) in judged
            if abs(math.log(ratio) - (ml + slope * (clock - mk))) <= 3.5 * sd
        )
        print(f"held-out {args.hold_out}: {within} of {len(judged)} strong trials' ratios within 3.5 residual sd of "
              "the prediction from their clock")


if __name__ == "__main__":
    main()
