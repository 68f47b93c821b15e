#!/usr/bin/env bash
# pfi export on a store written by a real pfid (sim backend): the job pfid
# registered and sampled, with the steady-state points of its curve (the GPU
# model's, put into job_points as the agent records them), becomes a
# sweeps.csv that pfi index accepts, whose PFI is the model's (computed here
# independently from `pfi model`'s points with the ratio definition), and a
# telemetry.csv row from the job's GPUs' samples at its uncapped point. Bad
# input: a missing store, an unknown job, missing flags.
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_BIN:?}"

DB=$WORK/pfid.db
JOBSPEC=compute=0.8,sm=0.9,dram=0.4,tensor=0.6,tput=16000
cat >"$WORK/jobs.csv" <<'CSV'
gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu
0,dense,0.8,0.9,0.4,0.6,16000
1,dense,0.8,0.9,0.4,0.6,16000
CSV
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 3 --sim-jobs "$WORK/jobs.csv" --db "$DB" --interval 0.2
req POST /v1/jobs '{"id":"dense-1","gpus":[0,1],"arch":"dense","task":"pt"}'; expect 201 "register dense-1"
req POST /v1/jobs '{"id":"short","gpus":[2],"arch":"moe","task":"ft"}'; expect 201 "register short"
sleep 2
pfid_stop TERM
[ "$RC" = 0 ] || fail "pfid exit $RC"

# The model's curve for the job on 2 GPUs, as job_points rows (totals); the
# uncapped point spans the samples pfid stored.
"$PFI_BIN" model --job "$JOBSPEC" --cap 200,300,400,500,600,700 --gpus 2 --json >"$WORK/model.json"
WANT=$(python3 - "$DB" "$WORK/model.json" <<'PY'
import json, sqlite3, sys
db, model = sys.argv[1], json.load(open(sys.argv[2]))
c = sqlite3.connect(db)
t0, t1 = c.execute("SELECT min(t), max(t) FROM samples WHERE gpu IN (0,1)").fetchone()
pts = model["points"]
for p in pts:
    c.execute("INSERT INTO job_points VALUES(?,?,?,?,?,?,?,?)",
              ("dense-1", p["cap_w"], p["power_total_w"], p["tput_total"], 40.0, 16,
               t0 if p["cap_w"] == 700 else 1.0, t1 if p["cap_w"] == 700 else 2.0))
c.execute("INSERT INTO job_points VALUES('short',700,400,5000,1,4,1,2)")
c.commit()
top = max(pts, key=lambda p: p["cap_w"])
P, T = top["power_total_w"], top["tput_total"]
r = [(1 - p["power_total_w"] / P) / (1 - p["tput_total"] / T) for p in pts if p is not top]
print("%.9f %.6f" % (sum(r) / len(r), top["power_w"]))
PY
)
read -r WANT_PFI WANT_W <<<"$WANT"

"$PFI_BIN" export --db "$DB" --out "$WORK/out" --json >"$WORK/export.json" 2>"$WORK/export.err" || fail "export: $(cat "$WORK/export.err")"
grep -q "short left out: fewer than two" "$WORK/export.err" || fail "no note for the one-point job: $(cat "$WORK/export.err")"
python3 - "$WORK/export.json" <<'PY' || fail "export JSON: $(cat "$WORK/export.json")"
import json, sys
d = json.load(open(sys.argv[1]))
j = {x["job"]: x for x in d["jobs"]}
assert j["dense-1"]["exported"] and j["dense-1"]["points"] == 6, j
assert not j["short"]["exported"], j
PY
[ "$(grep -c '^dense-1,' "$WORK/out/sweeps.csv")" = 6 ] || fail "6 runs expected: $(cat "$WORK/out/sweeps.csv")"
ls "$WORK/out" | grep -v -x -e sweeps.csv -e telemetry.csv && fail "temporary files left in the output folder"
ok "export wrote sweeps.csv and telemetry.csv"

"$PFI_BIN" index --json "$WORK/out/sweeps.csv" >"$WORK/index.json" || fail "pfi index refused the export"
python3 - "$WORK/index.json" "$WANT_PFI" <<'PY' || fail "PFI differs: $(cat "$WORK/index.json"), model $WANT_PFI"
import json, sys
d = json.load(open(sys.argv[1]))
g = d["groups"][0]
assert g["group"] == "dense-1" and g["gpus"] == 2 and g["n_runs"] == 6, g
assert abs(g["pfi"] - float(sys.argv[2])) < 1e-6, (g["pfi"], sys.argv[2])
PY
ok "pfi index on the export: PFI $WANT_PFI, the model's"

# Telemetry from the sampled GPUs at the uncapped point: the sim's 700 W
# steady state of the job (per GPU), SM activity 0.9.
python3 - "$WORK/out/telemetry.csv" "$WANT_W" <<'PY' || fail "telemetry: $(cat "$WORK/out/telemetry.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["group"] for r in rows] == ["dense-1"], rows
r = rows[0]
assert abs(float(r["DCGM_FI_DEV_POWER_USAGE"]) - float(sys.argv[2])) < 1.0, r
assert abs(float(r["DCGM_FI_PROF_SM_ACTIVE"]) - 0.9) < 1e-6, r
PY
ok "telemetry row from the job's samples"

# --since after every point: nothing but headers.
"$PFI_BIN" export --db "$DB" --out "$WORK/later" --since 4e9 >/dev/null 2>&1 || fail "--since"
[ "$(wc -l <"$WORK/later/sweeps.csv")" = 1 ] || fail "--since kept points"
# --job: one job.
"$PFI_BIN" export --db "$DB" --out "$WORK/one" --job dense-1 >/dev/null || fail "--job"
[ "$(grep -c '^dense-1,' "$WORK/one/sweeps.csv")" = 6 ] || fail "--job dense-1"
ok "--since and --job"

set +e
"$PFI_BIN" export --db "$WORK/nope.db" --out "$WORK/x" 2>"$WORK/e1"; rc1=$?
"$PFI_BIN" export --db "$DB" --out "$WORK/y" --job nope 2>"$WORK/e2"; rc2=$?
"$PFI_BIN" export --db "$DB" 2>/dev/null; rc3=$?
echo "not a store" >"$WORK/text.db"
"$PFI_BIN" export --db "$WORK/text.db" --out "$WORK/z" 2>"$WORK/e4"; rc4=$?
set -e
[ "$rc1" = 1 ] && grep -q "nope.db: No such file" "$WORK/e1" || fail "missing store: $rc1 $(cat "$WORK/e1")"
[ -e "$WORK/nope.db" ] && fail "a missing store was created"
[ "$rc2" = 1 ] && grep -q "no job 'nope'" "$WORK/e2" || fail "unknown job: $rc2 $(cat "$WORK/e2")"
[ -e "$WORK/y/sweeps.csv" ] && fail "an unknown job wrote files"
[ "$rc3" = 2 ] || fail "missing --out is not a usage error"
[ "$rc4" = 1 ] && grep -q "text.db: .*file is not a database" "$WORK/e4" || fail "not a store: $rc4 $(cat "$WORK/e4")"
[ "$(cat "$WORK/text.db")" = "not a store" ] || fail "a file that is not a store was changed"
for d in x y z; do [ -e "$WORK/$d" ] && fail "a failed export created its folder $d"; done
ok "bad input"
