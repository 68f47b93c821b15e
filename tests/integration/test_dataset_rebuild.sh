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
# A different seed gives different noise but the same published PFI.
"$PFI_BIN" dataset --rebuild --seed 7 --out "$tmp/s7" > /dev/null
if cmp -s data/paper-h200/sweeps.csv "$tmp/s7/paper-h200/sweeps.csv"; then
  echo "seed had no effect"; exit 1
fi
"$PFI_BIN" index --json "$tmp/s7/paper-h200/sweeps.csv" > "$tmp/s7.json"
grep -q '"Dense FT H200x16 (Llama-3.1-70B)"' "$tmp/s7.json"
# Writing into an unwritable place fails cleanly (exit 1), leaving no file.
if "$PFI_BIN" dataset --rebuild --out /proc/nonexistent 2> "$tmp/err.txt"; then
  echo "expected failure"; exit 1
fi
grep -q "pfi dataset:" "$tmp/err.txt"
echo ok
