#!/usr/bin/env python3
"""Where a suite run's device time goes, from its records: per group of trials (the name's first part), the wall
time, and for comparisons spread over worker processes, how much of it fell outside the comparisons (process
start, CUDA and cuBLAS set-up, module loads), inside them before the rounds (allocation, the correctness checks,
the warm-up) and in the paired batches themselves. Issue 37: a whole suite took about 20.5 minutes at 5db9c5d
against about 14 before the worker processes; this says which part to cut.

Usage, from the repository root: python3 tools/suite_cost.py RUN.json|ARCHIVE.tgz...
The batches' share is estimated as pairs x 2 x the batch length the run was set to (GEMM_ABLATE_BATCH_MS, 3 ms by
default), plus each round's warm-up (GEMM_ABLATE_ROUND_WARMUP_MS, 40 ms). Records written since the worker processes
mark their phases (TrialRecord::phases: the GPU opened, the variants checked, the first warm-up, the rounds) also
get those phases summed, worker by worker.
"""
import collections
import json
import lzma
import sys
import tarfile


def runs(paths):
    for path in paths:
        if path.endswith((".tgz", ".tar.gz")):
            with tarfile.open(path) as tar:
                for member in tar.getmembers():
                    if member.isfile() and member.name.endswith(".json") and "/runs/" in "/" + member.name:
                        text = tar.extractfile(member).read()
                        try:
                            yield member.name, json.loads(text)
                        except ValueError:
                            continue
        else:
            with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
                yield path, json.load(f)


def setting(run, name, default):
    for key, value in run.get("environment", {}).get("settings", []):
        if key == name:
            return float(value)
    return default


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    phase_time = collections.Counter()
    phased_workers = short_warm_ups = 0
    opened = {False: [], True: []}
    kinds = collections.Counter()
    counts = collections.Counter()
    outside = inside_before = batches = processes = compared = 0.0
    by_processes, wall_by_processes = collections.Counter(), collections.Counter()
    for name, run in runs(sys.argv[1:]):
        if "trials" not in run:
            continue
        batch_ms = setting(run, "GEMM_ABLATE_BATCH_MS", 3.0)
        round_warmup_ms = setting(run, "GEMM_ABLATE_ROUND_WARMUP_MS", 40.0)
        for t in run["trials"]:
            kind = t["name"].split("::")[0]
            wall = t.get("duration_s") or 0.0
            kinds[kind] += wall
            counts[kind] += 1
            # Each worker's phase marks (seconds since its job started), where the record has them.
            workers = collections.defaultdict(list)
            for label, at in t.get("phases", []):
                worker, _, phase = label.rpartition(": ") if ": " in label else ("worker 1", "", label)
                workers[worker].append((phase, at))
            for marks in workers.values():
                phased_workers += 1
                short_warm_ups += any(phase.startswith("short warm-up") for phase, _ in marks)
                before = 0.0
                for phase, at in marks:
                    phase_time[phase] += at - before
                    before = at
                    if phase == "gpu opened":
                        # Under 0.1 s: a kept worker process that opened the GPU for an earlier job (H119).
                        opened[at < 0.1].append(at)
            c = t.get("comparison")
            if not c:
                continue
            compared += 1
            looks = c["estimate"].get("looks", 1) if c.get("estimate", {}).get("processes") else 1
            processes += looks
            by_processes[looks] += 1
            wall_by_processes[looks] += wall
            pairs = sum(len(r["log_ratios"]) for r in c["rounds"])
            timed = (pairs * 2 * batch_ms + len(c["rounds"]) * round_warmup_ms) / 1e3
            outside += max(wall - c["elapsed_s"], 0.0)
            inside_before += max(c["elapsed_s"] - timed, 0.0)
            batches += timed
    total = sum(kinds.values())
    print(f"{total:.0f} s of trials in all")
    for kind, wall in kinds.most_common(12):
        print(f"  {kind:<22} {counts[kind]:>4} trials, {wall:>7.0f} s ({100 * wall / max(total, 1e-9):.0f}%)")
    if compared:
        print(f"comparisons: {compared:.0f}, {processes / compared:.2f} worker processes each on average")
        for q in sorted(by_processes):
            print(f"  {by_processes[q]:>4} took {q} process{'es' if q > 1 else ''}, "
                  f"{wall_by_processes[q] / by_processes[q]:.2f} s each")
        for label, part in [
            ("outside the comparisons (process start and exit, CUDA and cuBLAS set-up, module loads)", outside),
            ("in them before the rounds (allocation, checks, the first warm-up)", inside_before),
            ("in the rounds' warm-ups and paired batches (estimated)", batches),
        ]:
            per = part / max(processes, 1)
            print(f"  {part:>7.0f} s {label}: {per:.2f} s a process")
    print_phases(phase_time, phased_workers, opened, short_warm_ups)


def print_phases(phase_time, workers, opened, short_warm_ups):
    if not workers:
        return
    print(f"{short_warm_ups} of {workers} workers took the short first warm-up (a kept process, the card at its "
          f"working clock: H133)")
    for kept, label in [(False, "opened the GPU"), (True, "found it open (a kept process, H119)")]:
        if opened[kept]:
            times = sorted(opened[kept])
            print(f"{len(times)} workers {label}: median {times[len(times) // 2]:.3f} s to their 'gpu opened' mark")
    print(f"phases of {workers} worker processes (from their own marks; each up to its mark, from the one before):")
    for phase, seconds in phase_time.most_common():
        print(f"  up to {phase:<14} {seconds:>7.0f} s, {seconds / workers:.2f} s a worker")


if __name__ == "__main__":
    main()
