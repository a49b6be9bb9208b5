#!/usr/bin/env python3
"""How far a run's ratios sit from the committed pins, by kind of comparison: ours against ours, or against cuBLAS,
at decode shapes or not, and by record (a shard, a machine). A run of unchanged kernels whose ours-against-ours
ratios sit on the pins while its cuBLAS ratios all move one way points at cuBLAS's side of the environment (the
host, its memory, the library's state), not at our kernels: the measurement a re-pin's commit must name
(docs/pinning.md). Only RatioNear pins and RatioAtClock pins (at the run's clock, H157) count (a verdict pin has
no value to sit near). Writes nothing.

Usage, from the repository root: python3 tools/pin_shift.py RUN.json[.xz]...
"""
import json
import lzma
import math
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
        return json.load(f)


def shifts(record, pins):
    """(kind, log of the ratio over its pin's value) for each timed trial the pins hold a value for."""
    for t in record["trials"]:
        c, pin = t.get("comparison"), pins.get(t["name"])
        if not c or "estimate" not in c or not pin:
            continue
        if "RatioNear" in pin["expect"]:
            value = pin["expect"]["RatioNear"]["ratio"]
        elif "RatioAtClock" in pin["expect"] and c.get("sm_clock_median_mhz"):
            # The line's value at the run's own clock (H157).
            line = pin["expect"]["RatioAtClock"]
            value = line["ratio"] * math.exp(line["slope"] * (c["sm_clock_median_mhz"] - line["mhz"]))
        else:
            continue
        ratio = c["estimate"].get("ratio") or c.get("ratio")
        side = "against cuBLAS" if c["baseline"] == "cuBLAS" else "ours against ours"
        where = "decode" if "decode" in t["name"] else "other shapes"
        yield f"{side}, {where}", math.log(ratio / value)


def summary(values):
    sd = statistics.pstdev(values) if len(values) > 1 else float("nan")
    return f"{len(values):4d} trials, mean {100 * statistics.mean(values):+.2f}%, sd {100 * sd:.2f}%"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    pins = {p["trial"]: p for p in load(os.path.join(ROOT, "pins", "h200.json"))["pins"]}
    whole = {}
    for path in sys.argv[1:]:
        record = load(path)
        uuid = ((record["environment"].get("device") or {}).get("uuid")) or "no GPU UUID recorded"
        print(f"{os.path.basename(path)} ({record['environment'].get('date')}, {uuid})")
        mine = {}
        for kind, s in shifts(record, pins):
            mine.setdefault(kind, []).append(s)
            whole.setdefault(kind, []).append(s)
        for kind in sorted(mine):
            print(f"  {kind:32s} {summary(mine[kind])}")
    if len(sys.argv) > 2:
        print("all of them")
        for kind in sorted(whole):
            print(f"  {kind:32s} {summary(whole[kind])}")


if __name__ == "__main__":
    main()
