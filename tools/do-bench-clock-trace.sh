#!/usr/bin/env bash
# Issue 38: why did Triton's do_bench time the Triton peer 12% slower than the harness's `sustain` at
# 8192x28672x8192? This samples the SM clock, power and clock-event reasons every 100 ms through both tools, one
# after the other on one machine, and prints each timing's clock and power: do_bench's (normal and uniform operands
# with its L2 flush, uniform back to back, torch.mm back to back), then `sustain` of the module and cuBLAS. At
# 4b4f5d0 and ed840ea it showed do_bench at the 700 W cap and 1365-1380 MHz, `sustain` at 550 W and 1920-1950 MHz:
# sustain's card was idle after every batch (H135; results/h100/ed840ea/do-bench/).
# Usage on the device, from the repository root, with OUT set: tools/do-bench-clock-trace.sh [MxNxK]
set -uo pipefail
shape=${1:-8192x28672x8192}
trace=$OUT/clock-trace.csv marks=$OUT/clock-trace-marks.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv,noheader -lms 100 \
  > "$trace" &
sampler=$!
mark() { echo "$(date +%Y/%m/%d\ %H:%M:%S.%3N) $1" >> "$marks"; }  # local time, as nvidia-smi writes its timestamps
sleep 1
CLOCK_MARKS=$marks python3 tools/h200-do-bench.py "$shape" 2>&1 | tee "$OUT/do-bench.log"
sleep 2
name=prefill_mlp_up; [[ $shape == 4096x4096x4096 ]] && name=square4096
mark sustain-start
.gpu/gemm-ablate sustain "$name" ext:triton_persistent cublas --seconds 3 2>&1 | tee "$OUT/sustain.log"
mark sustain-end
sleep 1; kill "$sampler"
# Each phase's samples: median SM clock and power, and the throttle reasons seen.
python3 - "$trace" "$marks" <<'PY'
import statistics, sys
from datetime import datetime
rows = []
for line in open(sys.argv[1]):
    parts = [p.strip() for p in line.split(",")]
    try:
        rows.append((datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f"), float(parts[1].split()[0]),
                     float(parts[2].split()[0]), parts[3]))
    except (ValueError, IndexError):
        pass
marks = {}
for line in open(sys.argv[2]):
    day, clock, name = line.split()
    marks[name] = datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M:%S.%f")
for phase in [name[:-len("-start")] for name in marks if name.endswith("-start")]:
    inside = [r for r in rows if marks[f"{phase}-start"] <= r[0] <= marks[f"{phase}-end"]]
    busy = [r for r in inside if r[2] > 150]  # samples with the card drawing real power: the kernel running
    if not busy:
        print(f"{phase}: no busy samples ({len(inside)} in all)")
        continue
    reasons = sorted({r[3] for r in busy})
    clock = statistics.median(r[1] for r in busy)
    print(f"{phase}: {len(busy)} busy samples of {len(inside)}, SM clock median {clock:.0f}"
          f" MHz (min {min(r[1] for r in busy):.0f}), power median {statistics.median(r[2] for r in busy):.0f} W,"
          f" throttle reasons {reasons}")
PY
