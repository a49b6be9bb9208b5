#!/usr/bin/env bash
# Did a refactor change any compiled kernel? Compiles every program the trial lists use (the compile:: CPU trials,
# NVRTC on the loader path) at two commits into separate caches and compares the cubins by variant name.
# Usage, from the repository root: tools/cubin-identity.sh BEFORE_COMMIT [AFTER_COMMIT, default the working tree]
set -euo pipefail
before=$1; after=${2:-}
work=$(mktemp -d)
compile() { # $1 = source tree, $2 = cache dir. The test binaries run directly, as on the GPU machine.
  # One target folder per tree: with a shared one, cargo took the second tree's (older) files as built already and
  # ran the first tree's binaries twice, so "identical" compared a tree with itself (found at 2079873).
  local target="$work/target-$(basename "$2")"
  (cd "$1" && CARGO_TARGET_DIR="$target" cargo build --release --quiet --tests)
  for t in ablations microbench; do
    bin=$(ls -t "$target"/release/deps/$t-* | grep -v '\.d$' | head -1)
    (cd "$1" && GEMM_ABLATE_CACHE="$2" "$bin" compile:: >/dev/null)
  done
}
git worktree add --quiet "$work/before" "$before"
compile "$work/before" "$work/cache-before"
if [ -n "$after" ]; then git worktree add --quiet "$work/after" "$after"; src="$work/after"; else src=$(pwd); fi
compile "$src" "$work/cache-after"
python3 - "$work/cache-before" "$work/cache-after" <<'PY'
import glob, hashlib, json, sys
def load(d):
    return {json.load(open(j))["variant"]: hashlib.sha256(open(j[:-5] + ".cubin", "rb").read()).hexdigest()
            for j in glob.glob(d + "/*.json")}
a, b = load(sys.argv[1]), load(sys.argv[2])
if not a or not b:
    # Without NVRTC on the loader path the compile:: trials are ignored and nothing is compiled: say so, not "0 identical".
    sys.exit("no cubins compiled (put libnvrtc.so.13's folder on LD_LIBRARY_PATH): nothing was compared")
same = sorted(k for k in a if b.get(k) == a[k])
changed = sorted(k for k in a if k in b and b[k] != a[k])
few = lambda names: f"{len(names)} {sorted(names)[:5]}{' ...' if len(names) > 5 else ''}"
print(f"{len(same)} identical cubins, {len(changed)} changed: {changed}; only before: {few(set(a) - set(b))}; only after: {few(set(b) - set(a))}")
sys.exit(1 if changed else 0)
PY
rc=$?
git worktree remove --force "$work/before"; [ -n "$after" ] && git worktree remove --force "$work/after"
exit $rc
