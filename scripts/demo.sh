#!/usr/bin/env bash
# `make demo`: the main job on the embedded dataset.
set -euo pipefail
PFI=${1:-build/pfi}
cd "$(dirname "$0")/.."
data=data/paper-h200/sweeps.csv
[ -f "$data" ] || data=tests/data/sweeps-small.csv
echo "\$ pfi index --method all --ci 10000 $data"
"$PFI" index --method all --ci 10000 "$data"
