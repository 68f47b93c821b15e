#!/usr/bin/env bash
# CLI contract for every subcommand: `pfi CMD --help` exits 0 with a usage
# line; bad input prints nothing on stdout (no partial output) and exits 1.
set -u
cd "$PFI_SOURCE_DIR"
fail=0
err() { echo "FAIL: $*"; fail=1; }

"$PFI_BIN" --version | grep -Eq '^pfi [0-9]+\.[0-9]+\.[0-9]+$' || err "--version"
cmds=$("$PFI_BIN" --help | awk '/^Commands:/{on=1;next} on && /^  [a-z]/{print $1}')
[ -n "$cmds" ] || err "pfi --help lists no commands"
echo "$cmds" | grep -qx index || err "pfi --help does not list index"
for c in $cmds; do
  out=$("$PFI_BIN" "$c" --help 2>&1) || err "pfi $c --help exits non-zero"
  echo "$out" | grep -q "^Usage: pfi $c" || err "pfi $c --help has no 'Usage: pfi $c' line"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in tests/data/sweeps-nan.csv tests/data/sweeps-latin1.csv tests/data/sweeps-no-uncapped.csv; do
  for fmt in "" "--json"; do
    "$PFI_BIN" index $fmt --ci 100 "$f" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 1 ] || err "index $fmt $f: exit $rc, want 1"
    [ -s "$tmp/out" ] && err "index $fmt $f: wrote to stdout on error"
    grep -q "$f:[0-9]*: " "$tmp/err" || err "index $fmt $f: error does not name file:line"
  done
done
# Standard input works and gives the same answer as the file.
a=$("$PFI_BIN" index --json tests/data/sweeps-small.csv)
b=$("$PFI_BIN" index --json - < tests/data/sweeps-small.csv)
[ "$a" = "$b" ] || err "index from stdin differs from the file"
[ $fail -eq 0 ] && echo "cli: all checks passed"
exit $fail
