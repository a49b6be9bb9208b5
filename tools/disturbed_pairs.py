#!/usr/bin/env python3
"""H159 (ablations/HYPOTHESES.md): how a round's value could resist one disturbed pair, weighed on committed records.

Re-judges every comparison in the given records with each round valued (1) at the median of its pairs, (2) at
the mean without its largest and smallest pair, (3) at the mean of its pairs with any pair more than K robust
standard deviations off its round's median set aside (K = 6, 10, 15), and counts the verdicts that change,
apart for the comparisons holding a pair more than 10% off its round's median ("disturbed") and the rest.
An approximation, for choosing among the designs: each record's own interval multipliers (its half-widths over
its round-mean standard error) are kept, so only the round values change; it gives back every record's own
verdict with the plain mean. The harness's rule (`stats::set_aside_disturbed_pairs`, K = 15) is re-judged
exactly through the harness's code by `replay::tests::disturbed_pairs_set_aside_on_the_committed_whole_suites`.

Usage: python3 tools/disturbed_pairs.py results/h200/*/suite/runs/*.json.xz
"""
import glob, json, lzma, math, statistics as st, sys, collections

def verdict(mean, h, he, band):
    lo, hi = math.log(1 - band), math.log(1 + band)
    if mean + h < lo: return 'Faster'
    if mean - h > hi: return 'Slower'
    if mean - he > lo and mean + he < hi: return 'NoChange'
    return 'Inconclusive'

def rejudge(c, summary):
    rounds = [r for r in c['rounds'] if not r.get('set_aside')]
    e = c['estimate']
    if len(rounds) < 2 or not math.isfinite(e.get('log_se') or float('inf')) or e['log_se'] == 0: return None
    means = [st.mean(r['log_ratios']) for r in rounds]
    se_mean = st.stdev(means) / math.sqrt(len(means))
    if se_mean == 0: return None
    lm = e['log_mean']
    h = (math.log(e['ci'][1]) - lm); he = (math.log(e['ci_equivalence'][1]) - lm)
    qh, qe = h / se_mean, he / se_mean
    vals = [summary(r['log_ratios']) for r in rounds]
    m = st.mean(vals); se = st.stdev(vals) / math.sqrt(len(vals))
    band = e['settings']['band']
    return verdict(m, qh * se, qe * se, band), math.exp(m), (math.exp(m - qh * se), math.exp(m + qh * se)), verdict(lm, h, he, band)

def trimmed(xs):
    s = sorted(xs)
    return st.mean(s[1:-1]) if len(s) > 3 else st.mean(s)

def disturbed(c):
    """A comparison holding a pair more than 10% off its round's median."""
    return any(abs(x - st.median(r['log_ratios'])) > 0.1 for r in c['rounds'] for x in r['log_ratios'])


def set_aside_beyond(K):
    """The mean of a round's pairs, with a pair set aside where it lies more than K robust pair sds (1.4826 x the
    comparison's median absolute deviation from the round medians) off its round's median."""
    def for_comparison(c):
        dev = [abs(x - st.median(r['log_ratios'])) for r in c['rounds'] for x in r['log_ratios']]
        s = 1.4826 * st.median(dev)
        def summary(xs):
            m = st.median(xs)
            kept = [x for x in xs if abs(x - m) <= K * s]
            return st.mean(kept) if kept else m
        return summary
    return for_comparison


def comparisons(files):
    for f in files:
        d = json.load(lzma.open(f) if f.endswith('.xz') else open(f))
        for t in d['trials']:
            if t.get('comparison'):
                yield f.split('/')[2], t['name'], t['comparison']


def tally(files, summary_of):
    """Verdicts that change, apart for disturbed comparisons and the rest; and whether the plain mean gives every
    record's own verdict back."""
    counts, mismatch = collections.Counter(), 0
    for _, _, c in comparisons(files):
        r = rejudge(c, summary_of(c))
        if r is None:
            continue
        new, _, _, own = r
        mismatch += own != c['estimate']['verdict']
        kind = 'disturbed' if disturbed(c) else 'clean'
        counts[(kind, 'all')] += 1
        if new != c['estimate']['verdict']:
            counts[(kind, 'changed')] += 1
            counts[(kind, 'to inconclusive' if new == 'Inconclusive' else 'to decisive')] += 1
    return counts, mismatch


files = sys.argv[1:]
designs = [('median of the pairs', lambda c: st.median), ('mean without the largest and smallest', lambda c: trimmed)]
designs += [(f'mean, pairs beyond {K} robust sd set aside', set_aside_beyond(K)) for K in (6, 10, 15)]
for name, summary_of in designs:
    counts, mismatch = tally(files, summary_of)
    print(f'{name}: {dict(counts)} ({mismatch} records whose own verdict the plain mean does not give back)')
