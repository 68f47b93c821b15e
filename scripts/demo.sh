#!/usr/bin/env bash
# `make demo`: the paper end to end on the embedded dataset (a reconstruction
# of the paper's sweep groups from its tables; see data/README.md), written
# as a report folder with report.html, tables as CSV and figures.
set -euo pipefail
PFI=${1:-build/pfi}
OUT=${PFI_DEMO_OUT:-pfi-report}
cd "$(dirname "$0")/.."
"$PFI" report --out "$OUT"
echo
echo "Tables as CSV: $OUT/tables/   figures (SVG, PNG, PDF): $OUT/figures/"
echo "Headline numbers: $OUT/summary.json"
