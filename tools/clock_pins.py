#!/usr/bin/env python3
"""The clock trials' ratio windows, rebuilt from the whole suites run since sustained runs went back to back
(ec208d9: the card under its power cap for the whole clock trial, H135, H140; ablations/HYPOTHESES.md H154).

Each `clock::*` sustain trial checks probed-clock and cycle ratios of one kernel over another, twice (two passes).
Before H154 their windows came from one run each (the pre-cap 89ac068 and 2026-12-01 runs, or 9d9b4bb alone with
a pre-cap width), and three post-cap whole suites in a row each left one or two of them. Here a window is drawn
the way tools/pins.py draws a ratio's, on logs: the centre is the mean of the runs' means, s the standard deviation
of every pass of every run (between runs and between passes together, since each pass is judged alone), never under
the `ours` pooled sd of pins/h200.json, and the half-width Z * s * sqrt(1 + 1/n) with n the number of runs.
Only the probed-clock ratios are rebuilt: the cap moves clocks, not cycles (H135), and every cycles check held in
all three runs, so they stand as they were (printed here, leave one out, for comparison); so do absolute checks.

Usage, from the repository root:
  python3 tools/clock_pins.py            # each window from all POST_CAP runs, and each run judged against the
                                         # window the others build (leave one run out)
  python3 tools/clock_pins.py --write    # the windows into pins/h200.json (a commit of its own, naming the cause)
  python3 tools/clock_pins.py --verify   # exit 1 unless pins/h200.json holds these windows (CI runs it)
"""
import glob
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pins import H200, Z, one_start_rule, read_run  # noqa: E402  (one Z for every window; one start rule for every pin)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PINS = os.path.join(ROOT, "pins", "h200.json")
# The whole suites on the H200 since ec208d9, in order. Add a run here only before it is judged.
POST_CAP = ["9d9b4bb", "9358f28", "f50fcec"]
TRIALS = [
    "clock::mma_only::square4096",
    "clock::mma_only::decode_attn_out",
    "clock::wide_tile::prefill_attn_out",
    "clock::multicast::decode_attn_out",
]
FIGURE = {"probed clock": "ProbedMhz", "cycles": "Cycles"}
CHECK = re.compile(
    r"(probed clock|cycles) of (\S+) over (\S+)'s in \[[^\]]*\]: ([0-9.]+), ([0-9.]+) \((?:holds|DOES NOT hold)\)"
)


def run_name(commit):
    """The run's one microbench record, named as the pin file names runs (results/h200/NAME.json[.xz])."""
    paths = [p for p in sorted(glob.glob(f"{H200}/{commit}/suite/runs/microbench-*.json*"))
             if not p.endswith(".summary.json")]
    if len(paths) != 1:
        sys.exit(f"{commit}: expected one microbench record, found {len(paths)}")
    return os.path.relpath(paths[0], H200).split(".json")[0]


def record(commit):
    return read_run(run_name(commit))


def passes(commit):
    """(trial, figure, variant, over) -> the two passes' ratios in this run's microbench record."""
    trials = record(commit)["trials"]
    out = {}
    for t in trials:
        if t["name"] in TRIALS:
            for figure, variant, over, a, b in CHECK.findall(t.get("judgement", "")):
                out[(t["name"], FIGURE[figure], variant, over)] = (float(a), float(b))
    return out


def window(per_run, floor):
    """(low, high, s) for one more pass, from each run's passes (see the module's text)."""
    logs = [[math.log(x) for x in r] for r in per_run]
    centre = statistics.mean(statistics.mean(r) for r in logs)
    s = max(statistics.stdev([x for r in logs for x in r]), floor)
    half = Z * s * math.sqrt(1 + 1 / len(per_run))
    return math.exp(centre - half), math.exp(centre + half), s


def main():
    write = "--write" in sys.argv
    with open(PINS) as f:
        pins = json.load(f)
    floor = pins["spreads"]["ours"]["sd"]
    one_start_rule([(c, record(c)["environment"]) for c in POST_CAP])
    seen = {c: passes(c) for c in POST_CAP}
    keys = sorted(set().union(*seen.values()))
    windows = {}
    for key in keys:
        runs = [c for c in POST_CAP if key in seen[c]]
        lo, hi, s = window([seen[c][key] for c in runs], floor)
        windows[key] = (lo, hi, s, runs)
        print(f"{key[0]} {key[1]} of {key[2]}: [{lo:.4f}, {hi:.4f}] (s {100 * s:.2f}%, {len(runs)} runs)")
        for j, c in enumerate(runs):
            others = runs[:j] + runs[j + 1:]
            if len(others) >= 2:
                olo, ohi, _ = window([seen[o][key] for o in others], floor)
                verdict = "in" if all(olo <= x <= ohi for x in seen[c][key]) else "OUT"
                print(f"    leave {c} out: [{olo:.4f}, {ohi:.4f}]; {c} read {seen[c][key]}: {verdict}")
    if "--verify" in sys.argv:
        stale = []
        for pin in pins["pins"]:
            for check in pin["expect"].get("Sustained", []) if pin["trial"] in TRIALS else []:
                key = (pin["trial"], check["figure"], check["variant"], check["over"])
                if check["figure"] == "ProbedMhz" and key in windows:
                    lo, hi = windows[key][:2]
                    if check["range"] != [round(lo, 4), round(hi, 4)]:
                        stale.append(f"{key[0]} {key[2]}: {check['range']} against [{lo:.4f}, {hi:.4f}]")
        print("clock windows: " + ("as tools/clock_pins.py derives them" if not stale else "; ".join(stale)))
        sys.exit(1 if stale else 0)
    if not write:
        return
    names = ", ".join(POST_CAP)
    for pin in pins["pins"]:
        if pin["trial"] not in TRIALS:
            continue
        parts = []
        for check in pin["expect"]["Sustained"]:
            key = (pin["trial"], check["figure"], check["variant"], check["over"])
            if check["figure"] != "ProbedMhz" or check["over"] is None or key not in windows:
                continue
            lo, hi, s, runs = windows[key]
            check["range"] = [round(lo, 4), round(hi, 4)]
            readings = "; ".join(f"{', '.join(f'{x:.3f}' for x in seen[c][key])} ({c})" for c in runs)
            parts.append(f"{check['figure']} of {check['variant']} over {check['over']}'s: {readings}; "
                         f"s {100 * s:.2f}% over every pass")
        post_cap = [run_name(c) for c in POST_CAP]
        before = pin["measured"].split(" Before H154: ")[-1] if "H154" in pin["measured"] else pin["measured"]
        # The window is re-derived now, not carried: drop the distiller's note that said it was.
        before = before.removesuffix(" (carried from the code's pin, not re-derived by tools/pins.py)")
        pin["runs"] = post_cap + [r for r in pin["runs"] if r not in post_cap]
        pin["measured"] = (
            f"re-pinned for H154 (ablations/HYPOTHESES.md) by tools/clock_pins.py from the whole suites since "
            f"ec208d9 ({names}), where the card runs the clock trials under its power cap; the earlier windows "
            f"came from one run each. Window: Z = {Z} times s times sqrt(1 + 1/n) in log around the mean of the "
            f"runs' means, s the sd of every pass (never under the ours pooled sd). " + " | ".join(parts)
            + f". Every other check stands as before. Before H154: {before}"
        )
    with open(PINS, "w") as f:
        json.dump(pins, f, indent=1)
        f.write("\n")
    print(f"written: {PINS}")


if __name__ == "__main__":
    main()
