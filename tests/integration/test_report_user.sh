#!/usr/bin/env bash
# pfi report on a small user dataset without telemetry: the sweeps-only
# sections, a note for each skipped one; bad paths fail before any work, and
# a failed run leaves the old report as it was. Also pfi plot.
set -euo pipefail
: "${PFI_BIN:?PFI_BIN not set (run through ctest)}"
cd "$PFI_SOURCE_DIR"
# the cairo drivers' font caches live until exit (ASan build)
export LSAN_OPTIONS="suppressions=$PFI_SOURCE_DIR/tests/integration/lsan-plplot.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
WORK=$(mktemp -d /tmp/pfi-report-user-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
S="$WORK/mine.csv"
cat >"$S" <<'CSV'
group,platform,model,arch,task,gpus,config,cap_w,power_w,throughput_tok_s
a,H200,m1,dense,pt,8,,300,2300,7000
a,H200,m1,dense,pt,8,,500,3800,9500
a,H200,m1,dense,pt,8,,700,5500,10000
b,H200,m2,moe,ft,8,,300,2200,20000
b,H200,m2,moe,ft,8,,500,3500,26000
b,H200,m2,moe,ft,8,,700,4700,27000
c,H200,m3,dense,ft,4,,300,1150,3000
c,H200,m3,dense,ft,4,,700,2700,4000
CSV
"$PFI_BIN" report --workloads 10 -o "$WORK/rep" "$S" >"$WORK/out" 2>"$WORK/err"
python3 - "$WORK/rep" <<'PY'
import json, os, sys
rep = sys.argv[1]
S = json.load(open(f"{rep}/summary.json"))
# hand-computed ratio PFI (Eq. 1): a = mean((1-2300/5500)/(1-7000/10000), (1-3800/5500)/(1-9500/10000))
a = ((1 - 2300/5500) / (1 - 0.7) + (1 - 3800/5500) / (1 - 0.95)) / 2
b = ((1 - 2200/4700) / (1 - 20/27) + (1 - 3500/4700) / (1 - 26/27)) / 2
c = (1 - 1150/2700) / (1 - 0.75)
assert abs(S["pfi"]["min"] - min(a, b, c)) < 1e-9 and abs(S["pfi"]["max"] - max(a, b, c)) < 1e-9, S["pfi"]
assert "best_predictor" not in S and "at_30pct" not in S
assert any("No telemetry" in n for n in S["notes"]), S["notes"]
assert S["tables"][:1] == ["table6_pfi"] and "table3_ablation" not in S["tables"]
assert "fig5_features" not in S["figures"] and "fig8_gap" not in S["figures"]
assert "fig3_curves" in S["figures"] and "fig11_groups" in S["figures"]
# three groups: one figure of pairs (Figs. 12-13 continue nothing and the page
# says nothing of them); Fig. 9 draws the first group, the appendix the others
assert "fig12_groups" not in S["figures"] and "fig13_groups" not in S["figures"], S["figures"]
assert S["figures"][S["figures"].index("fig9_ce"):][:2] == ["fig9_ce", "fig9_ce_groups"], S["figures"]
ft = lambda n: open(f"{rep}/figures/{n}.txt", encoding="utf-8").read().splitlines()
assert "Dense PT H200x8 (m1)" in ft("fig9_ce") and "Dense PT H200x8 (m1)" not in ft("fig9_ce_groups")
assert [t for t in ft("fig9_ce_groups") if "H200x" in t] == ["MoE FT H200x8 (m2)", "Dense FT H200x4 (m3)"]
f11 = ft("fig11_groups")
assert [t for t in f11 if "H200x" in t] == ["Dense PT H200x8 (m1)", "MoE FT H200x8 (m2)", "Dense FT H200x4 (m3)"], f11
assert "Held out" not in f11 and "Dense FT" in f11
html = open(f"{rep}/report.html", encoding="utf-8").read()
assert "Fig. 12" not in html and "Fig. 13" not in html
for fig in ("Fig. 5/14", "Fig. 7", "Fig. 8"):
    assert f"{fig}" in html and "is not drawn" in html, fig
# no paper columns filled for groups the paper does not have
import csv
rows = list(csv.DictReader(open(f"{rep}/tables/table6_pfi.csv")))
assert all(r["paper_pfi"] == "" for r in rows)
print("ok: user report", S["figures"])
PY

fail() { echo "FAIL: $*"; exit 1; }

# The same three jobs with telemetry: every statistic they cannot support is a
# note saying what is missing, never a number, and no "nan" or "inf" anywhere
# (figures/*.txt hold the texts each figure draws; its SVG has glyph outlines).
python3 - "$WORK/tm.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open("data/paper-h200/telemetry.csv")))
out = [rows[0]] + [[n] + r[1:] for n, r in zip("abc", rows[1:4])]
csv.writer(open(sys.argv[1], "w", newline="")).writerows(out)
PY
"$PFI_BIN" report --workloads 10 -o "$WORK/rep3" "$S" "$WORK/tm.csv" >"$WORK/out3" 2>"$WORK/err3"
python3 - "$WORK/rep3" "$WORK/out3" "$WORK/err3" <<'PY'
import csv, glob, json, os, re, sys
rep = sys.argv[1]
bad = re.compile(r"(?<![A-Za-z])(nan|inf|infinity)(?![A-Za-z])", re.I)
texts = [p for p in glob.glob(f"{rep}/**/*", recursive=True)
         if os.path.isfile(p) and p.endswith((".txt", ".csv", ".json", ".html"))] + sys.argv[2:]
assert len(glob.glob(f"{rep}/figures/*.txt")) >= 5, "no figure texts"
for p in texts:
    s = open(p, encoding="utf-8").read()
    s = re.sub(r'src="data:[^"]*"', "", s)  # base64 figures
    m = bad.search(s)
    assert not m, f"{p}: {s[max(0, m.start() - 60):m.end() + 20]!r}"
S = json.load(open(f"{rep}/summary.json"))
notes = " | ".join(S["notes"])
for want in ("no SEM columns", "Table 9 (the cap grid) needs", "need at least 2 groups in every regime",
             "needs at least 5 groups", "Table 12 (leverage) needs at least 5"):
    assert want in notes, (want, notes)
assert "kruskal" not in S and "table11_dunn" not in S["tables"] and "table9_grid" not in S["tables"]
assert "fig7_predicted" not in S["figures"] and "fig5_features" not in S["figures"], S["figures"]
html = open(f"{rep}/report.html", encoding="utf-8").read()
assert "Fig. 7: predicted against actual PFI is not drawn: leave-one-out with 1 feature(s) needs at least 4 groups" in html
t3 = {r["predictors"]: r for r in csv.DictReader(open(f"{rep}/tables/table3_ablation.csv"))}
assert t3["dram_copy_product"]["loo_r2"] == "" and "needs at least 4 groups" in t3["dram_copy_product"]["undefined_because"], t3
assert "need at least 15" in t3["all_dcgm"]["undefined_because"]
t6 = list(csv.DictReader(open(f"{rep}/tables/table6_pfi.csv")))
assert all(r["ci_low"] == "" and r["pfi"] != "" for r in t6), t6
rho = list(csv.DictReader(open(f"{rep}/tables/fig5_correlations.csv")))
assert all(r["rho"] == "" and r["p"] == "" and r["stars"] == "" for r in rho), rho[0]
assert all("needs at least 5 groups, has 3" in r["undefined_because"] for r in rho)
t10 = open(f"{rep}/tables/table10_regimes.csv").read()
assert "dense,2,3.178" in t10, t10
print("ok: 3 jobs with telemetry: notes, no nan")
PY

# Telemetry without two of its columns: one note names both, not the first only.
python3 - "$WORK/tm.csv" "$WORK/tm2.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
drop = {rows[0].index("DCGM_FI_PROF_DRAM_ACTIVE"), rows[0].index("DCGM_FI_PROF_NVLINK_TX_BYTES")}
csv.writer(open(sys.argv[2], "w", newline="")).writerows([[v for i, v in enumerate(r) if i not in drop] for r in rows])
PY
"$PFI_BIN" report --workloads 5 -o "$WORK/rep4" "$S" "$WORK/tm2.csv" >/dev/null 2>&1 || fail "report tm2"
grep -q "The telemetry has no value in 2 columns (DCGM_FI_PROF_DRAM_ACTIVE, DCGM_FI_PROF_NVLINK_TX_BYTES)" \
    "$WORK/rep4/summary.json" || { grep notes -A5 "$WORK/rep4/summary.json"; fail "missing telemetry columns not named"; }

# A platform pfi has no TDP for: its largest cap may not be its uncapped run.
sed -e 's/,H200,/,MI300X,/' -e 's/,700,/,750,/' "$S" >"$WORK/mi.csv"
if "$PFI_BIN" report -o "$WORK/mi" "$WORK/mi.csv" >/dev/null 2>"$WORK/e"; then fail "MI300X without --tdp accepted"; fi
grep -q 'platform "MI300X" has no TDP pfi knows.*pass --tdp' "$WORK/e" || { cat "$WORK/e"; fail "MI300X error"; }
if "$PFI_BIN" report --tdp 800 -o "$WORK/mi" "$WORK/mi.csv" >/dev/null 2>"$WORK/e"; then fail "cap below --tdp accepted"; fi
grep -q 'largest cap is 750 W, below the 800 W TDP' "$WORK/e" || { cat "$WORK/e"; fail "--tdp 800 error"; }
"$PFI_BIN" report --tdp 750 -o "$WORK/mi" "$WORK/mi.csv" >/dev/null 2>&1 || fail "--tdp 750"
grep -q "Fig. 6: SM and memory clock against the power cap is not drawn: it shows the H200" "$WORK/mi/report.html" ||
    fail "Fig. 6 drawn for an MI300X dataset"
# semicolons: an error that says so
tr ',' ';' <"$S" >"$WORK/semi.csv"
if "$PFI_BIN" report -o "$WORK/semi" "$WORK/semi.csv" >/dev/null 2>"$WORK/e"; then fail "semicolons accepted"; fi
grep -q "separated by ';'" "$WORK/e" || { cat "$WORK/e"; fail "semicolon error"; }
echo "ok: unknown platform needs --tdp; semicolons"
expect_error() { # rc pattern args...
    local pat=$1; shift
    if "$PFI_BIN" report "$@" >"$WORK/o" 2>"$WORK/e"; then fail "report $* succeeded"; fi
    grep -q -- "$pat" "$WORK/e" || { cat "$WORK/e"; fail "no '$pat' for: $*"; }
    grep -q "\[1/7\]" "$WORK/e" && fail "work started before the error: $*"
    return 0
}
before=$(cd "$WORK/rep" && find . -type f | sort | xargs md5sum)
expect_error "missing.csv" -o "$WORK/rep" "$WORK/missing.csv"
expect_error "does not exist" -o "$WORK/no/such/dir/rep" "$S"
chmod 555 "$WORK" 2>/dev/null
if [ "$(id -u)" -ne 0 ]; then expect_error "cannot write" -o "$WORK/rep2" "$S"; fi
chmod 755 "$WORK"
printf 'x\n' >"$WORK/file"
expect_error "not a folder" -o "$WORK/file" "$S"
# telemetry whose groups do not match the sweeps
expect_error "telemetry" -o "$WORK/rep" "$S" data/paper-h200/telemetry.csv
after=$(cd "$WORK/rep" && find . -type f | sort | xargs md5sum)
[ "$before" = "$after" ] || fail "a failed run changed the existing report"

# Fig. 2 from the user's own trace: two GPUs, hand-made phases (warmup to 4 s,
# startup to 9 s, training from 10 s), power 600+i and 650 W at training sample
# i of 30: the top 10% is i = 27..29, 1250 + 28 = 1278 W; 1000 tokens a second.
python3 - "$WORK/trace.csv" "$WORK/steps.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("time_s,gpu,DCGM_FI_DEV_POWER_USAGE,DCGM_FI_DEV_GPU_UTIL,DCGM_FI_DEV_FB_USED\n")
    for t in range(40):
        for g in range(2):
            fb, util = (500, 0) if t < 5 else (20000, 0) if t < 10 else (20000, 95)
            p = 80 if t < 5 else 120 if t < 10 else (600 + t - 10 if g == 0 else 650)
            f.write(f"{t},{g},{p},{util},{fb}\n")
with open(sys.argv[2], "w") as f:
    f.write("time_s,step,tokens\n" + "".join(f"{t},{t - 9},{1000 * (t - 9)}\n" for t in range(10, 40)))
PY
"$PFI_BIN" report --workloads 5 --trace "$WORK/trace.csv" --steps "$WORK/steps.csv" -o "$WORK/rt" "$S" \
    >/dev/null 2>&1 || fail "report --trace"
python3 - "$WORK/rt" <<'PY'
import json, sys
S = json.load(open(f"{sys.argv[1]}/summary.json"))
t = S["trace"]
assert (t["file"], t["run"], t["gpus"]) == ("trace.csv", "trace", 2), t
assert t["phases_s"] == {"warmup": 0, "startup": 5, "training": 10}, t
assert abs(t["power_w"] - 1278) < 1e-9 and abs(t["throughput_tok_s"] - 1000) < 1e-9, t
# the series drawn: 40 samples summed over both GPUs (peak 629 + 650), 29 rates
assert (t["samples"], t["peak_power_w"], t["throughput_reports"]) == (40, 1279, 29), t
assert S["figures"][0] == "fig2_trace", S["figures"]
f2 = open(f"{sys.argv[1]}/figures/fig2_trace.txt").read()
assert "run trace of trace.csv, 2 GPUs" in f2 and "GPU power, all GPUs (W)" in f2, f2
print("ok: Fig. 2 from a user's trace")
PY
# a bad trace given is an error naming it, before any work; none at all is a note
printf 'time_s,DCGM_FI_DEV_POWER_USAGE\n1,x\n' >"$WORK/badtrace.csv"
expect_error "badtrace.csv:2" --trace "$WORK/badtrace.csv" -o "$WORK/rt" "$S"
"$PFI_BIN" report --workloads 5 --probe "$WORK/none" -o "$WORK/rn" "$S" >/dev/null 2>&1 || fail "no probe"
grep -q "Fig. 2: a run's GPU power and throughput over time is not drawn: it needs a trace" \
    "$WORK/rn/report.html" || fail "no note for a missing trace"
"$PFI_BIN" plot trace "$WORK/trace.csv" -o "$WORK/tr.png" >/dev/null || fail "plot trace"
if "$PFI_BIN" plot curves --steps "$WORK/steps.csv" "$S" -o "$WORK/x.png" 2>/dev/null; then
    fail "--steps taken by plot curves"
fi

# pfi plot: every sweeps-only kind, each format, and gap from simulate --json
for k in curves pfi ce ce-groups definitions groups; do
    "$PFI_BIN" plot $k "$S" -o "$WORK/$k.png" >/dev/null
    head -c 8 "$WORK/$k.png" | od -An -c | grep -q "P   N   G" || fail "plot $k: not a PNG"
done
# Fig. 12 continues Fig. 11: with three groups it has nothing to draw
if "$PFI_BIN" plot groups2 "$S" -o "$WORK/g2.png" 2>"$WORK/e"; then fail "plot groups2 of 3 groups"; fi
grep -q "every group is in Fig. 11" "$WORK/e" || fail "plot groups2: $(cat "$WORK/e")"
# held-out groups drawn after the others, no telemetry needed
"$PFI_BIN" plot groups "$S" data/paper-h200/heldout-sweeps.csv -o "$WORK/gh.pdf" >/dev/null || fail "plot groups S H"
"$PFI_BIN" plot curves "$S" -o "$WORK/c.svg" >/dev/null && grep -q "<svg" "$WORK/c.svg" || fail "svg"
"$PFI_BIN" plot curves "$S" -o "$WORK/c.pdf" >/dev/null && head -c 5 "$WORK/c.pdf" | grep -q "%PDF" || fail "pdf"
"$PFI_BIN" simulate --json --workloads 10 --no-learn --reductions 10%,30% data/paper-h200/sweeps.csv \
    data/paper-h200/telemetry.csv >"$WORK/sim.json" 2>/dev/null
"$PFI_BIN" plot gap "$WORK/sim.json" -o "$WORK/gap.png" >/dev/null || fail "plot gap"
if "$PFI_BIN" plot gap "$S" -o "$WORK/bad.png" 2>"$WORK/e"; then fail "plot gap took a CSV"; fi
grep -q "mine.csv" "$WORK/e" || fail "plot gap error does not name the file"
[ ! -e "$WORK/bad.png" ] || fail "a failed plot left a file"
if "$PFI_BIN" plot curves "$S" -o "$WORK/x.gif" 2>/dev/null; then fail "gif accepted"; fi
# Figs. 11-13 split evenly when the groups do not fill ten a figure: 12 groups
# are Figs. 11 and 12 with 6 each, in the file's order, and no Fig. 13
python3 - "$WORK/g12.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("group,platform,model,arch,task,gpus,config,cap_w,power_w,throughput_tok_s\n")
    for i in range(12):
        for cap, p, t in ((300, 2300, 7000 + 100 * i), (700, 5500, 10000)):
            f.write(f"g{i:02d},H200,m{i:02d},dense,pt,8,,{cap},{p},{t}\n")
PY
"$PFI_BIN" report --workloads 5 -o "$WORK/r12" "$WORK/g12.csv" >/dev/null 2>&1 || fail "report of 12 groups"
python3 - "$WORK/r12" <<'PY'
import json, sys
rep = sys.argv[1]
S = json.load(open(f"{rep}/summary.json"))
assert [f for f in S["figures"] if f.startswith("fig1") and f.endswith("_groups")] == ["fig11_groups", "fig12_groups"], S["figures"]
for k, want in ((11, range(0, 6)), (12, range(6, 12))):
    t = [l for l in open(f"{rep}/figures/fig{k}_groups.txt", encoding="utf-8").read().splitlines() if "H200x" in l]
    assert t == [f"Dense PT H200x8 (m{i:02d})" for i in want], (k, t)
print("ok: 12 groups over Figs. 11-12")
PY
echo "ok: report without telemetry, bad paths, pfi plot"
