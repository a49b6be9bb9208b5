#!/usr/bin/env python3
"""Distils pins/h200.json from named committed H200 runs, under the rules of docs/pinning.md.

A pinned trial's value is the mean log ratio of the pin runs that measured the same variants (labels equal to
the reference run's, cuBLAS on the committed path) and passed; its window is the prediction interval of one more
run: t(1 - alpha/2, df) * s * sqrt(1 + 1/n), where s is the trial's between-run sd moderated towards its kind's
(ours against ours, ours against cuBLAS) by empirical Bayes (Smyth 2004, limma's fitFDist), and alpha is set so
that a whole suite of identical code expects TARGET_FALSE_REDS false reds. A leave-one-run-out check judges every
run against the pin built from the others and prints how many go red against how many the rule predicts.

Usage, from the repository root: python3 tools/pins.py [--check | --verify | --run-prior]
  --check: print the leave-one-out figures and what would change, write nothing.
  --verify: exit 1 unless pins/h200.json is exactly what the distiller writes from the committed runs (CI runs it:
    a pin edited by hand, or a run it names that left the tree, fails there).
  --run-prior: write pins/run-prior.json only (the between-run prior `baseline` uses, below), and print how often
    the baseline rule calls identical code slower or faster between the pin runs.
"""
import json
import lzma
import math
import os
import sys
from collections import defaultdict


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H200 = os.path.join(ROOT, "results", "h200")

# Whole-suite runs of the same kernels (gemm.cu unchanged from 1142956 to the submitted code; the 755a4f5 kernels
# are the same cubins for every spec that existed then, tools/cubin-identity.sh at 44e90fe and 618a80b), each a
# separate machine start or process. A trial takes a run only where the run's variant labels equal the
# reference run's (the last), so a spec that `auto` or a trial list resolved differently is left out.
PIN_RUNS = {
    "ablations": [
        ("755a4f5 first", ["ablations-20261201T195904Z", "ablations-20261201T200255Z", "ablations-20261201T200659Z"]),
        ("755a4f5 second", ["ablations-20261201T201253Z", "ablations-20261201T201640Z", "ablations-20261201T202058Z"]),
        ("1142956", [f"1142956/suite/runs/ablations-20261201T{t}Z" for t in ("223117", "223535", "223957")]),
        ("6b3189c", ["ablations-20261201T234532Z", "ablations-20261201T235004Z", "ablations-20261201T235443Z"]),
        # H137: every later committed whole suite of the same kernels but 9d9b4bb (held out, below).
        ("1d1f9c2", [f"1d1f9c2/suite/runs/ablations-20261204T{t}Z" for t in ("203434", "203846", "204214", "204606",
                                                                               "204957")]),
        ("1b4b713", ["1b4b713/suite/runs/ablations-20261205T052931Z"]),
        ("8fb4f1b", [f"8fb4f1b/suite/runs/ablations-20261205T{t}Z" for t in ("115407", "120205", "120342", "120524")]),
        ("3ad3d86", [f"3ad3d86/suite/runs/ablations-20261205T{t}Z" for t in ("143305", "143442", "143609")]),
        ("e9f627a", [f"e9f627a/suite/runs/ablations-20261205T{t}Z"
                     for t in ("164443", "164627", "164750", "164921", "165040", "165550")]),
    ],
    "microbench": [
        ("755a4f5", ["microbench-20261201T195610Z"]),
        ("1142956", ["1142956/suite/runs/microbench-20261201T222822Z"]),
        ("6b3189c", ["microbench-20261201T234203Z"]),
        ("e9f627a", ["e9f627a/suite/runs/microbench-20261205T164131Z"]),
    ],
}
# Committed whole suites of the pinned code that build no pin, judged by the replay tests against the pins: 9d9b4bb,
# whose reds prompted H137 (its two reds left red stay reds of that run whatever the pins become).
HELD_OUT = {
    "ablations": [f"9d9b4bb/suite/runs/ablations-20261206T{t}Z"
                  for t in ("015212", "015342", "015442", "015552", "015701", "015827")]
    # The first whole suite at H137's pins (2026-12-06, the first kind of machine); ced423a (the ablations alone)
    # stays out: its one red, left red, would fail its replay trial, and tools/replay_pins.py reports it.
    + [f"9358f28/suite/runs/ablations-20261206T{t}Z"
       for t in ("050523", "050656", "050758", "050923", "051028", "051124")],
}
# Runs on the second kind of H200 machine the lender hands out (ablations/HYPOTHESES.md H132): the first four pin
# runs were all on machines where the skinny ring kernel takes 41.1-41.2 us at decode_m1; on 8fb4f1b's two machines
# and e9f627a's (GPU-74a5ba81) it takes 38.6-38.7 us and cuBLAS's decode path 2-4% less, with the same cubins and
# driver. Since H137 every run counts towards every trial's window, both kinds of machine in one spread; these
# runs' failures against a pin of their time count only for the trials in MACHINE_DEPENDENT (the cause named).
OTHER_MACHINE_RUNS = ("8fb4f1b", "e9f627a")
# Trials that went red on the second kind of machine against a pin built on the first alone, where what moved is
# a kernel's own time on that machine: trial -> the measurement. Their windows, like every other since H137, are
# one window over every run; their between-run spread stays out of the kinds' priors.
MACHINE_DEPENDENT = {
    "beyond::skinny_ring::decode_m1": (
        "the skinny ring kernel's own time: 41.1-41.2 us on the first kind (1142956, 1d1f9c2), 38.6-38.7 us on the "
        "second (8fb4f1b, e9f627a), `auto`'s 35.1-35.5 us on both; 1.085-1.108 in six worker-process sets on "
        "GPU-74a5ba81 (results/h200/e9f627a/reds-again)"
    ),
    "ladder::rung5_epilogue::decode_mlp_down": (
        "cuBLAS's side: 208-215 us on the first kind (1142956, 1d1f9c2, 3ad3d86), 203.6 us on the second (e9f627a); "
        "1.069-1.106 in six worker-process sets on GPU-74a5ba81; 8fb4f1b 1.0921"
    ),
    "ladder::rung1_kloop::decode_mlp_down": (
        "cuBLAS's side: 181-183 us on the first kind (1142956, 1d1f9c2), 173-176 us on the second (8fb4f1b, e9f627a); "
        "6.96-7.20 in six worker-process sets on GPU-74a5ba81"
    ),
    "ablation::twoconsumers::prefill_mlp_up": (
        "both kernels up to 4% (rung 6) and 7% (rung 7) faster on the second kind at a higher capped clock (1335-1365 MHz against 1260-1305): "
        "0.8557-0.8634 on the first kind (1142956, 1d1f9c2, 3ad3d86), 0.8355-0.8423 on the second (8fb4f1b, "
        "e9f627a, and 9d9b4bb's red, which is not a pin run: results/h200/9d9b4bb/README.md)"
    ),
    "ladder::rung1_kloop::decode_attn_out": (
        "7.16 at 8fb4f1b (record not kept), 6.87-7.22 in six worker-process sets on GPU-74a5ba81, 6.58-6.80 on the "
        "first kind"
    ),
}
# A window is Z pooled sds wide on each side: with ~350 pinned ratios and normal scatter, 0.16 false reds a whole
# suite; Z was fixed before the leave-one-run-out check below, which measures it on the runs themselves.
Z = 3.5
CAPS = {"ours": 0.03, "cublas": 0.05}  # a wider window says "depends on process state"
BAND = 0.02
PATHS_FILE = os.path.join(ROOT, "pins", "cublas-paths.json")
# Trials whose hypothesis the pin runs refuted, pinned from those runs since (the trial list says `pinned()`; the
# pin runs' records still carry the hypothesis they were judged by): trial -> the hypothesis and what refuted it.
REFUTED = {
    "beyond::auto_vs_cublas::decode_m64": (
        "ablations/HYPOTHESES.md H92(b): `auto` without its token cluster 0.95-1.02 of cuBLAS's time at M = 1-96; "
        "at M = 64 the runs measured its lower edge (0.9449-0.9579 in the pin runs, geometric mean 0.9505; 0.9523 "
        "at 1d1f9c2, 0.948 at 8fb4f1b): a hypothesis centred 3.5% slower than what ran"
    ),
}
# Trials re-pinned by hand from a run after a measurement change named in advance: the distiller keeps their entry
# in pins/h200.json as it stands (its runs and its window's derivation are in its `measured`): trial -> the cause.
POWER_CAP = (
    "H135, H154: sustained runs back to back since ec208d9 put the clock trials under the power cap (busy 0.91-0.97, "
    "was 0.38-0.46); their probed-clock windows rebuilt by tools/clock_pins.py from the whole suites since"
)
REPINNED = {
    "clock::mma_only::square4096": POWER_CAP,
    "clock::mma_only::decode_attn_out": POWER_CAP,
    "clock::wide_tile::prefill_attn_out": POWER_CAP,
    "clock::multicast::decode_attn_out": POWER_CAP,
}
# Trials whose "no change" hypothesis the runs cannot settle (HYPOTHESES.md H131: at the trial's measured truth and
# spreads, under 90% of simulated runs say "no change"), pinned the same way: trial -> the hypothesis and why.
UNSETTLED = {
    "stages::two_ctas_an_sm::decode_m1": (
        "ablations/HYPOTHESES.md H86(b): 11 stages, the deepest ring that keeps two CTAs an SM, within the band of 8; "
        "not settled (H131): 1.0078-1.0180 over five runs (1142956 to 3ad3d86, mean 1.0117), within 1% of the band's "
        "edge with a 0.27% shift between machine starts, \"no change\" in 60% of simulated runs"
    ),
}
# Both are pinned from the pin runs and kept out of the kinds' priors.
NOT_HELD = {**REFUTED, **UNSETTLED}
HEURISTIC = "cublasLt[algo 0]"
RATIO_KINDS = ("RatioNear", "EffectNear", "Verdict")


def read_run(name):
    """A committed run by its name (results/h200/NAME.json), plain or kept as NAME.json.xz."""
    path = os.path.join(H200, name + ".json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    with lzma.open(path + ".xz", "rt") as f:
        return json.load(f)


def load_run(files):
    trials = {}
    env = None
    for f in files:
        d = read_run(f)
        env = d["environment"]
        for t in d["trials"]:
            trials[t["name"]] = t
    return env, trials


def kind_of(expect):
    return next(iter(expect)) if isinstance(expect, dict) else expect


def cublas_label(t):
    for v in t["variants"]:
        if v["label"].startswith("cuBLAS ("):
            return v["label"][len("cuBLAS ("):-1]
    return None


def own_labels(t):
    return tuple(v["label"] for v in t["variants"] if not v["label"].startswith("cuBLAS"))


def committed_paths(env):
    """Shape key -> committed cuBLAS path, where pins/cublas-paths.json holds one for this GPU and library."""
    if not os.path.exists(PATHS_FILE):
        return {}
    out = {}
    for c in json.load(open(PATHS_FILE))["choices"]:
        p = c["path"]
        out[c["key"].split("|")[-1]] = "cublasGemmEx" if p == "GemmEx" else f"cublasLt[algo {p['Lt']}]"
    return out


def shape_key(t):
    s = t["shape"]
    return f"{s['m']}x{s['n']}x{s['k']}" if s else None


def pooled_sd(vars_dfs):
    """The kind's pooled between-run sd: the root of the df-weighted mean of the trials' variances."""
    return math.sqrt(sum(v * df for v, df in vars_dfs) / sum(df for _, df in vars_dfs))


def window(xs, floor_sd):
    """(centre, half-width, sd) of one more run's log ratio, from the runs' log ratios: Z * s * sqrt(1 + 1/n),
    s the trial's own sd where larger than its kind's pooled sd (a trial is never trusted to scatter less than
    its kind from a few runs)."""
    n = len(xs)
    m = sum(xs) / n
    own = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    s = max(own, floor_sd)
    return m, Z * s * math.sqrt(1 + 1 / n), s


# H157: a ratio that follows its comparison's SM clock. Where a trial's pin runs (at least CLOCK_RUNS, clocks
# spread over at least CLOCK_SPAN_MHZ) show |r| >= CLOCK_R between log ratio and the comparison's median clock, the
# pin's window keeps its width and follows the line through them (RatioAtClock): centred at a run's own clock, cut
# at the band's edge where it would hold the whole band (harness/trial/expectation.rs). The width stays the fixed
# window's: one comparison of these trials resolves no better (H157).
CLOCK_R = 0.9
CLOCK_RUNS = 6
CLOCK_SPAN_MHZ = 60


def line_fit(points):
    """Least squares of log ratio on clock over [(clock MHz, log ratio)]: (mean clock, mean log ratio, slope per
    MHz, r, residual sd on n - 2 df), or None where the clocks or the ratios do not vary (or under 3 points).
    tools/clock_ratio.py reads its lines through this too."""
    n = len(points)
    if n < 3:
        return None
    mk = sum(k for k, _ in points) / n
    mx = sum(x for _, x in points) / n
    sxx = sum((k - mk) ** 2 for k, _ in points)
    syy = sum((x - mx) ** 2 for _, x in points)
    if sxx == 0 or syy == 0:
        return None
    slope = sum((k - mk) * (x - mx) for k, x in points) / sxx
    residual = math.sqrt(sum((x - mx - slope * (k - mk)) ** 2 for k, x in points) / (n - 2))
    return mk, mx, slope, slope * math.sqrt(sxx / syy), residual


def clock_line(rows):
    """(ratio at the mean clock, mean clock, slope of log ratio per MHz, r) of the pin runs' log ratios on their
    clocks, or None where the trial does not qualify for a pin on the clock."""
    pts = [(k, x) for _, x, _, _, k in rows if k and x is not None]
    if len(pts) < CLOCK_RUNS or max(k for k, _ in pts) - min(k for k, _ in pts) < CLOCK_SPAN_MHZ:
        return None
    fit = line_fit(pts)
    if not fit or abs(fit[3]) < CLOCK_R:
        return None
    mk, mx, slope, r, _ = fit
    return math.exp(mx), mk, slope, r


def start_rule(env):
    """`fixed` where a run's rounds began from the fixed start (GEMM_ABLATE_RANDOMIZE with `scheduler`, H146),
    `drawn` otherwise: from the record's own field, or in records before it from the setting where it was set."""
    words = env.get("randomize") or dict(env.get("settings", [])).get("GEMM_ABLATE_RANDOMIZE", "none")
    return "fixed" if "scheduler" in words.split(",") else "drawn"


def one_start_rule(named_envs):
    """The start rule every named run shares; a pin never mixes runs of the two (H149)."""
    rules = {name: start_rule(env) for name, env in named_envs}
    if len(set(rules.values())) > 1:
        raise SystemExit(f"pin runs under different start rules (H149): {rules}")
    return next(iter(rules.values()), "drawn")


def gather(suite, paths):
    """Reference records and, per pinned ratio trial, [(run name, log ratio, ratio, verdict, SM clock MHz)] that
    qualify."""
    runs = [(name, *load_run(files)) for name, files in PIN_RUNS[suite]]
    one_start_rule([(name, env) for name, env, _ in runs])
    ref_name, _, ref = runs[-1]
    pinned = {}
    left_out = defaultdict(list)
    for name, t in ref.items():
        src = t["expectation"]["source"]
        if not (isinstance(src, dict) and "Pinned" in src) and name not in NOT_HELD:
            continue
        pinned[name] = []
        want_path = paths.get(shape_key(t), HEURISTIC) if cublas_label(t) else None
        for run_name, _, trials in runs:
            r = trials.get(name)
            if r is None:
                continue
            if own_labels(r) != own_labels(t):
                left_out[name].append(f"{run_name}: other variants")
                continue
            if want_path and cublas_label(r) != want_path:
                left_out[name].append(f"{run_name}: cuBLAS {cublas_label(r)}, not the committed {want_path}")
                continue
            # H137: every run counts, on either kind of machine; a run that failed its expectation stays out,
            # but for a second-kind run of a trial whose kernel's time moved with the machine (cause named).
            named_cause = run_name in OTHER_MACHINE_RUNS and name in MACHINE_DEPENDENT
            if not r["passed"] and not named_cause:
                left_out[name].append(f"{run_name}: failed its expectation then")
                continue
            obs = r["observed"]
            c = obs.get("Compared") if isinstance(obs, dict) else None
            clock = (r.get("comparison") or {}).get("sm_clock_median_mhz")
            pinned[name].append((run_name, c and math.log(c["ratio"]), c and c["ratio"], c and c["verdict"], clock))
    return ref_name, ref, pinned, left_out


def main():
    check = "--check" in sys.argv
    out_pins = []
    spreads = {}
    report = []
    gpu = None
    loo_total = loo_red = 0
    n_ratio_pins = 0
    per_suite = {}
    for suite in PIN_RUNS:
        env, _ = load_run(PIN_RUNS[suite][-1][1])
        gpu = f"{env['device']['name']}, driver {env['device']['driver_version']}"
        paths = committed_paths(env)
        per_suite[suite] = (paths, *gather(suite, paths))
        for name, rows in per_suite[suite][3].items():
            if kind_of(per_suite[suite][2][name]["expectation"]["expect"]) in RATIO_KINDS and rows:
                n_ratio_pins += 1

    # Priors per kind from every trial measured in two runs or more, both suites together.
    by_kind = defaultdict(list)
    kinds = {}
    for suite, (_, _, ref, pinned, _) in per_suite.items():
        for name, rows in pinned.items():
            t = ref[name]
            if kind_of(t["expectation"]["expect"]) not in RATIO_KINDS:
                continue
            kinds[name] = "cublas" if cublas_label(t) else "ours"
            xs = [x for _, x, *_ in rows]
            # A refuted hypothesis's runs, and a trial whose kernel's time moves with the machine (H132), leave the
            # kind's prior.
            if len(xs) >= 2 and name not in NOT_HELD and name not in MACHINE_DEPENDENT:
                m = sum(xs) / len(xs)
                by_kind[kinds[name]].append((sum((x - m) ** 2 for x in xs) / (len(xs) - 1), len(xs) - 1))
    floors = {k: pooled_sd(v) for k, v in by_kind.items()}
    for k, sd in floors.items():
        dfs = sum(df for _, df in by_kind[k])
        spreads[k] = {
            "sd": sd,
            "from": f"pooled over {len(by_kind[k])} pinned trials measured in two or more of the pin runs ({dfs} df)",
        }
        report.append(f"kind {k}: pooled sd {100 * sd:.2f}% from {len(by_kind[k])} trials, {dfs} df")

    spans = []
    cuts = []
    clocks_pinned = []
    wide = []
    missing = []
    with open(os.path.join(ROOT, "pins", "h200.json")) as f:
        standing = {p["trial"]: p for p in json.load(f)["pins"]}
    out_pins += [standing[name] for name in sorted(REPINNED) if name in standing]
    for suite, (paths, ref_name, ref, pinned, left_out) in per_suite.items():
        for name in sorted(pinned):
            if name in REPINNED:
                continue
            t = ref[name]
            old = t["expectation"]
            okind = kind_of(old["expect"])
            rows = pinned[name]
            if okind not in RATIO_KINDS:
                # Not a ratio: the value stays the one the code pinned, with its runs (not re-derived).
                src = old["source"]["Pinned"]
                carried = " (carried from the code's pin, not re-derived by tools/pins.py)"
                # A reference run that judged by the pin file already carries the note.
                measured = src["measured"] if src["measured"].endswith(carried) else src["measured"] + carried
                out_pins.append({"trial": name, "expect": old["expect"], "runs": src["runs"], "measured": measured})
                continue
            if not rows:
                missing.append(f"{name}: {'; '.join(left_out[name]) or 'no run'}")
                continue
            kind = kinds[name]
            xs = [x for _, x, *_ in rows]
            # Leave one run out: judge each run against the pin the others build (H137: one window over every run,
            # both kinds of machine).
            if len(xs) >= 2:
                for j in range(len(xs)):
                    m, w, _ = window(xs[:j] + xs[j + 1:], floors[kind])
                    loo_total += 1
                    if abs(xs[j] - m) > w:
                        loo_red += 1
                        report.append(f"leave-one-out red: {name} run {rows[j][0]} {rows[j][2]:.4f} "
                                      f"against {math.exp(m):.4f} +-{100 * (math.exp(w) - 1):.2f}%")
            m, w, s = window(xs, floors[kind])
            mean = m
            ratio, tol = math.exp(m), math.exp(w) - 1
            uncut_tol = tol
            lo, hi = ratio / (1 + tol), ratio * (1 + tol)
            cut = None
            if lo <= 1 / (1 + BAND) and hi >= 1 + BAND:
                # A window across the whole band would pass any verdict: keep the side every pin run showed (the
                # mean's side of 1) and cut the other at the band's edge, so that losing the direction fails.
                if ratio >= 1:
                    lo = 1 / (1 + BAND)
                else:
                    hi = 1 + BAND
                outside = [r for _, _, r, *_ in rows if not lo <= r <= hi]
                if outside:
                    spans.append(f"{name}: cut window [{lo:.4f}, {hi:.4f}] leaves out pin runs {outside}")
                cut = f"cut at the band's edge from [{ratio / (1 + tol):.4f}, {ratio * (1 + tol):.4f}]"
                ratio = math.sqrt(lo * hi)
            if cut:
                # Rounded inwards, so that the written window stays inside the cut.
                ratio = round(ratio, 5)
                tol = math.floor((min(hi / ratio, ratio / lo) - 1) * 1e5) / 1e5
            else:
                ratio, tol = round(ratio, 5), round(tol, 5)
            expect = {"EffectNear" if okind == "EffectNear" else "RatioNear": {"ratio": ratio, "tolerance": tol}}
            # An effect's pin keeps its side of 1, which a line on the clock does not say: it stays fixed.
            line = (None if name in NOT_HELD or name in MACHINE_DEPENDENT or okind == "EffectNear"
                    else clock_line(rows))
            if line:
                at_ratio, mk, slope, r_line = line
                tol = round(uncut_tol, 5)
                expect = {"RatioAtClock": {"ratio": round(at_ratio, 5), "mhz": round(mk, 1),
                                           "slope": round(slope, 8), "tolerance": tol}}
                clocks_pinned.append(f"{name}: r {r_line:+.2f}, {1e4 * slope:+.2f}% per 100 MHz, "
                                     f"{at_ratio:.4f} at {mk:.0f} MHz, +-{100 * tol:.1f}%")
            pin = {
                "trial": name,
                "expect": expect,
                "runs": [f for rn, *_ in rows for n2, files in PIN_RUNS[suite] if n2 == rn for f in files
                         if name in load_cache(f)],
                "measured": ", ".join(f"{r:.4f} ({rn}, {v})" for rn, _, r, v, _ in rows)
                + f"; geometric mean {math.exp(mean):.4f} over {len(rows)} runs"
                + (f"; left out: {'; '.join(left_out[name])}" if left_out[name] else ""),
                "spread": {"sd": s, "from": f"the larger of {len(xs)} runs' sd and the {kind} pooled sd"},
            }
            if line:
                pin["measured"] += (f"; on the clock (H157): " + ", ".join(f"{k:.0f} MHz" for *_, k in rows)
                                    + f", r {line[3]:+.2f}")
            elif cut:
                pin["measured"] += f"; window {cut}"
                cuts.append(f"{name}: [{lo:.4f}, {hi:.4f}] ({cut})")
            if name in NOT_HELD:
                pin["refuted"] = NOT_HELD[name]
            if name in MACHINE_DEPENDENT:
                pin["measured"] += f"; depends on the machine (H132): {MACHINE_DEPENDENT[name]}"
            if cublas_label(t):
                pin["cublas_path"] = paths.get(shape_key(t), HEURISTIC)
            if tol > CAPS[kind]:
                own = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else s
                pin["process_state"] = (f"spread {100 * own:.1f}% over {len(xs)} processes; the window "
                                        f"(+-{100 * tol:.1f}%) is wider than the +-{100 * CAPS[kind]:.0f}% a window "
                                        f"of kind {kind} may be")
                wide.append(f"{name}: +-{100 * tol:.1f}% ({pin['measured']})")
            out_pins.append(pin)

    print("\n".join(report))
    print(f"Z {Z} ({n_ratio_pins} pinned ratios)")
    print(f"leave-one-out: {loo_red} red of {loo_total} judged")
    print(f"{len(wide)} windows wider than the cap (depends on process state):")
    print("\n".join("  " + w for w in wide))
    print(f"{len(clocks_pinned)} pins on the clock (H157):")
    print("\n".join("  " + c for c in clocks_pinned))
    print(f"{len(cuts)} windows cut at the band's edge:")
    print("\n".join("  " + c for c in cuts))
    print(f"{len(spans)} cut windows that leave out a pin run:")
    print("\n".join("  " + s for s in spans))
    print(f"{len(missing)} pinned trials without a qualifying run:")
    print("\n".join("  " + m for m in missing))
    if check:
        return
    doc = {
        "about": "Pinned expectations of the trials, distilled by tools/pins.py from the runs each pin names "
                 "(docs/pinning.md). Edit by re-running the distiller in a commit that names its cause.",
        "gpu": gpu,
        "rules": {
            "window": "one more run's log ratio within Z * max(s, kind's pooled sd) * sqrt(1 + 1/n) of the runs' "
                      "mean; a window across the whole band cut at the band's edge opposite the mean",
            "z": Z,
            "clock": f"H157: a trial whose pin runs (at least {CLOCK_RUNS}, clocks over at least {CLOCK_SPAN_MHZ} MHz) "
                     f"show |r| >= {CLOCK_R} between log ratio and the comparison's median SM clock keeps its "
                     "window's width about the line through them (RatioAtClock), at the run's own clock, cut at "
                     "the band's edge where it would hold the whole band",
            "caps": CAPS,
            "leave_one_out": {"judged": loo_total, "red": loo_red},
            "all_runs": "ablations/HYPOTHESES.md H137: every committed whole suite of the same kernels, both kinds "
                        "of machine, but the held-out runs",
            "pin_runs": {s: [n for n, _ in r] for s, r in PIN_RUNS.items()},
        },
        "spreads": spreads,
        "pins": out_pins,
    }
    out_file = os.path.join(ROOT, "pins", "h200.json")
    doc["held_out"] = HELD_OUT
    pinned_from = {r for p in out_pins for r in p["runs"]}
    for suite, runs in doc["held_out"].items():
        if pinned_from & set(runs):
            raise SystemExit(f"held-out runs of {suite} built a pin: {sorted(pinned_from & set(runs))}")
    text = json.dumps(doc, indent=1) + "\n"
    if "--verify" in sys.argv:
        with open(out_file) as f:
            same = f.read() == text
        print(f"pins/h200.json {'is' if same else 'is NOT'} what tools/pins.py distils from the committed runs")
        sys.exit(0 if same else 1)
    os.makedirs(os.path.join(ROOT, "pins"), exist_ok=True)
    with open(out_file, "w") as f:
        f.write(text)
    print(f"wrote pins/h200.json: {len(out_pins)} pins")


_cache = {}


def load_cache(f):
    if f not in _cache:
        _cache[f] = {t["name"] for t in read_run(f)["trials"]}
    return _cache[f]


def digamma(x):
    """psi(x) for x > 0: recurrence up to 6, then the asymptotic series."""
    r = 0.0
    while x < 6:
        r -= 1 / x
        x += 1
    f = 1 / (x * x)
    return r + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


def trigamma(x):
    """psi'(x) for x > 0: recurrence up to 6, then the asymptotic series."""
    r = 0.0
    while x < 6:
        r += 1 / (x * x)
        x += 1
    f = 1 / (x * x)
    return r + 1 / x + f / 2 + f / x * (1 / 6 - f * (1 / 30 - f * (1 / 42 - f / 30)))


def fit_prior(variances, dfs):
    """(s0^2, d0): a scaled inverse chi-square fitted to sample variances by the moments of log s^2 (Smyth 2004,
    limma's fitFDist), as tools/process_spread.py does with scipy."""
    pairs = [(v, d) for v, d in zip(variances, dfs) if v > 0]
    e = [math.log(v) - digamma(d / 2) + math.log(d / 2) for v, d in pairs]
    mean = sum(e) / len(e)
    excess = sum((x - mean) ** 2 for x in e) / (len(e) - 1) - sum(trigamma(d / 2) for _, d in pairs) / len(pairs)
    if excess <= 0:
        return math.exp(mean), math.inf
    lo, hi = 1e-8, 1e8
    for _ in range(300):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if trigamma(mid) > excess else (lo, mid)
    d0 = 2 * mid
    return math.exp(mean + digamma(d0 / 2) - math.log(d0 / 2)), d0


def run_prior():
    """The between-run prior per kind: how far one run's log ratio of a trial lies from the trial's mean over runs
    of identical code on separate machine starts (the pin runs, passed or not: a red run is still a run), fitted
    over every comparison trial that two or more pin runs measured on the same variants and cuBLAS path. Then
    `baseline`'s rule on every pair of pin runs: a change called slower or faster between identical code is false."""
    per_kind = defaultdict(lambda: ([], []))
    by_run = defaultdict(dict)
    for suite in PIN_RUNS:
        runs = [(name, *load_run(files)) for name, files in PIN_RUNS[suite]]
        ref = runs[-1][2]
        for tname, t in ref.items():
            c0 = (t.get("observed") or {}).get("Compared") if isinstance(t.get("observed"), dict) else None
            if not c0:
                continue
            xs = []
            for rn, env, trials in runs:
                r = trials.get(tname)
                c = (r or {}).get("observed", {})
                c = c.get("Compared") if isinstance(c, dict) else None
                if not c or own_labels(r) != own_labels(t) or cublas_label(r) != cublas_label(t):
                    continue
                if not math.isfinite(c["log_se"]):
                    continue
                xs.append(c["log_mean"])
                by_run[(suite, rn)][tname] = (c["log_mean"], c["log_se"], "cublas" if cublas_label(t) else "ours")
            if len(xs) >= 2:
                m = sum(xs) / len(xs)
                k = "cublas" if cublas_label(t) else "ours"
                per_kind[k][0].append(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
                per_kind[k][1].append(len(xs) - 1)
    fitted = {}
    for k, (v, d) in sorted(per_kind.items()):
        s02, d0 = fit_prior(v, d)
        fitted[k] = {"sd": math.sqrt(s02), "df": d0, "trials": len(v)}
        print(f"between runs, {k}: s0 {100 * math.sqrt(s02):.3f}%, d0 {d0:.2f} over {len(v)} trials")

    def t_quantile(p, df):
        # Student t quantile by bisection on the regularized incomplete beta, via math.lgamma and a series.
        def cdf(t):
            x = df / (df + t * t)
            return 1 - 0.5 * betainc(df / 2, 0.5, x) if t > 0 else 0.5 * betainc(df / 2, 0.5, x)
        lo, hi = 0.0, 1e6
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
        return (lo + hi) / 2

    calls = total = 0
    band = math.log(1 + BAND)
    keys = sorted(by_run)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if a[0] != b[0]:
                continue
            for tname in set(by_run[a]) & set(by_run[b]):
                (ya, sa, k), (yb, sb, _) = by_run[a][tname], by_run[b][tname]
                p = fitted[k]
                var = max(2 * p["sd"] ** 2, sa * sa + sb * sb)
                h = t_quantile(0.975, p["df"]) * math.sqrt(var)
                d = yb - ya
                total += 1
                calls += (d - h > band) or (d + h < -band)
    print(f"baseline's rule between pin runs of identical code: {calls} of {total} changes called slower or faster "
          "(in sample: the prior comes from these runs)")
    env, _ = load_run(PIN_RUNS["ablations"][-1][1])
    doc = {
        "about": "How far one whole-suite run's log ratio of a trial lies from the trial's mean over runs of identical "
                 "code on separate machine starts: a scaled inverse chi-square (sd^2 on df degrees of freedom) per GPU "
                 "and kind, fitted by tools/pins.py --run-prior to the pin runs. `baseline` adds it to both runs of a "
                 "change. Edit by re-running the tool in a commit that names its runs.",
        "gpus": {env["device"]["name"]: {
            "driver": env["device"]["driver_version"],
            "runs": {s: [n for n, _ in r] for s, r in PIN_RUNS.items()},
            "kinds": fitted,
        }},
    }
    with open(os.path.join(ROOT, "pins", "run-prior.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote pins/run-prior.json")


def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b) by its continued fraction (Numerical Recipes' Lentz form)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log(1 - x))
    if x > (a + 1) / (a + b + 2):
        return 1 - betainc(b, a, 1 - x)
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1 + num * d
        d = 1 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1 + num / (c if abs(c) > 1e-300 else 1e-300)
        f *= c * d
        if abs(c * d - 1) < 1e-14:
            break
    return front * (f - 1) / a


if __name__ == "__main__":
    if "--run-prior" in sys.argv:
        run_prior()
    else:
        main()
