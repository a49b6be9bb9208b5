#!/usr/bin/env bash
# The tracked tree (mostly results/, about 63 MB) and the packed binaries no longer fit the 64 MiB a device call
# carries. The device runs need nothing under results/ (the pins are compiled into the binaries; replay:: is
# skipped there), so before a call `tools/device-slim.sh off` takes results/ out of git's index and ignores it
# locally (the files stay on disk, untouched), and right after the call `tools/device-slim.sh on` puts it back.
# Never commit in between: `git status` would show results/ as deleted. `on` is safe to run twice.
set -euo pipefail
exclude=.git/info/exclude
case "${1:-}" in
  off)
    git rm -r -q --cached results
    grep -qx '/results/' "$exclude" 2>/dev/null || echo '/results/' >> "$exclude"
    ;;
  on)
    sed -i '\|^/results/$|d' "$exclude" 2>/dev/null || true
    git reset -q -- results
    git status --short -- results | head -5
    ;;
  *) echo "usage: tools/device-slim.sh off|on" >&2; exit 2 ;;
esac
