#!/usr/bin/env python3
"""Independent reference for tests/unit/test_plan.c's prior figures: the
kernel prior of src/control/plan_prior.h computed from data/'s CSVs directly
(not from the generated table). Prints y(x) and its SD for PFI and SD given.

  python3 tests/unit/plan_prior_ref.py PFI PFI_SD X...
"""
import collections, csv, math, os, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FILES = ["data/paper-h200/sweeps.csv", "data/paper-h200/heldout-sweeps.csv", "data/paper-h100/sweeps.csv"]


def groups():
    out = []
    for f in FILES:
        g = collections.OrderedDict()
        for r in csv.DictReader(open(os.path.join(ROOT, f))):
            g.setdefault(r["group"], []).append((float(r["power_w"]), float(r["throughput_tok_s"])))
        for runs in g.values():
            runs.sort()
            pm, tm = runs[-1]
            pts = [(p / pm, t / tm) for p, t in runs]
            phi = sum((1 - x) / (1 - y) for x, y in pts[:-1]) / (len(pts) - 1)
            out.append((phi, pts))
    return out


def y_of(pts, x):  # the group's curve, as the generator grids it
    grid = [round(0.2 + 0.05 * k, 10) for k in range(17)]
    def at(u):
        if u <= pts[0][0]:
            return pts[0][1] * u / pts[0][0]
        if u >= 1:
            return 1.0
        k = max(i for i in range(len(pts)) if pts[i][0] <= u)
        (x0, y0), (x1, y1) = pts[k], pts[k + 1]
        return min(1.0, y0 + (y1 - y0) * (u - x0) / (x1 - x0))
    ys = [at(u) for u in grid]
    if x <= 0.2:
        return ys[0] * x / 0.2
    k = min(int((x - 0.2) / 0.05), 15)
    return ys[k] + (ys[k + 1] - ys[k]) * ((x - 0.2) / 0.05 - k)


def prior(pfi, sd, x):
    gs = groups()
    s = sd if sd > 0 else 0.25
    v = s * s + 0.01
    dmin = min(abs(p - pfi) for p, _ in gs)
    w = [math.exp(-0.5 * ((p - pfi) ** 2 - dmin ** 2) / v) for p, _ in gs]
    ys = [y_of(pts, x) for _, pts in gs]
    m = sum(a * b for a, b in zip(w, ys)) / sum(w)
    q = sum(a * (b - m) ** 2 for a, b in zip(w, ys)) / sum(w)
    return m, 1.5 * math.sqrt(q)


if __name__ == "__main__":
    pfi, sd = float(sys.argv[1]), float(sys.argv[2])
    for x in sys.argv[3:]:
        m, s = prior(pfi, sd, float(x))
        print("%s %.12f %.12f" % (x, m, s))
