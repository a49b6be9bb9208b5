#!/usr/bin/env python3
"""The between-process prior refitted from a whole-suite run's own comparisons (issue 37).

Each comparison of the run that took two or more worker processes gives the sample variance of its processes'
estimates on q - 1 degrees of freedom; per kind of comparison (ours against ours, against cuBLAS) a scaled inverse
chi-square is fitted to them as tools/process_spread.py fits the agreement runs (tools/pins.py's fit_prior). Which
comparisons went on to a second process depends on where their first estimate lay, not on their spread (one process
says nothing of it), so the sample is not chosen by spread. Prints the fit beside pins/process-prior.json's; it
writes nothing: a prior is changed in its own commit, after the simulations (harness/measure/oc.rs) hold under it.

Usage, from the repository root: python3 tools/suite_prior.py RUN.json[.xz]...
"""
import collections
import importlib.util
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("pins", os.path.join(ROOT, "tools", "pins.py"))
pins = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pins)


def main(paths):
    variances = collections.defaultdict(list)
    gpu = None
    for path in paths:
        with open(path, "rb") as fh:
            raw = fh.read()
        run = json.loads(pins.lzma.decompress(raw) if path.endswith(".xz") else raw)
        for t in run["trials"]:
            estimate = (t.get("observed") or {}).get("Compared") if isinstance(t.get("observed"), dict) else None
            means = ((estimate or {}).get("processes") or {}).get("means") or []
            if len(means) < 2:
                continue
            c = t.get("comparison") or {}
            kind = "cublas" if "cublas" in (str(c.get("baseline", "")) + str(c.get("candidate", ""))).lower() else "ours"
            mean = sum(means) / len(means)
            variances[kind].append((sum((m - mean) ** 2 for m in means) / (len(means) - 1), len(means) - 1))
            gpu = gpu or (t.get("gpu") or {}).get("name")
    with open(os.path.join(ROOT, "pins", "process-prior.json")) as fh:
        committed = json.load(fh)["gpus"].get(gpu or "", {}).get("kinds", {})
    for kind, rows in sorted(variances.items()):
        s0sq, d0 = pins.fit_prior([v for v, _ in rows], [d for _, d in rows])
        was = committed.get(kind)
        print(f"{kind}: {len(rows)} comparisons of 2+ processes, sd {100 * math.sqrt(s0sq):.3f}% on {d0:.2f} df"
              + (f" (committed: {100 * was['sd']:.3f}% on {was['df']:.2f} df, {was['trials']} trials)" if was else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
