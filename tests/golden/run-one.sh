#!/usr/bin/env bash
# Runs one golden case: NAME.args holds pfi's arguments (one line, shell words;
# $DATA is tests/data, $SHARED is ../shared/data), NAME.out the expected
# stdout+stderr, NAME.rc the expected exit status (0 if absent).
# It only ever compares: expected files are rewritten by `make golden-update`
# (scripts/golden-update.sh), never from inside ctest, so no environment
# variable can turn a failing case into a passing one.
set -u
args_file=$1
base=${args_file%.args}
. "$(dirname "$0")/lib.sh"
golden_run "$args_file"
want_rc=0
[ -f "$base.rc" ] && want_rc=$(cat "$base.rc")
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
