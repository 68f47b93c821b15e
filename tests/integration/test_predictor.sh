#!/usr/bin/env bash
# The predictor workflow on the embedded dataset, end to end through the CLI:
# fit the DRAM-copy model (Table 3 shape in the JSON), save it, predict the
# groups and the real H200 probe phases with it, regime tests (Tables 10-11)
# and the H100 vs H200 rank agreement (Table 8) from the reconstruction.
set -eu
cd "$PFI_SOURCE_DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
D=data/paper-h200
PROBE=$PFI_SHARED_DIR/data/h200-probe/trace.csv
fail() { echo "FAIL: $*"; exit 1; }

"$PFI_BIN" fit --json --holdout $D/heldout-sweeps.csv --out "$tmp/m.json" \
  $D/sweeps.csv $D/telemetry.csv > "$tmp/fit.json"
jq -e '.n_train == 25 and .n_holdout == 4' "$tmp/fit.json" > /dev/null || fail "group counts"
# DRAM copy product alone: best LOO and LOCO R2 of the defined sets
jq -e '.sets as $s | ($s[0].loo.r2) as $l | ($s[0].loco.r2) as $c
       | all($s[1:][]; (.loo.r2 == null or .loo.r2 < $l) and (.loco.r2 == null or .loco.r2 < $c))' \
  "$tmp/fit.json" > /dev/null || fail "DRAM copy product is not the best predictor"
# all DCGM metrics overfit
jq -e '.sets[5] | .r2_in > 0.75 and .loo.r2 < 0 and .loco.r2 < 0' "$tmp/fit.json" > /dev/null \
  || fail "all-DCGM does not overfit"
# no NaN/inf anywhere: every number is finite JSON (jq would fail to parse NaN)
jq -e '[.. | numbers] | length > 50' "$tmp/fit.json" > /dev/null || fail "numbers"
# the saved model is the DRAM-copy one and predicts what fit reported
jq -e '.features == ["dram_copy_product"] and .n_train == 25' "$tmp/m.json" > /dev/null \
  || fail "model file"

"$PFI_BIN" predict --json --model "$tmp/m.json" $D/telemetry.csv > "$tmp/pred.json"
jq -e '.predictions | length == 29 and all(.[]; .pfi > 0.5 and .pfi < 4)' "$tmp/pred.json" \
  > /dev/null || fail "predictions"

# Appendix D.2: the H200 model on the H100 groups (paper: R2 = 0.56)
"$PFI_BIN" predict --json --model "$tmp/m.json" --sweeps data/paper-h100/sweeps.csv \
  data/paper-h100/telemetry.csv > "$tmp/h100.json"
jq -e '.validation.n == 6 and .validation.r2 > 0.3 and .validation.rho > 0.8
       and all(.predictions[]; .pfi_actual > 1)' "$tmp/h100.json" > /dev/null \
  || fail "H100 validation"

if [ -r "$PROBE" ]; then
  "$PFI_BIN" predict --json --model "$tmp/m.json" --trace "$PROBE" \
    --phases gemm,stream,dense_train,moe_train > "$tmp/probe.json"
  jq -e '.predictions | map({(.group): .pfi}) | add
         | .moe_train > .dense_train and .moe_train > .gemm' "$tmp/probe.json" > /dev/null \
    || fail "probe ranking"
fi

"$PFI_BIN" stats --json $D/sweeps.csv > "$tmp/stats.json"
jq -e '.groups | map(.n) == [14, 7, 4]' "$tmp/stats.json" > /dev/null || fail "regimes"
jq -e '.kruskal.df == 2 and .kruskal.p < 0.05 and (.dunn | length) == 3' "$tmp/stats.json" \
  > /dev/null || fail "kruskal"

# Table 8: the H200 side spans headline and held-out groups
{ cat $D/sweeps.csv; tail -n +2 $D/heldout-sweeps.csv; } > "$tmp/h200-all.csv"
"$PFI_BIN" compare --json "$tmp/h200-all.csv" data/paper-h100/sweeps.csv > "$tmp/cmp.json"
jq -e '.n == 6 and (.rho > 0.94 and .rho < 0.95)' "$tmp/cmp.json" > /dev/null \
  || fail "Table 8 rank agreement"

# bad input: the held-out telemetry rows without --holdout name an unknown group
if "$PFI_BIN" fit $D/sweeps.csv $D/telemetry.csv > "$tmp/out.txt" 2> "$tmp/err.txt"; then
  fail "unknown group accepted"
fi
grep -q "telemetry.csv:[0-9]*: telemetry for group .* not in the sweeps" "$tmp/err.txt" \
  || fail "error message: $(cat "$tmp/err.txt")"
[ ! -s "$tmp/out.txt" ] || fail "partial output on error"
echo ok
