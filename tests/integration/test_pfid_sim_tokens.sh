#!/usr/bin/env bash
# pfid --sim-tokens (issue 29 item 4): the sim backend's jobs report their
# modelled tokens/s as a training loop would (the path of POST
# /v1/jobs/ID/throughput), so a sim fleet needs no reporter beside it. A
# dataset job (`pfi model --job GROUP`'s calibrated parameters) on GPUs 0-1:
# its reports are 2 x the tokens/s per GPU that `pfi model` gives at the
# limit in force, 700 W and then 400 W under a cap (the independent
# reference: the same GPU model evaluated by the CLI); a job on idle GPUs
# reports nothing; a pfid without the flag reports nothing; the flag needs
# --backend sim.
. "$(dirname "$0")/pfid_lib.sh"
. "$(dirname "$0")/control_lib.sh"

dataset_jobs "$WORK/jobs.csv" 'j=Dense PT H200x8 (Mistral-Small-24B-Base-2501):0-1'
python3 - "$WORK" <<'PY' || fail "the reference"
import json, sys
w = sys.argv[1]
for p in json.load(open(w + "/model-j.json"))["points"]:
    if p["cap_w"] in (400, 700):
        open("%s/at%d" % (w, p["cap_w"]), "w").write("%r\n" % (2 * p["tput_per_gpu"]))
PY

RC=0
"$PFID_BIN" --backend nvml --sim-tokens --db "$WORK/x.db" --token-file "$TOKEN_FILE" 2>"$WORK/usage" || RC=$?
[ "$RC" = 2 ] && grep -q "need --backend sim" "$WORK/usage" || fail "--sim-tokens without the sim: exit $RC, $(cat "$WORK/usage")"

# tps_is W: job j's last report is 2 x pfi model's tokens/s per GPU at W (1e-6 relative).
tps_is() {
    req GET /v1/jobs/j "" no
    python3 -c "import json,sys; t=json.loads(sys.argv[1])['tokens_per_s']; r=float(open(sys.argv[2]).read()); sys.exit(0 if t and abs(t - r) <= 1e-6 * r else 1)" "$BODY" "$WORK/at$1"
}
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 4 --sim-jobs "$WORK/jobs.csv" --sim-tokens \
    --db "$WORK/pfid.db" --interval 0.2 --phase-hold 0.4
req POST /v1/jobs '{"id":"j","gpus":[0,1]}'; expect 201 "register j on GPUs 0-1"
req POST /v1/jobs '{"id":"idle","gpus":[2,3]}'; expect 201 "register idle on GPUs 2-3"
wait_until 10 tps_is 700 || fail "at 700 W: $BODY, expected $(cat "$WORK/at700")"
R1=$(jq_py 'd["reports"]')
sleep 1
req GET /v1/jobs/j "" no
R2=$(jq_py 'd["reports"]')
[ "$((R2 - R1))" -ge 3 ] || fail "reports every sample: $R1 then $R2 a second later"
ok "at 700 W: j reports $(jq_py 'd["tokens_per_s"]') tokens/s, pfi model's 2 x $(python3 -c "print($(cat "$WORK/at700") / 2)"), every sample ($((R2 - R1)) in 1 s)"
for g in 0 1; do req PUT /v1/gpus/$g/limit '{"watts":400,"expires_s":600}'; expect 200 "cap GPU $g at 400 W"; done
wait_until 5 tps_is 400 || fail "at 400 W: $BODY, expected $(cat "$WORK/at400")"
ok "capped at 400 W: j reports $(jq_py 'd["tokens_per_s"]') tokens/s, pfi model's at 400 W"
req GET /v1/jobs/idle "" no
[ "$(jq_py 'd["reports"], d["tokens_per_s"]')" = "0 None" ] || fail "a job on idle GPUs reported: $BODY"
ok "a job on idle GPUs reports nothing"
pfid_stop TERM

pfid_start "$WORK/pfid2.log" --backend sim --sim-gpus 4 --sim-jobs "$WORK/jobs.csv" \
    --db "$WORK/pfid2.db" --interval 0.2 --phase-hold 0.4
req POST /v1/jobs '{"id":"j","gpus":[0,1]}'; expect 201 "register j without --sim-tokens"
sleep 1.5
req GET /v1/jobs/j "" no
[ "$(jq_py 'd["reports"]')" = 0 ] || fail "without --sim-tokens, reports: $BODY"
ok "without --sim-tokens: no reports"
