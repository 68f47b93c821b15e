#!/usr/bin/env bash
# Runs one golden case: NAME.args holds pfi's arguments (one line, shell words;
# $DATA is tests/data, $SHARED is ../shared/data), NAME.out the expected
# stdout+stderr, NAME.rc the expected exit status (0 if absent).
# PFI_GOLDEN_UPDATE=1 rewrites .out/.rc from the current output.
set -u
args_file=$1
base=${args_file%.args}
DATA=tests/data
SHARED=$PFI_SHARED_DIR/data
cd "$PFI_SOURCE_DIR"
eval "set -- $(cat "$args_file")"
actual=$("$PFI_BIN" "$@" 2>&1)
rc=$?
want_rc=0
[ -f "$base.rc" ] && want_rc=$(cat "$base.rc")
if [ "${PFI_GOLDEN_UPDATE:-0}" = 1 ]; then
  printf '%s\n' "$actual" > "$base.out"
  [ "$rc" -ne 0 ] && echo "$rc" > "$base.rc"
  exit 0
fi
status=0
if ! diff -u "$base.out" <(printf '%s\n' "$actual"); then
  echo "golden: output differs for $(basename "$base")"
  status=1
fi
if [ "$rc" != "$want_rc" ]; then
  echo "golden: exit status $rc, expected $want_rc"
  status=1
fi
exit $status
