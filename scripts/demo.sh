#!/usr/bin/env bash
# `make demo`: a tour of pfi on the embedded dataset (a reconstruction of the
# paper's sweep groups from its tables; see data/README.md).
set -euo pipefail
PFI=${1:-build/pfi}
cd "$(dirname "$0")/.."
D=data/paper-h200
run() { printf '\n$ pfi %s\n' "$*"; "$PFI" "$@"; }

echo "== 1. PFI of every sweep group with a 95% Monte Carlo CI (paper Table 6)"
run index --ci 10000 $D/sweeps.csv
echo
echo "== 2. PFI by regime: medians, Kruskal-Wallis, Dunn (Tables 10-11)"
run stats $D/sweeps.csv
echo
echo "== 3. Predicting PFI from uncapped telemetry (Table 3)"
run fit --holdout $D/heldout-sweeps.csv $D/sweeps.csv $D/telemetry.csv
echo
echo "== 4. The GPU model behind the dataset: a compute-bound GEMM under caps"
run model --job gemm --cap 700,500,300
echo
echo "== 5. A 30% curtailment of the 25 jobs: PFI-aware caps, then the exact oracle's total"
run allocate --policy pfi --reduction 0.3 $D/sweeps.csv
run allocate --policy oracle --reduction 0.3 $D/sweeps.csv | grep -E "^(total|policy)"
echo
echo "== 6. The paper's Sec. 6 experiment, production mix (100 workloads)"
run simulate --mix production --workloads 100 --reductions 10%,30% $D/sweeps.csv $D/telemetry.csv
