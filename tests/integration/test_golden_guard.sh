#!/usr/bin/env bash
# Golden tests can fail: a case whose expected output is wrong fails, also
# with PFI_GOLDEN_UPDATE=1 in the environment (once that rewrote the file and
# passed), and its files are left as they were. scripts/golden-update.sh is
# the one writer: it rewrites .out and .rc (and drops a stale .rc).
set -u
cd "$PFI_SOURCE_DIR"
fail=0
err() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp tests/golden/index_json.args "$tmp/case.args"
echo "not what pfi prints" > "$tmp/case.out"
echo 3 > "$tmp/case.rc"
for v in "" 1; do
  PFI_GOLDEN_UPDATE=$v bash tests/golden/run-one.sh "$tmp/case.args" > "$tmp/log" 2>&1 \
    && err "a wrong expectation passed (PFI_GOLDEN_UPDATE='$v')"
  grep -q "output differs" "$tmp/log" || err "no 'output differs' (PFI_GOLDEN_UPDATE='$v')"
  grep -q "exit status 0, expected 3" "$tmp/log" || err "no exit status mismatch (PFI_GOLDEN_UPDATE='$v')"
  [ "$(cat "$tmp/case.out")" = "not what pfi prints" ] || err "run-one.sh rewrote the .out"
  [ "$(cat "$tmp/case.rc")" = 3 ] || err "run-one.sh rewrote the .rc"
done

bash scripts/golden-update.sh "$PFI_BIN" "$tmp/case.args" 2> "$tmp/log" || err "golden-update failed: $(cat "$tmp/log")"
[ -f "$tmp/case.rc" ] && err "golden-update left a stale .rc for a case that exits 0"
cmp -s "$tmp/case.out" tests/golden/index_json.out || err "golden-update wrote other output than the committed case"
bash tests/golden/run-one.sh "$tmp/case.args" > "$tmp/log" 2>&1 || err "the updated case does not pass: $(cat "$tmp/log")"
exit $fail
