#!/usr/bin/env bash
# `pfi dataset --rebuild` reproduces the committed dataset byte for byte
# (deterministic: seeded GSL RNG, fixed formatting). Its speed is measured by
# bench_dataset, not asserted here.
set -eu
cd "$PFI_SOURCE_DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PFI_BIN" dataset --rebuild --out "$tmp" > "$tmp/summary.txt"
for f in paper-h200/sweeps.csv paper-h200/heldout-sweeps.csv paper-h200/telemetry.csv \
         paper-h100/sweeps.csv paper-h100/telemetry.csv; do
  cmp "data/$f" "$tmp/$f" || { echo "rebuild differs: $f"; exit 1; }
done
# A different seed gives different noise but the same published PFI: both
# rebuilds' PFI (pfi index) against the paper's Tables 6 (25 groups), 7 (4
# held out), 8 (6 H100) and 9 (16 on the 6- and 4-cap grids) in
# ../shared/data/paper-tables, to data/README.md's 0.001; every table row
# must be found.
"$PFI_BIN" dataset --rebuild --seed 7 --out "$tmp/s7" > /dev/null
if cmp -s data/paper-h200/sweeps.csv "$tmp/s7/paper-h200/sweeps.csv"; then
  echo "seed had no effect"; exit 1
fi
for d in "$tmp" "$tmp/s7"; do
  python3 - "$PFI_BIN" "$d" "$PFI_SHARED_DIR/data/paper-tables" <<'PY'
import csv, json, subprocess, sys
pfi, d, T = sys.argv[1:4]
TOL = 0.001  # data/README.md: "Every group's PFI matches its table within 0.001"
def idx(path, *extra):
    out = subprocess.run([pfi, "index", "--json", *extra, path], check=True,
                         capture_output=True, text=True).stdout
    return {g["group"]: g for g in json.loads(out)["groups"]}
def table(name):
    return list(csv.DictReader(open("%s/%s" % (T, name))))
h200 = idx(d + "/paper-h200/sweeps.csv")
held = idx(d + "/paper-h200/heldout-sweeps.csv")
h100 = idx(d + "/paper-h100/sweeps.csv")
grid = idx(d + "/paper-h200/sweeps.csv", "--grid", "200,500,600,700")
bad, n = [], 0
def check(what, got, want):
    global n
    n += 1
    if abs(got["pfi"] - float(want)) > TOL:
        bad.append("%s %s: rebuilt %.4f, paper %s" % (what, got["group"], got["pfi"], want))
for r in table("table6_headline_pfi.csv"): check("Table 6", h200[r["group"]], r["pfi"])
for r in table("table7_heldout_pfi.csv"): check("Table 7", held[r["group"]], r["pfi"])
for r in table("table8_h100_vs_h200.csv"):
    m = [g for g in h100.values() if g["arch"] == r["arch"] and g["task"] == r["task"]
         and ("(%s," % r["model"] in g["group"] or "(%s)" % r["model"] in g["group"])]
    assert len(m) == 1, ("Table 8 row matches %d H100 groups" % len(m), r)
    check("Table 8", m[0], r["pfi_h100"])
for r in table("table9_grid_sensitivity.csv"):
    check("Table 9 (6 caps)", h200[r["group"]], r["pfi_6caps"])
    check("Table 9 (4 caps)", grid[r["group"]], r["pfi_4caps"])
assert n == 25 + 4 + 6 + 2 * 16, n
if bad:
    sys.exit("PFI off the paper's tables by more than %g in %s:\n  %s" % (TOL, d, "\n  ".join(bad)))
print("ok: %d published PFIs reproduced within %g (%s)" % (n, TOL, d))
PY
done
# Writing into an unwritable place fails cleanly (exit 1), leaving no file.
if "$PFI_BIN" dataset --rebuild --out /proc/nonexistent 2> "$tmp/err.txt"; then
  echo "expected failure"; exit 1
fi
grep -q "pfi dataset:" "$tmp/err.txt"
echo ok
