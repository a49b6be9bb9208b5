#!/usr/bin/env python3
"""What the pins would say if each were built from every committed whole suite of the same kernels, not four runs
(issue 37, ablations/HYPOTHESES.md H137). Writes nothing.

For each pinned ratio trial of the ablations suite (ours against ours, or against cuBLAS on its committed path), the
log ratios of every committed whole-suite run (tools/pins.py's PIN_RUNS and every results/h200/*/suite/runs) that
timed the same variants as the reference run; then, by pins.py's window rule (Z * max(s, kind's sd) * sqrt(1 +
1/n)): a leave-one-run-out count over all of them, the windows' half-widths against the pins' now, and the
reference run judged by pins built from every other run.

Usage, from the repository root: python3 tools/pins_from_all_runs.py [REFERENCE_COMMIT, default 9d9b4bb]
"""
import glob
import json
import lzma
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pins as P  # noqa: E402

H200 = P.H200
KIND_SD = {"ours": 0.0071, "cublas": 0.0141}


def load(path):
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
        return json.load(f)


def runs():
    """Run name -> {trial name: record}: the pin runs by their names, then every commit's suite/runs."""
    groups = {name: [os.path.join(H200, f) for f in files] for name, files in P.PIN_RUNS["ablations"]}
    for folder in sorted(glob.glob(os.path.join(H200, "*", "suite", "runs"))):
        commit = folder.split(os.sep)[-3]
        files = sorted(glob.glob(os.path.join(folder, "ablations-*.json*")))
        if files and commit not in groups:
            groups[commit] = [f.rsplit(".json", 1)[0] for f in files]
    out = {}
    for name, stems in groups.items():
        trials = {}
        for stem in stems:
            path = stem + ".json" if os.path.exists(stem + ".json") else stem + ".json.xz"
            for t in load(path)["trials"]:
                trials[t["name"]] = t
        out[name] = trials
    return out


def log_ratio(t):
    estimate = (t.get("comparison") or {}).get("estimate") or {}
    return math.log(estimate["ratio"]) if estimate.get("ratio") else None


def window(xs, floor):
    """pins.py's window rule: (centre, half-width) of one more run's log ratio."""
    m, half_width, _ = P.window(xs, floor)
    return m, half_width


def main():
    reference = sys.argv[1] if len(sys.argv) > 1 else "9d9b4bb"
    every = runs()
    ref = every[reference]
    env = load(glob.glob(os.path.join(H200, reference, "suite", "runs", "ablations-*.json*"))[0])["environment"]
    paths = P.committed_paths(env)
    with open(os.path.join(os.path.dirname(H200), "..", "pins", "h200.json")) as f:
        pins = {p["trial"]: p for p in json.load(f)["pins"]}
    for kind, floor in KIND_SD.items():
        rows = {}
        for name, pin in pins.items():
            expect = pin["expect"].get("RatioNear") or pin["expect"].get("EffectNear")
            t = ref.get(name)
            if not expect or not t or (P.cublas_label(t) is not None) != (kind == "cublas"):
                continue
            want = paths.get(P.shape_key(t), P.HEURISTIC) if kind == "cublas" else None
            xs = [(run, log_ratio(r)) for run, trials in every.items() if (r := trials.get(name))
                  and P.own_labels(r) == P.own_labels(t) and log_ratio(r) is not None
                  and (want is None or P.cublas_label(r) == want)]
            if len(xs) >= 5:
                rows[name] = (xs, expect["tolerance"])
        judged = red = 0
        for xs, _ in rows.values():
            for i, (_, x) in enumerate(xs):
                m, hw = window([y for j, (_, y) in enumerate(xs) if j != i], floor)
                judged += 1
                red += abs(x - m) > hw
        widths, now, ref_red, ref_judged = [], [], [], 0
        for name, (xs, tolerance) in rows.items():
            others = [y for run, y in xs if run != reference]
            m, hw = window(others, floor)
            widths.append(math.exp(hw) - 1)
            now.append(tolerance)
            for run, y in xs:
                if run == reference:
                    ref_judged += 1
                    if abs(y - m) > hw:
                        ref_red.append(f"{name} {math.exp(y):.4f} against {math.exp(m):.4f} +-{100 * hw:.1f}%")
        counts = sorted(len(xs) for xs, _ in rows.values())
        pooled = [(x - statistics.mean(y for _, y in xs)) ** 2 for xs, _ in rows.values() for _, x in xs]
        df = sum(len(xs) - 1 for xs, _ in rows.values())
        pct = lambda v, q: 100 * sorted(v)[int(q * len(v))]  # noqa: E731
        print(f"{kind}: {len(rows)} pinned trials with 5 or more runs of the same variants (median "
              f"{counts[len(counts) // 2]} runs), {judged} ratios; pooled between-run sd "
              f"{100 * math.sqrt(sum(pooled) / df):.2f}% ({df} df)")
        print(f"  leave one run out over all runs: {red} red of {judged}")
        print(f"  half-widths from every run but {reference}: median {100 * statistics.median(widths):.1f}% "
              f"(90th percentile {pct(widths, 0.9):.1f}%); the pins now {100 * statistics.median(now):.1f}% "
              f"({pct(now, 0.9):.1f}%)")
        print(f"  {reference} judged by them: {len(ref_red)} red of {ref_judged}")
        for r in ref_red:
            print("    " + r)


main()
