#!/usr/bin/env python3
"""How busy the card was in each sustained run of a results record (H135): the batches' own time (launches x time a
launch) over the wall time from the first batch's end to the last's, and the host's gap a batch. Records written
since ec208d9 carry the settled half's share themselves (`busy_fraction`, the `busy%` column); this reads any.

Usage, from the repository root: python3 tools/sustain_duty.py RUN.json[.xz]...
"""
import json
import lzma
import sys


def main(paths):
    for path in paths:
        with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
            run = json.load(f)
        for trial in run.get("trials", []):
            for r in trial.get("sustained") or []:
                samples = r["samples"]
                if len(samples) < 3:
                    continue
                # The first batch has no start to count from: from its end on.
                busy = sum(s["launches"] * s["us_per_launch"] for s in samples[1:]) / 1e6
                span = samples[-1]["at_s"] - samples[0]["at_s"]
                gap_ms = (span - busy) / (len(samples) - 1) * 1e3
                print(f"{trial['name']}  {r['variant']}  pass {r['pass']}: {len(samples)} batches of "
                      f"{samples[1]['launches']} launches, busy {busy / span:.2f} of the time, {gap_ms:.2f} ms idle "
                      f"a batch")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
