#!/usr/bin/env bash
# pfi sweep --via-pfid against a running pfid (sim backend): pfid sets,
# reads back and restores the caps (its API), the sweep only asks; the PFI
# is the model's within the CI and no cap is left in pfid after the sweep,
# after SIGINT, or when pfid refuses the token.
. "$(dirname "$0")/sweep_lib.sh"
sim_jobs "$WORK/jobs.csv"
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 2 --sim-jobs "$WORK/jobs.csv" --db "$WORK/pfid.db" --interval 0.2
VIA=(--via-pfid "http://127.0.0.1:$PORT" --token-file "$TOKEN_FILE")
no_caps() { # every GPU uncapped at 700 W in pfid's own view
    req GET /v1/gpus "" no
    [ "$(jq_py 'all(g["cap"] is None and g["limits"]["enforced_w"] == 700 for g in d["gpus"])')" = True ]
}

"$PFI_BIN" sweep "${FAST[@]}" "${VIA[@]}" --out "$WORK/s" --json -- "${FAKE[@]}" >"$WORK/s.json" 2>"$WORK/s.err" \
    || fail "sweep via pfid: $(cat "$WORK/s.err")"
check_pfi "$WORK/s.json"
no_caps || fail "caps left in pfid: $BODY"
grep -q "caps_set_total 6" <(curl -s "http://127.0.0.1:$PORT/metrics") || fail "pfid did not set the 6 caps"
ok "sweep through pfid: PFI is the model's within the CI, caps gone"

# SIGINT while pfid holds the second cap: the sweep asks pfid to restore.
"$PFI_BIN" sweep "${FAST[@]}" "${VIA[@]}" --out "$WORK/i" -- "${FAKE[@]}" >/dev/null 2>"$WORK/i.err" &
SW=$!
PIDS+=("$SW")
wait_until 15 grep -q "cap 550 W (2/3)" "$WORK/i.err" || fail "second cap never started: $(cat "$WORK/i.err")"
req GET /v1/gpus "" no
[ "$(jq_py 'd["gpus"][1]["cap"]["watts"]')" = 550.0 ] || fail "pfid does not hold 550 W: $BODY"
kill -INT "$SW"
set +e; wait "$SW"; rc=$?; set -e
[ "$rc" = 130 ] || fail "exit $rc: $(cat "$WORK/i.err")"
no_caps || fail "caps left after SIGINT: $BODY"
ok "SIGINT through pfid: caps restored by pfid"

# A token pfid refuses: an error, no cap.
printf 'not-the-token-0123456789\n' >"$WORK/bad-token"
chmod 600 "$WORK/bad-token"
set +e
"$PFI_BIN" sweep "${FAST[@]}" --via-pfid "http://127.0.0.1:$PORT" --token-file "$WORK/bad-token" \
    --out "$WORK/t" -- "${FAKE[@]}" 2>"$WORK/t.err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q "pfid answered 401" "$WORK/t.err" || fail "bad token: $rc $(cat "$WORK/t.err")"
no_caps || fail "a refused sweep left a cap: $BODY"
ok "a refused token: error, no cap"
pfid_stop TERM
