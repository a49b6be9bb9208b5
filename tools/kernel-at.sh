#!/usr/bin/env bash
# An external kernel as it was at an earlier commit, beside today's, for one comparison in one process (issue 38):
# exports kernels/ext/ at COMMIT (the whole folder, so that a manifest's relative `include` folders come along)
# into DIR and prints the spec of NAME's manifest there. Then
#   gemm-ablate compare SHAPE "$(tools/kernel-at.sh COMMIT NAME)" ext:NAME
# times the earlier build against today's in interleaved pairs, in the same worker processes: the one comparison
# across commits that does not inherit the drift between two runs (docs/external-kernels.md, "One process, two
# commits"). A source module is compiled anew from the earlier source; a cubin is the earlier cubin itself.
# Usage, from the repository root: tools/kernel-at.sh COMMIT NAME [DIR]   (DIR: target/kernel-at/COMMIT)
set -euo pipefail
commit=${1:?usage: tools/kernel-at.sh COMMIT NAME [DIR]}
name=${2:?usage: tools/kernel-at.sh COMMIT NAME [DIR]}
dir=${3:-target/kernel-at/$commit}
if ! git cat-file -e "$commit:kernels/ext/$name/kernel.toml" 2>/dev/null; then
  echo "error: $commit has no kernels/ext/$name/kernel.toml" >&2
  exit 2
fi
mkdir -p "$dir"
git archive "$commit" kernels/ext | tar -x -C "$dir"
echo "ext:$(cd "$dir/kernels/ext/$name" && pwd)/kernel.toml"
