#!/usr/bin/env python3
"""Committed whole-suite runs judged against the pins as they stand now (pins/h200.json), as the suite would judge
them (harness/trial/expect.rs `ratio_near`: the estimate inside the window and the interval's half-width within
the tolerance; `EffectNear` also keeps the effect's side; `RatioAtClock` is judged on its window at the
comparison's own median SM clock, H157). A trial whose pin the run helped build is not judged;
a trial whose expectation is a hypothesis keeps the verdict the run gave it. With kernels unchanged between the
runs, every red is a false red: the count per run is the measured rate issue 37 asks to keep under 0.5. Writes
nothing.

Usage, from the repository root: python3 tools/replay_pins.py [--margins] COMMIT... (each
results/h200/COMMIT/suite/runs/). --margins also prints how much of its window's half-width each judged ratio
used (how near a run sat to going red: H132).
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


BAND = 0.02


def window_at_clock(want, clock):
    """A RatioAtClock pin's (ratio, tolerance) at the comparison's clock, cut at the band's edge where it would
    hold the whole band (harness/trial/expectation.rs `window_at_clock`)."""
    centre = want["ratio"] * math.exp(want["slope"] * (clock - want["mhz"]))
    lo, hi = centre / (1 + want["tolerance"]), centre * (1 + want["tolerance"])
    if lo <= 1 / (1 + BAND) and hi >= 1 + BAND:
        if centre >= 1:
            lo = 1 / (1 + BAND)
        else:
            hi = 1 + BAND
    middle = math.sqrt(lo * hi)
    return middle, hi / middle - 1


def judge(pin, estimate, clock=None):
    kind, want = next(iter(pin["expect"].items()))
    if kind == "RatioAtClock":
        if not clock:
            return False, 0.0, "no SM clock in the record"
        ratio, tol = window_at_clock(want, clock)
    else:
        ratio, tol = want["ratio"], want["tolerance"]
    lo, hi = ratio / (1 + tol), ratio * (1 + tol)
    lo_ci, hi_ci = estimate["ci"]
    ok = lo <= estimate["ratio"] <= hi and math.log(hi_ci / lo_ci) / 2 <= math.log1p(tol)
    if kind == "EffectNear":
        ok = ok and (hi_ci < 1 if ratio < 1 else lo_ci > 1)
    used = abs(math.log(estimate["ratio"] / ratio)) / math.log1p(tol)
    return ok, used, f"{estimate['ratio']:.4f} [{lo_ci:.4f}, {hi_ci:.4f}] against [{lo:.4f}, {hi:.4f}]"


def main():
    margins = "--margins" in sys.argv
    commits = [a for a in sys.argv[1:] if a != "--margins"]
    if not commits:
        sys.exit(__doc__)
    pins = {p["trial"]: p for p in load(os.path.join(ROOT, "pins", "h200.json"))["pins"]}
    for commit in commits:
        paths = sorted(glob.glob(os.path.join(ROOT, "results", "h200", commit, "suite", "runs", "*.json*")))
        judged, reds, skipped, used = 0, [], 0, []
        for path in paths:
            if "summary" in path:
                continue
            name = os.path.relpath(path, os.path.join(ROOT, "results", "h200")).split(".json")[0]
            for t in load(path)["trials"]:
                pin, c = pins.get(t["name"]), t.get("comparison")
                if pin and name in pin["runs"]:
                    skipped += 1
                    continue
                if pin and "expect" in pin and next(iter(pin["expect"])) in ("RatioNear", "EffectNear",
                                                                               "RatioAtClock"):
                    if not c or "estimate" not in c:
                        continue
                    ok, u, seen = judge(pin, c["estimate"], c.get("sm_clock_median_mhz"))
                    used.append((u, t["name"]))
                elif isinstance(t["expectation"]["source"], dict) and "Hypothesis" in t["expectation"]["source"]:
                    ok, seen = t["passed"], "its hypothesis, as the run judged it"
                else:
                    continue
                judged += 1
                if not ok:
                    reds.append(f"{t['name']}: {seen}")
        print(f"{commit}: {len(reds)} red of {judged} judged ({skipped} left out: the run built their pin)")
        for r in reds:
            print(f"    {r}")
        if margins and used:
            used.sort(reverse=True)
            print(f"    of {len(used)} pinned ratios, {sum(u > 0.8 for u, _ in used)} used more than 0.8 of their "
                  f"window's half-width, {sum(u > 0.6 for u, _ in used)} more than 0.6; the nearest: "
                  + ", ".join(f"{n} {u:.2f}" for u, n in used[:3]))


if __name__ == "__main__":
    main()
