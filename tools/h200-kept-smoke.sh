#!/usr/bin/env bash
# Kept worker processes (GEMM_ABLATE_WORKERS=kept, H119) on the H200 before a whole suite relies on them, about 40 s:
# four A/A comparisons in one run (the first worker of each after the first should find its kept process's GPU open),
# the fault trials (each wrong kernel, hang or trap must be caught as with fresh processes, and its kept process
# replaced), and the cuBLAS-against-CPU checks. Prints where the workers' time went. Exits non-zero when the
# mechanics failed: a fault or reference trial red, an A/A comparison that ended in anything but a comparison (an
# A/A verdict itself may be red by chance and does not count), or no worker that found a kept process.
# Run from the repository root after ../shared/tools/gpu-stage (and tools/gpu-pack.sh), with OUT set to a folder
# that comes back.
set -uo pipefail
export GEMM_ABLATE_RESULTS_DIR="$OUT/kept-smoke"
rm -rf "$GEMM_ABLATE_RESULTS_DIR"; mkdir -p "$GEMM_ABLATE_RESULTS_DIR"
for filter in noise::aa fault:: reference::cublas_vs_cpu; do
  log="$OUT/kept-smoke-${filter//:/_}.log"
  start=$(date +%s)
  # FP8's reference checks have their own first run (tools/h200-fp8-smoke.sh): kept workers' mechanics are judged
  # on what has run before.
  GEMM_ABLATE_WORKERS=kept .gpu/ablations "$filter" --skip e4m3 > "$log" 2>&1
  echo "$filter: $(( $(date +%s) - start )) s, $(grep -E '^test result' "$log")"
  grep -E "^test .*FAILED" "$log" | head
done
python3 tools/suite_cost.py "$GEMM_ABLATE_RESULTS_DIR"/*.json | tee "$OUT/kept-smoke-cost.txt"
python3 - "$GEMM_ABLATE_RESULTS_DIR" <<'PY'
import glob, json, sys
bad = []
for path in glob.glob(sys.argv[1] + "/*.json"):
    for t in json.load(open(path)).get("trials", []):
        observed = t.get("observed")
        kind = next(iter(observed)) if isinstance(observed, dict) else observed
        if t["name"].startswith("noise::aa"):
            if kind != "Compared":
                bad.append(f"{t['name']}: {kind} (an A/A comparison must end as a comparison)")
        elif not t.get("passed"):
            bad.append(f"{t['name']}: red: {t.get('judgement', '')[:200]}")
for b in bad:
    print("kept-worker mechanics:", b)
sys.exit(1 if bad else 0)
PY
rc=$?
grep -q "found it open" "$OUT/kept-smoke-cost.txt" || { echo "kept-worker mechanics: no worker found a kept process"; rc=1; }
# One archive comes back instead of a file per log and record.
tar czf "$OUT/kept-smoke.tgz" -C "$OUT" kept-smoke kept-smoke-cost.txt $(cd "$OUT" && ls kept-smoke-*.log) && rm -rf "$OUT"/kept-smoke "$OUT"/kept-smoke-*.log
exit $rc
