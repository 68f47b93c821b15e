#!/usr/bin/env bash
# pfi report on the embedded dataset: summary.json agrees with what pfi index,
# stats, fit and simulate print for the same data (the values their own tests
# establish), every figure file is a valid SVG/PNG/PDF of a sane size, the
# HTML fetches nothing, and an existing report folder is replaced whole.
set -euo pipefail
: "${PFI_BIN:?PFI_BIN not set (run through ctest)}"
cd "$PFI_SOURCE_DIR"
# the cairo drivers' font caches live until exit (ASan build)
export LSAN_OPTIONS="suppressions=$PFI_SOURCE_DIR/tests/integration/lsan-plplot.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
D=data/paper-h200
WORK=$(mktemp -d /tmp/pfi-report-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# an old report with a stray file: it must be gone after the run
mkdir -p "$WORK/rep/figures" && echo old >"$WORK/rep/stale.txt"
"$PFI_BIN" report --workloads 100 -o "$WORK/rep" >"$WORK/out" 2>"$WORK/err"
grep -q "^open:   file://$WORK/rep/report.html" "$WORK/out" || { echo "FAIL: no file:// URL"; cat "$WORK/out"; exit 1; }
grep -q "\[4/7\] allocation simulation 100%" "$WORK/err" || { echo "FAIL: no simulation progress"; cat "$WORK/err"; exit 1; }
[ ! -e "$WORK/rep/stale.txt" ] || { echo "FAIL: the old folder was not replaced whole"; exit 1; }
ls -a "$WORK" | grep -q '\.rep\.tmp' && { echo "FAIL: temporary folder left behind"; exit 1; }

"$PFI_BIN" index --json $D/sweeps.csv >"$WORK/index.json"
"$PFI_BIN" stats --json $D/sweeps.csv >"$WORK/stats.json"
"$PFI_BIN" fit --json --holdout $D/heldout-sweeps.csv $D/sweeps.csv $D/telemetry.csv >"$WORK/fit.json"
"$PFI_BIN" simulate --json --workloads 100 --reductions 0,30 --mix production $D/sweeps.csv $D/telemetry.csv >"$WORK/sim.json"

python3 - "$WORK" <<'PY'
import json, os, re, struct, sys
w = sys.argv[1]; rep = os.path.join(w, "rep")
S = json.load(open(f"{rep}/summary.json"))
idx, st, fit, sim = (json.load(open(f"{w}/{n}.json")) for n in ("index", "stats", "fit", "sim"))
close = lambda a, b, tol=1e-9: abs(a - b) <= tol * max(1, abs(b))
pfis = [g["pfi"] for g in idx["groups"]]
assert S["groups"] == 25 and S["heldout_groups"] == 4, S["groups"]
assert close(S["pfi"]["min"], min(pfis)) and close(S["pfi"]["max"], max(pfis)), S["pfi"]
# the paper's range (Table 6): 1.10 to 2.67
assert abs(S["pfi"]["min"] - 1.10) < 0.005 and abs(S["pfi"]["max"] - 2.67) < 0.005
for a, b in zip(S["regimes"], st["groups"]):
    assert a["name"] == b["name"] and a["n"] == b["n"] and close(a["median"], b["median"]), (a, b)
assert close(S["kruskal"]["H"], st["kruskal"]["H"]) and close(S["kruskal"]["p"], st["kruskal"]["p"])
sets = {s["predictors"]: s for s in fit["sets"]}
best = S["best_predictor"]
assert close(best["loco_r2"], sets[best["predictors"]]["loco"]["r2"]), best
assert all(s["loco"]["r2"] is None or s["loco"]["r2"] <= best["loco_r2"] + 1e-12 for s in fit["sets"])
cells = {r["policy"]: r for r in sim["results"] if abs(r["reduction"] - 0.3) < 1e-9}
base = [r for r in sim["results"] if r["reduction"] == 0 and r["policy"] == "oracle"][0]
prod = S["at_30pct"]["production"]
for pol, c in cells.items():
    assert close(prod[pol]["tput_tok_s_per_job"], c["tput_tok_s_per_job"]), pol
    assert close(prod[pol]["keeps_pct"], 100 * c["tput_tok_s_per_job"] / base["tput_tok_s_per_job"]), pol
assert set(prod) >= {"equal", "pfi", "moe-ft", "dram-copy", "learn", "oracle"}
assert S["notes"] == [], S["notes"]

def check_png(p):
    b = open(p, "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n", p
    wd, ht = struct.unpack(">II", b[16:24])
    assert 600 <= wd <= 3000 and 400 <= ht <= 3000, (p, wd, ht)
    assert 10_000 < len(b) < 5_000_000, (p, len(b))
def check_svg(p):
    t = open(p, encoding="utf-8").read()
    assert "<svg" in t[:2000] and t.rstrip().endswith("</svg>"), p
    assert 10_000 < len(t) < 5_000_000, (p, len(t))
def check_pdf(p):
    b = open(p, "rb").read()
    assert b[:5] == b"%PDF-" and b"%%EOF" in b[-1024:] and len(b) > 5_000, p
figs = ["fig3_curves", "fig4_pfi", "fig5_features", "fig6_clocks", "fig7_predicted", "fig8_gap",
        "fig9_ce", "fig10_definitions", "fig11_groups"]
assert S["figures"] == figs, S["figures"]
for f in figs:
    check_png(f"{rep}/figures/{f}.png"); check_svg(f"{rep}/figures/{f}.svg"); check_pdf(f"{rep}/figures/{f}.pdf")
for t in S["tables"]:
    head = open(f"{rep}/tables/{t}.csv").readline()
    assert "," in head, t
# Table 6 CSV: the paper's PFI beside ours, within the reconstruction's rounding
import csv
rows = list(csv.DictReader(open(f"{rep}/tables/table6_pfi.csv")))
assert len(rows) == 25 and all(abs(float(r["diff_pfi"])) < 0.006 for r in rows), rows[0]

html = open(f"{rep}/report.html", encoding="utf-8").read()
# nothing fetched: no URL outside data: URIs, no external src/href/@import/url()
for m in re.finditer(r'(?:src|href)\s*=\s*"([^"]*)"', html):
    assert m.group(1).startswith("data:") or m.group(1).startswith("#"), m.group(1)[:80]
assert not re.search(r"url\(\s*['\"]?(?!data:)", html) and "@import" not in html
assert "http://" not in html and "https://" not in html
assert html.count("<img") == len(figs) and html.count("<table>") == len(S["tables"])
print("ok: report", len(figs), "figures,", len(S["tables"]), "tables")
PY
