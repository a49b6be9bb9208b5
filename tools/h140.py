#!/usr/bin/env python3
"""H140 (ablations/HYPOTHESES.md, issue 37) judged on a whole suite: which kind of H200 ran it, and whether
`clock::wide_tile::prefill_attn_out`'s probed-clock ratios fall where H140 wrote they would for that kind.

The kind (H132) is read from the skinny ring kernel's own median time at decode_m1 in the ablations records
(`beyond::skinny_ring::decode_m1`): 41.1-41.3 us on the first kind, 38.6-38.7 us on the second; the ratios from the
microbench record's judgement of the clock trial (two passes each).

Usage, from the repository root: python3 tools/h140.py COMMIT [COMMIT...]   (results/h200/COMMIT/suite/runs/)
9358f28 and 9d9b4bb are H140's sources (they hold by construction); only a later whole suite tests it.
"""
import glob
import json
import lzma
import re
import sys

# H140 as written (2026-12-06 05:40 UTC), before any run after 9358f28: the kind -> the range each ratio falls in.
RANGES = {
    "first": {"256x192": (1.005, 1.025), "128x128": (0.975, 0.995)},
    "second": {"256x192": (1.020, 1.040), "128x128": (0.990, 1.010)},
}
VARIANTS = {"256x192": "rung10:wg_m=128,bn=192,stages=3,clock_probe=1", "128x128": "rung10:bn=128,clock_probe=1"}


def records(commit, suite):
    for path in sorted(glob.glob(f"results/h200/{commit}/suite/runs/{suite}-*.json*")):
        if path.endswith(".summary.json"):
            continue
        with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
            yield from json.load(f)["trials"]


def kind(commit):
    for t in records(commit, "ablations"):
        if t["name"] == "beyond::skinny_ring::decode_m1" and t.get("comparison"):
            us = t["comparison"]["candidate_median_us"]
            if 40.5 <= us <= 42.0:
                return "first", us
            if 38.0 <= us <= 39.5:
                return "second", us
            return None, us
    return None, None


def ratios(commit):
    for t in records(commit, "microbench"):
        if t["name"] == "clock::wide_tile::prefill_attn_out":
            out = {}
            for label, variant in VARIANTS.items():
                pattern = re.escape(variant) + r" over \S+ in \[[^\]]*\]: ([0-9.]+), ([0-9.]+)"
                m = re.search(pattern, t.get("judgement", ""))
                if m:
                    out[label] = (float(m.group(1)), float(m.group(2)))
            return out
    return {}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for commit in sys.argv[1:]:
        k, us = kind(commit)
        seen = ratios(commit)
        print(f"{commit}: skinny ring at decode_m1 {us} us -> kind {k or 'not told'}")
        if not k or not seen:
            print("  not judged: " + ("kind unknown" if not k else "no clock::wide_tile record"))
            continue
        for label, (lo, hi) in RANGES[k].items():
            values = seen.get(label)
            held = values is not None and all(lo <= v <= hi for v in values)
            print(f"  {label} over rung 10: {values} in [{lo}, {hi}]: {'holds' if held else 'DOES NOT hold'}")


if __name__ == "__main__":
    main()
