#!/usr/bin/python3
"""Reference values for tests/unit/test_regime.c, independent of pfi's code:
scipy.stats.kruskal for Kruskal-Wallis and Dunn's test written out from its
definition (tie-corrected SE, two-sided normal p via scipy.stats.norm, Holm
step-down), over the paper's Table 6 PFI (shared/data/paper-tables) grouped
by regime as in Table 10: dense (pt and ft pooled), moe pt, moe ft.

Run: /usr/bin/python3 tests/unit/ref_regime.py ../shared  (Debian python3-scipy 1.10.1)
"""
import csv
import itertools
import statistics
import sys

import numpy as np
from scipy import stats


def dunn(groups):
    x = np.concatenate(groups)
    n = len(x)
    r = stats.rankdata(x)
    _, counts = np.unique(x, return_counts=True)
    ties = float(np.sum(counts ** 3 - counts))
    var = n * (n + 1) / 12.0 - ties / (12.0 * (n - 1))
    bounds = np.cumsum([0] + [len(g) for g in groups])
    mean_rank = [r[bounds[i]:bounds[i + 1]].mean() for i in range(len(groups))]
    out = []
    for a, b in itertools.combinations(range(len(groups)), 2):
        se = np.sqrt(var * (1.0 / len(groups[a]) + 1.0 / len(groups[b])))
        z = (mean_rank[a] - mean_rank[b]) / se
        out.append([a, b, z, 2 * stats.norm.sf(abs(z))])
    # Holm: sort p ascending, multiply by (m - rank), running max, cap at 1
    m = len(out)
    order = sorted(range(m), key=lambda i: out[i][3])
    run = 0.0
    for k, i in enumerate(order):
        run = max(run, min(1.0, (m - k) * out[i][3]))
        out[i].append(run)
    return out


def show(name, groups):
    h, p = stats.kruskal(*groups)
    print(f"{name}: n {[len(g) for g in groups]}")
    print(f"  median {[statistics.median(g) for g in groups]}")
    print(f"  mean {[repr(statistics.fmean(g)) for g in groups]}")
    print(f"  kruskal H {h!r} p {p!r}")
    for a, b, z, pr, ph in dunn([np.asarray(g, float) for g in groups]):
        print(f"  dunn {a} vs {b}: z {z!r} p_raw {pr!r} p_holm {ph!r}")


shared = sys.argv[1] if len(sys.argv) > 1 else "../shared"
rows = list(csv.DictReader(open(f"{shared}/data/paper-tables/table6_headline_pfi.csv")))
reg = {"dense": [], "moe-pt": [], "moe-ft": []}
for row in rows:
    key = "dense" if row["arch"] == "dense" else f"moe-{row['task']}"
    reg[key].append(float(row["pfi"]))
show("table6 by regime", list(reg.values()))
# the hand-computed case of test_regime.c, and one with ties
show("hand 1,2,3 | 4,5", [[1, 2, 3], [4, 5]])
show("ties 1,2,2 | 2,3,4 | 5,5", [[1, 2, 2], [2, 3, 4], [5, 5]])
