#!/usr/bin/env bash
# pfi export end to end (issue 15): nothing written into the store by hand.
# A real pfid on the sim backend runs two modelled jobs (a dense one on GPUs
# 0-1, a less power-bound one on GPU 2); the test caps all three GPUs to 600,
# 500, 400 and 300 W through pfid's API and plays the trainers, reporting
# the tokens/s of the GPU model's curve (`pfi model`) at each level, +-1%
# in turn (so each level's mean is the model's). pfid records the
# steady-state points itself (job_points); `pfi export --db` of its store
# then gives a sweeps.csv that `pfi index` accepts, and each job's PFI
# equals the model's, computed here independently from `pfi model`'s points
# with the ratio definition (mean over capped runs of power shed / throughput
# lost). Tolerance 1e-6 relative: the power is the sim's (the model's, by
# construction of the sim backend), the tokens/s means are exact, so only
# rounding (%.10g in sweeps.csv) separates the two.
# The export opens the store read-only: it runs beside pfid while pfid
# writes (and pfid goes on writing), leaves a stopped pfid's store and a
# schema-1 store (tests/data/store-v1/) byte for byte as they were, with
# nothing in their WAL.
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_BIN:?}" "${PFI_SOURCE_DIR:?}"
DENSE=compute=0.85,sm=0.9,dram=0.25,tensor=0.6,tput=16000
MEM=compute=0.6,sm=0.8,dram=0.6,tensor=0.3,tput=9000
CAPS=(600 500 400 300)
"$PFI_BIN" model --job "$DENSE" --cap 700,600,500,400,300 --gpus 2 --json >"$WORK/dense.json" || fail "pfi model"
"$PFI_BIN" model --job "$MEM" --cap 700,600,500,400,300 --gpus 1 --json >"$WORK/mem.json" || fail "pfi model"
# tput FILE CAP: the model's total tokens/s at CAP.
tput() {
    python3 -c "import json; print(next(p for p in json.load(open('$1'))['points'] if p['cap_w']==$2)['tput_total'])"
}
cat >"$WORK/jobs.csv" <<'CSV'
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,warmup_s,startup_s
0,dense,0.85,0.9,0.25,0.6,16000,0.4,0.2
1,dense,0.85,0.9,0.25,0.6,16000,0.4,0.2
2,mem,0.6,0.8,0.6,0.3,9000,0.4,0.2
CSV
DB=$WORK/pfid.db
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 3 --sim-jobs "$WORK/jobs.csv" \
    --db "$DB" --interval 0.1 --phase-hold 0.2
req POST /v1/jobs '{"id":"dense","gpus":[0,1],"arch":"dense","task":"pt"}'; expect 201 "register dense"
req POST /v1/jobs '{"id":"mem","gpus":[2],"arch":"moe","task":"ft"}'; expect 201 "register mem"

steady_at() { # steady_at JOB W
    req GET "/v1/jobs/$1/curve" "" no
    [ "$(jq_py "d['steady'] and d['level_w'] == $2")" = True ]
}
# level W: both jobs steady at W, then four reports each (the model's
# tokens/s at W times 1.01, 0.99, 1.01, 0.99).
level() {
    local w=$1 job f
    for job in dense mem; do wait_until 10 steady_at $job "$w" || fail "$job not steady at $w W: $BODY"; done
    local td tm
    td=$(tput "$WORK/dense.json" "$w")
    tm=$(tput "$WORK/mem.json" "$w")
    for f in 1.01 0.99 1.01 0.99; do
        req POST /v1/jobs/dense/throughput "{\"tokens_per_s\":$(python3 -c "print($td * $f)")}"
        [ "$CODE" = 200 ] || fail "report: $CODE $BODY"
        req POST /v1/jobs/mem/throughput "{\"tokens_per_s\":$(python3 -c "print($tm * $f)")}"
        [ "$CODE" = 200 ] || fail "report: $CODE $BODY"
        sleep 0.1
    done
}
level 700
for w in "${CAPS[@]}"; do
    for g in 0 1 2; do
        req PUT /v1/gpus/$g/limit "{\"watts\":$w,\"expires_s\":300}"; [ "$CODE" = 200 ] || fail "GPU $g to $w W: $BODY"
    done
    level "$w"
done
for g in 0 1 2; do req DELETE /v1/gpus/$g/limit; [ "$CODE" = 200 ] || fail "lift GPU $g: $BODY"; done
ok "pfid saw both jobs at 700, 600, 500, 400 and 300 W"

# export_ok JSON: both jobs exported with their five points.
export_ok() {
    python3 - "$1" <<'PY' || fail "export JSON: $(cat "$1")"
import json, sys
j = {x["job"]: x for x in json.load(open(sys.argv[1]))["jobs"]}
assert j["dense"]["exported"] and j["dense"]["points"] == 5, j
assert j["mem"]["exported"] and j["mem"]["points"] == 5, j
PY
}
samples() { python3 -c "import sqlite3,sys; print(sqlite3.connect('file:%s?mode=ro' % sys.argv[1], uri=True).execute('SELECT count(*) FROM samples').fetchone()[0])" "$DB"; }
# pfid samples every 0.1 s meanwhile.
"$PFI_BIN" export --db "$DB" --out "$WORK/live" --json >"$WORK/live.json" 2>"$WORK/live.err" ||
    fail "export beside a running pfid: $(cat "$WORK/live.err")"
export_ok "$WORK/live.json"
N0=$(samples)
grow() { [ "$(samples)" -gt "$N0" ]; }
wait_until 5 grow || fail "pfid stopped writing after the export ($N0 samples)"
ok "export beside a running pfid; pfid goes on writing"
pfid_stop TERM
[ "$RC" = 0 ] || fail "pfid exit $RC"

SUM=$(sha256sum <"$DB")
"$PFI_BIN" export --db "$DB" --out "$WORK/out" --json >"$WORK/export.json" 2>"$WORK/export.err" ||
    fail "export: $(cat "$WORK/export.err")"
export_ok "$WORK/export.json"
[ "$(sha256sum <"$DB")" = "$SUM" ] || fail "pfi export changed the store"
[ ! -s "$DB-wal" ] || fail "pfi export wrote into the store's WAL"
"$PFI_BIN" index --json "$WORK/out/sweeps.csv" >"$WORK/index.json" 2>"$WORK/index.err" ||
    fail "pfi index refused the export: $(cat "$WORK/index.err")"
python3 - "$WORK/index.json" "$WORK/dense.json" "$WORK/mem.json" <<'PY' || fail "PFI: $(cat "$WORK/index.json")"
import json, sys
got = {g["group"]: g for g in json.load(open(sys.argv[1]))["groups"]}
for name, path, gpus in (("dense", sys.argv[2], 2), ("mem", sys.argv[3], 1)):
    pts = json.load(open(path))["points"]
    top = max(pts, key=lambda p: p["cap_w"])
    r = [(1 - p["power_total_w"] / top["power_total_w"]) / (1 - p["tput_total"] / top["tput_total"])
         for p in pts if p is not top]
    want = sum(r) / len(r)
    g = got[name]
    assert g["gpus"] == gpus and g["n_runs"] == 5, g
    assert abs(g["pfi"] - want) <= 1e-6 * want, (name, g["pfi"], want)
    print("ok: %s: PFI %.6f, the model's %.6f" % (name, g["pfi"], want))
assert abs(got["dense"]["pfi"] - got["mem"]["pfi"]) > 0.01, "the two jobs' PFIs should differ"
PY
ok "pfi index on the export: each job's PFI is the GPU model's"

# The telemetry row of each job is its GPUs' samples at its uncapped point:
# the model's per-GPU power at 700 W.
python3 - "$WORK/out/telemetry.csv" "$WORK/dense.json" "$WORK/mem.json" <<'PY' || fail "telemetry: $(cat "$WORK/out/telemetry.csv")"
import csv, json, sys
rows = {r["group"]: r for r in csv.DictReader(open(sys.argv[1]))}
for name, path, sm in (("dense", sys.argv[2], 0.9), ("mem", sys.argv[3], 0.8)):
    top = next(p for p in json.load(open(path))["points"] if p["cap_w"] == 700)
    r = rows[name]
    assert abs(float(r["DCGM_FI_DEV_POWER_USAGE"]) - top["power_w"]) < 1.0, (name, r, top["power_w"])
    assert abs(float(r["DCGM_FI_PROF_SM_ACTIVE"]) - sm) < 1e-6, (name, r)
PY
ok "telemetry rows at the uncapped point"

V1=$PFI_SOURCE_DIR/tests/data/store-v1/pfid-v1.db
cp "$V1" "$WORK/v1.db"
"$PFI_BIN" export --db "$WORK/v1.db" --out "$WORK/v1" --json >"$WORK/v1.json" 2>"$WORK/v1.err" ||
    fail "export of a schema-1 store: $(cat "$WORK/v1.err")"
cmp -s "$WORK/v1.db" "$V1" || fail "pfi export changed (migrated?) a schema-1 store"
[ ! -s "$WORK/v1.db-wal" ] || fail "pfi export wrote into a schema-1 store's WAL"
python3 - "$WORK/v1.json" <<'PY' || fail "schema-1 export: $(cat "$WORK/v1.json")"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
assert [x["job"] for x in j] == ["moe-ft", "llama-70b-pt"] and not any(x["exported"] for x in j), j
PY
ok "stores left as they were: the stopped pfid's, a schema-1 one"
echo PASS
