#!/usr/bin/env bash
# The tracked tree (mostly results/, about 200 MB) and the packed binaries no longer fit the 64 MiB a device call
# carries. The device runs need nothing under results/ (the pins are data under pins/, read from the checkout;
# replay:: is skipped there), so before a call `tools/device-slim.sh off` takes results/ out of git's index and
# ignores it locally (the files stay on disk, untouched), and right after the call `tools/device-slim.sh on` puts it
# back.
# Never commit in between: `git status` would show results/ as deleted, and a commit would delete it (it happened
# once, caught before it landed): `off` leaves a marker and a local pre-commit hook that refuses any commit while
# the marker is there; `on` removes the marker. `on` is safe to run twice.
set -euo pipefail
exclude=.git/info/exclude
marker=.git/gemm-ablate-slim
hook=.git/hooks/pre-commit
case "${1:-}" in
  off)
    git rm -r -q --cached results
    grep -qx '/results/' "$exclude" 2>/dev/null || echo '/results/' >> "$exclude"
    touch "$marker"
    if [ ! -e "$hook" ]; then
      mkdir -p .git/hooks
      printf '#!/bin/sh\nif [ -e %s ]; then echo "results/ is out of the index (tools/device-slim.sh off): run tools/device-slim.sh on before committing" >&2; exit 1; fi\n' "$marker" > "$hook"
      chmod +x "$hook"
    fi
    ;;
  on)
    sed -i '\|^/results/$|d' "$exclude" 2>/dev/null || true
    git reset -q -- results
    rm -f "$marker"
    git status --short -- results | head -5
    ;;
  *) echo "usage: tools/device-slim.sh off|on" >&2; exit 2 ;;
esac
