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

files = sys.argv[1:]
for name, summary in (('median', st.median), ('trimmed (drop min and max)', trimmed)):
    changes = collections.Counter(); n = 0; examples = []; mismatch = 0
    for f in files:
        d = json.load(lzma.open(f) if f.endswith('.xz') else open(f))
        for t in d['trials']:
            c = t.get('comparison')
            if not c: continue
            r = rejudge(c, summary)
            if r is None: continue
            n += 1
            v_new, ratio, ci, v_old_recomputed = r
            v_old = c['estimate']['verdict']
            if v_old_recomputed != v_old: mismatch += 1
            if v_new != v_old:
                changes[(v_old, v_new)] += 1
                examples.append((f.split('/')[2], t['name'], v_old, v_new, '%.4f' % c['estimate']['ratio'], '%.4f [%.4f, %.4f]' % (ratio, *ci)))
    print(f'== round value: {name}: {n} comparisons, {sum(changes.values())} verdicts change ({mismatch} whose own verdict the recomputation does not give back)')
    for k, v in changes.most_common(): print('  ', k, v)
    for e in examples: print('    ', *e)

# Split: comparisons holding a pair more than 10% off its round's median (a disturbed pair), and the rest.
def disturbed(c):
    return any(abs(x - st.median(r['log_ratios'])) > 0.1 for r in c['rounds'] for x in r['log_ratios'])
for name, summary in (('median', st.median), ('trimmed', trimmed)):
    tally = collections.Counter()
    for f in files:
        d = json.load(lzma.open(f) if f.endswith('.xz') else open(f))
        for t in d['trials']:
            c = t.get('comparison')
            if not c: continue
            r = rejudge(c, summary)
            if r is None: continue
            k = 'disturbed' if disturbed(c) else 'clean'
            tally[(k, 'all')] += 1
            if r[0] != c['estimate']['verdict']:
                tally[(k, 'changed')] += 1
                tally[(k, r[0] == 'Inconclusive' and 'to inconclusive' or 'to decisive')] += 1
    print(name, dict(tally))

# The mean of a round's pairs, with a pair set aside where it lies more than K robust pair sds (1.4826 x the
# comparison's median absolute deviation from the round medians) off its round's median.
def make_trim(c, K):
    dev = [abs(x - st.median(r['log_ratios'])) for r in c['rounds'] for x in r['log_ratios']]
    s = 1.4826 * st.median(dev)
    def summ(xs):
        m = st.median(xs)
        kept = [x for x in xs if abs(x - m) <= K * s]
        return st.mean(kept) if kept else m
    return summ
for K in (6, 10, 15):
    tally = collections.Counter(); ex = []
    for f in files:
        d = json.load(lzma.open(f) if f.endswith('.xz') else open(f))
        for t in d['trials']:
            c = t.get('comparison')
            if not c: continue
            r = rejudge(c, make_trim(c, K))
            if r is None: continue
            k = 'disturbed' if disturbed(c) else 'clean'
            tally[(k, 'all')] += 1
            if r[0] != c['estimate']['verdict']:
                tally[(k, 'changed')] += 1
                tally[(k, r[0] == 'Inconclusive' and 'to inconclusive' or 'to decisive')] += 1
                if k == 'clean' and K == 10: ex.append((f.split('/')[2], t['name'], c['estimate']['verdict'], r[0]))
    print('set aside beyond', K, 'robust sd:', dict(tally))
    for e in ex[:8]: print('   ', *e)
