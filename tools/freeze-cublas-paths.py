#!/usr/bin/env python3
"""Writes pins/cublas-paths.json: the cuBLAS path each shape's comparisons time, frozen to the path the pin runs
timed (the 6b3189c whole suite's chooser file, with that chooser's screen), so that a pinned ratio against cuBLAS
is judged against the path it was pinned on. A different path is a re-pin: choose afresh with
`gemm-ablate cublas-paths`, re-run the trials on it, and commit both together (docs/pinning.md).

Usage, from the repository root: python3 tools/freeze-cublas-paths.py
"""
import json
import lzma
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(ROOT, "results", "h200", "6b3189c", "suite", "runs")
ENV_RUN = os.path.join(ROOT, "results", "h200", "ablations-20261201T234532Z.json")
DATE = "2026-12-01T23:45:32Z"


def main():
    paths = json.load(open(os.path.join(RUN, "cublas-paths.txt")))
    times = json.load(open(os.path.join(RUN, "cublas-path-times.txt")))
    with (open(ENV_RUN) if os.path.exists(ENV_RUN) else lzma.open(ENV_RUN + ".xz", "rt")) as f:
        dev = json.load(f)["environment"]["device"]
    choices = {}
    for old_key, path in paths.items():
        gpu, _name, dims, dtype, version = old_key.split("|")
        key = f"{gpu}|{dev['driver_version']}|{version}|{dtype}|{dims}"
        choice = {"key": key, "path": path, "screen": times.get(old_key, []), "paired": None, "date": DATE}
        if key in choices and choices[key]["path"] != path:
            raise SystemExit(f"{key}: two paths in the run ({choices[key]['path']}, {path})")
        choices[key] = choice
    doc = {
        "about": "The cuBLAS path every comparison against cuBLAS times, per GPU, driver, cuBLAS version, dtype and "
                 "shape: the paths the 6b3189c whole suite (results/h200/6b3189c/suite/runs/cublas-paths.txt) "
                 "timed, which the pins against cuBLAS were distilled from; its screen is that run's chooser's "
                 "median microseconds. Written by tools/freeze-cublas-paths.py. The heuristic's choice is "
                 "cublasLt[algo 0]; a shape on another path says so in every record.",
        "choices": sorted(choices.values(), key=lambda c: c["key"]),
    }
    os.makedirs(os.path.join(ROOT, "pins"), exist_ok=True)
    with open(os.path.join(ROOT, "pins", "cublas-paths.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote pins/cublas-paths.json: {len(choices)} choices")


if __name__ == "__main__":
    main()
