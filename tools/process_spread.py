#!/usr/bin/env python3
"""Between-process spread of comparisons, from committed runs of trials repeated in separate processes.

Reads the archives tools/h200-agreement.sh brought back (each trial run in N processes of one machine start), and
1. prints, per trial, the processes' ratios, their sd beside the standard error one process states, whether all
   the processes' intervals overlap pairwise and whether their verdicts agree (issue 37's figures);
2. fits, per kind of comparison (ours against ours, ours against cuBLAS), the prior of a comparison's variance
   between processes: a scaled inverse chi-square (s0^2 with d0 degrees of freedom) fitted to the trials'
   sample variances of their process estimates by the moments of log s^2 (Smyth 2004, limma's fitFDist), with
   each process's estimate taken from its first R rounds (the rounds a worker process runs);
3. judges designs on the same records, each trial's prior fitted with that trial left out: one process with the
   prior alone; P processes whose interval uses the moderated variance (d0 s0^2 + (P-1) s^2) / (d0 + P - 1) with
   d0 + P - 1 degrees of freedom; looks after 1, 2, ... P processes with the error shared over the looks (evenly,
   as t^3, or as given shares), optionally with the processes' own sample variance as a floor at the last look
   (the harness's rule: shares 0.3, 0.1, 0.6 and the floor, H109);
4. with --write, writes the fitted prior (at R rounds a process) to pins/process-prior.json.

Usage, from the repository root: python3 tools/process_spread.py [--rounds R] [--write] ARCHIVE.tgz...
Needs numpy and scipy (pip install numpy scipy).
"""
import argparse
import collections
import io
import json
import math
import os
import tarfile

import numpy as np
from scipy import special, stats

BAND = math.log(1.02)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def records(archives):
    """Trial name -> [(record, environment)] over every run file in the archives."""
    out = collections.defaultdict(list)
    for path in archives:
        with tarfile.open(path) as tar:
            for m in tar.getmembers():
                if m.isfile() and m.name.endswith(".json") and "/runs/" in m.name:
                    run = json.load(io.TextIOWrapper(tar.extractfile(m)))
                    for t in run["trials"]:
                        if (t.get("comparison") or {}).get("rounds"):
                            out[t["name"]].append((t, run["environment"]))
    return out


def kind(record):
    return "cublas" if any(v["label"].startswith("cuBLAS") for v in record["variants"]) else "ours"


def process_estimate(record, rounds):
    """Mean log ratio of a process's first `rounds` counted rounds and its standard error."""
    kept = [r["log_ratios"] for r in record["comparison"]["rounds"] if not r.get("set_aside")][:rounds]
    means = [float(np.mean(r)) for r in kept]
    return float(np.mean(means)), float(np.std(means, ddof=1) / math.sqrt(len(means)))


def fit_prior(variances, dfs):
    """(s0^2, d0) of a scaled inverse chi-square fitted to sample variances with their degrees of freedom."""
    s2 = np.asarray(variances, float)
    df = np.asarray(dfs, float)
    keep = s2 > 0
    s2, df = s2[keep], df[keep]
    e = np.log(s2) - special.digamma(df / 2) + np.log(df / 2)
    mean = e.mean()
    excess = ((e - mean) ** 2).sum() / (len(e) - 1) - special.polygamma(1, df / 2).mean()
    if excess <= 0:
        return math.exp(mean), math.inf
    lo, hi = 1e-8, 1e8  # trigamma(d0 / 2) = excess, by bisection (trigamma decreases)
    for _ in range(300):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if special.polygamma(1, mid) > excess else (lo, mid)
    d0 = 2 * mid
    return math.exp(mean + special.digamma(d0 / 2) - math.log(d0 / 2)), d0


def verdict(centre, half, half_eq):
    if centre + half < -BAND:
        return "faster"
    if centre - half > BAND:
        return "slower"
    if centre - half_eq > -BAND and centre + half_eq < BAND:
        return "no change"
    return "inconclusive"


def tq(confidence, df):
    return stats.t.ppf((1 + confidence) / 2, df)


def judge_design(trials, rounds, processes, looks, prior_of, spend=None, floor=False):
    """Coverage of the mean over all processes, pairwise overlap and verdict agreement between the groups of
    `processes` consecutive processes each trial's records make, under the design. `spend` gives each look's
    share of the error (even by default); `floor` keeps the variance at the last look at least the processes' own
    sample variance."""
    spend = spend or [1 / len(looks)] * len(looks)
    covered, overlapping, agreeing, halves, spent, contradicting = [], [], [], [], [], []
    counts = collections.Counter()
    for name, recs in trials.items():
        s02, d0 = prior_of(name, kind(recs[0][0]))
        est = [process_estimate(r, rounds) for r, _ in recs]
        grand = float(np.mean([y for y, _ in est]))
        intervals, verdicts = [], []
        for g in range(len(est) // processes):
            part = est[g * processes:(g + 1) * processes]
            for q in looks:
                ys = np.array([y for y, _ in part[:q]])
                within = float(np.mean([se ** 2 for _, se in part[:q]]))
                s2 = float(ys.var(ddof=1)) if q > 1 else 0.0
                tau2 = max((d0 * s02 + (q - 1) * s2) / (d0 + q - 1), within, s2 if floor and q == looks[-1] else 0.0)
                df = d0 + q - 1
                se = math.sqrt(tau2 / q)
                share = spend[looks.index(q)]
                half, half_eq = tq(1 - 0.05 * share, df) * se, tq(1 - 0.10 * share, df) * se
                v = verdict(ys.mean(), half, half_eq)
                if v != "inconclusive":
                    break
            spent.append(q)
            intervals.append((ys.mean() - half, ys.mean() + half))
            halves.append(half)
            covered.append(intervals[-1][0] <= grand <= intervals[-1][1])
            verdicts.append(v)
            counts[v] += 1
        overlapping.append(all(max(a[0], b[0]) <= min(a[1], b[1])
                               for i, a in enumerate(intervals) for b in intervals[i + 1:]))
        if abs(abs(grand) - BAND) > 0.005:
            agreeing.append(len(set(verdicts)) == 1)
        contradicting.append(len(set(verdicts) - {"inconclusive"}) > 1)
    return {
        "coverage": float(np.mean(covered)),
        "overlap": (sum(overlapping), len(overlapping)),
        "agree": (sum(agreeing), len(agreeing)),
        "contradict": (sum(contradicting), len(contradicting)),
        "median_half_width_pct": 100 * float(np.median(halves)),
        "mean_processes": float(np.mean(spent)),
        "verdicts": dict(counts),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=4, help="rounds a worker process runs (default 4)")
    ap.add_argument("--write", action="store_true", help="write pins/process-prior.json")
    ap.add_argument("archives", nargs="+")
    args = ap.parse_args()
    trials = records(args.archives)
    trials = {n: r for n, r in trials.items() if len(r) >= 2}
    env = next(iter(trials.values()))[0][1]

    print("1. Each trial in separate processes, as measured (every process's own interval and verdict):")
    overlap_all = agree_far = far = held = processes = contradicting = 0
    for name in sorted(trials):
        recs = [r for r, _ in trials[name]]
        est = [r["observed"]["Compared"] for r in recs]
        ys = np.array([e["log_mean"] for e in est])
        ok = all(max(a["ci"][0], b["ci"][0]) <= min(a["ci"][1], b["ci"][1]) for i, a in enumerate(est)
                 for b in est[i + 1:])
        same = len({e["verdict"] for e in est}) == 1
        # Two different decisive verdicts (slower against no change, say): a contradiction, where a decisive
        # verdict against an inconclusive one is only a difference in evidence (H110).
        contradicts = len({e["verdict"] for e in est} - {"Inconclusive"}) > 1
        contradicting += contradicts
        overlap_all += ok
        centre = math.exp(ys.mean())
        held += sum(e["ci"][0] <= centre <= e["ci"][1] for e in est)
        processes += len(est)
        if abs(abs(ys.mean()) - BAND) > 0.005:
            far += 1
            agree_far += same
        print(f"  {name:<44} {len(ys):>2} processes, ratios {math.exp(ys.min()):.4f}-{math.exp(ys.max()):.4f}, "
              f"sd {100 * ys.std(ddof=1):.2f}% against {100 * np.median([e['log_se'] for e in est]):.2f}% "
              f"stated, intervals {'overlap' if ok else 'do NOT overlap'}, verdicts "
              f"{'agree' if same else 'CONTRADICT' if contradicts else 'DISAGREE'}, passed {sum(r['passed'] for r in recs)}")
    print(f"  all intervals overlap pairwise in {overlap_all} of {len(trials)} trials; verdicts agree in "
          f"{agree_far} of {far} trials whose ratio is over 0.5% from a band edge; a process's interval holds the "
          f"mean over its trial's processes in {held} of {processes}; two decisive verdicts contradict in "
          f"{contradicting} of {len(trials)} trials")

    print(f"\n2. The prior of a comparison's between-process variance, each process's first {args.rounds} rounds:")
    fitted = {}
    for k in ("ours", "cublas"):
        s2, dfs = [], []
        for recs in trials.values():
            if kind(recs[0][0]) != k:
                continue
            ys = [process_estimate(r, args.rounds)[0] for r, _ in recs]
            s2.append(float(np.var(ys, ddof=1)))
            dfs.append(len(ys) - 1)
        s02, d0 = fit_prior(s2, dfs)
        fitted[k] = {"sd": math.sqrt(s02), "df": d0, "trials": len(s2), "processes": sum(dfs) + len(dfs)}
        print(f"  {k}: s0 {100 * math.sqrt(s02):.3f}%, d0 {d0:.2f} ({len(s2)} trials; pooled sd "
              f"{100 * math.sqrt(np.average(s2, weights=dfs)):.3f}%)")

    def left_out(name, k):
        """The prior of kind k fitted without trial `name`, its df capped as the harness caps it
        (processes.rs, MOST_PRIOR_DF)."""
        s02, d0 = fitted_without(name, k)
        return s02, min(d0, 2.0)

    def fitted_without(name, k):
        s2, dfs = [], []
        for other, recs in trials.items():
            if other != name and kind(recs[0][0]) == k:
                ys = [process_estimate(r, args.rounds)[0] for r, _ in recs]
                s2.append(float(np.var(ys, ddof=1)))
                dfs.append(len(ys) - 1)
        return fit_prior(s2, dfs)

    print(f"\n3. Designs judged on these records ({args.rounds} rounds a process; each trial's prior fitted "
          "without it; groups of consecutive processes play the repeated comparisons):")
    for label, processes, looks, spend, floor in [
        ("one process, the prior alone", 1, [1], None, False),
        ("two processes", 2, [2], None, False),
        ("three processes", 3, [3], None, False),
        ("up to three, looks after 1, 2, 3, even", 3, [1, 2, 3], None, False),
        ("up to three, shared as t^3", 3, [1, 2, 3], [1 / 27, 7 / 27, 19 / 27], False),
        ("up to three, t^3, floor at the last", 3, [1, 2, 3], [1 / 27, 7 / 27, 19 / 27], True),
        ("up to three, 0.2 0.15 0.65, floor at the last", 3, [1, 2, 3], [0.2, 0.15, 0.65], True),
        ("up to three, 0.3 0.1 0.6, floor (the harness)", 3, [1, 2, 3], [0.3, 0.1, 0.6], True),
    ]:
        r = judge_design(trials, args.rounds, processes, looks, left_out, spend, floor)
        print(f"  {label:<47} coverage {r['coverage']:.3f}, intervals overlap {r['overlap'][0]}/{r['overlap'][1]}, "
              f"verdicts agree {r['agree'][0]}/{r['agree'][1]}, contradict {r['contradict'][0]}/{r['contradict'][1]}, "
              f"median half-width {r['median_half_width_pct']:.2f}%, "
              f"{r['mean_processes']:.2f} processes a comparison, verdicts {r['verdicts']}")

    if args.write:
        doc = {
            "about": "The prior of a comparison's variance between processes, per GPU and kind of comparison: a "
                     "scaled inverse chi-square (sd^2 with df degrees of freedom) fitted by tools/process_spread.py "
                     "to trials run in separate processes of one machine start, each process's estimate from its "
                     "first `rounds_per_process` rounds. Edit by re-running the tool in a commit that names its runs.",
            "gpus": {
                env["device"]["name"]: {
                    "driver": env["device"]["driver_version"],
                    "commit": env["commit"],
                    "rounds_per_process": args.rounds,
                    "runs": [os.path.relpath(a, ROOT) for a in args.archives],
                    "kinds": fitted,
                }
            },
        }
        with open(os.path.join(ROOT, "pins", "process-prior.json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print("\nwrote pins/process-prior.json")


if __name__ == "__main__":
    main()
