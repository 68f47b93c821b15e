#!/usr/bin/env bash
# Rewrites golden expectations from pfi's current output: `make golden-update`
# (all cases) or `make golden-update GOLDEN=index_json` (some). The only way
# a .out/.rc changes; review the diff (git diff tests/golden) before committing.
# Usage: golden-update.sh PFI_BIN [NAME...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PFI_BIN=$(realpath "$1"); shift
export PFI_SOURCE_DIR=$root
export PFI_SHARED_DIR=${PFI_SHARED_DIR:-$root/../shared}
. "$root/tests/golden/lib.sh"
if [ $# -eq 0 ]; then
  set -- "$root"/tests/golden/*.args
fi
n=0
for a in "$@"; do
  case $a in */*) ;; *) a=$root/tests/golden/${a%.args}.args ;; esac
  [ -f "$a" ] || { echo "golden-update: no case $a" >&2; exit 1; }
  base=${a%.args}
  set +e; golden_run "$a"; set -e
  printf '%s\n' "$actual" > "$base.out"
  if [ "$rc" -ne 0 ]; then echo "$rc" > "$base.rc"; else rm -f "$base.rc"; fi
  n=$((n + 1))
done
echo "golden-update: rewrote $n case(s); review with: git diff --stat tests/golden" >&2
