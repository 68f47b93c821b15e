#!/usr/bin/env python3
"""Independent reference for tests/unit/test_alloc_tree_lp.c: random nested
budget problems (2-3 level trees, 3-8 jobs with concave piecewise-linear
curves, some spread over two domains, some standing for two jobs) and their
optimum total throughput from scipy's linprog (HiGHS), written as JSON.

  python3 tests/unit/alloc_tree_ref.py > tests/data/alloc-tree-lp.json

The LP: a variable per curve segment (0 <= x <= its width), maximise
sum count * slope * x subject to, for every domain with a limit,
sum over jobs of count * (the job's share in the subtree) * (floor + sum x)
+ the subtree's fixed power <= limit, and the jobs' power <= budget.
Nothing here is shared with the C code: subtrees come from the parent
array by walking up.
"""
import json, random, sys

from scipy.optimize import linprog

SEED = 20261204


def tree(rng, levels):
    """Pre-order domains as parent indices: a root, 2-3 children, each with
    0-3 of its own when three levels."""
    parent = [None]
    for _ in range(rng.randint(2, 3)):
        c = len(parent)
        parent.append(0)
        if levels == 3:
            for _ in range(rng.choice([0, 2, 3])):
                parent.append(c)
    return parent


def curve(rng, tiny):
    k = rng.randint(2, 3) if tiny else rng.randint(3, 5)
    p = rng.randint(100, 300)
    t = rng.randint(0, 100)
    s = rng.uniform(0.5, 2.0)
    P, T = [p], [t]
    for _ in range(k - 1):
        w = rng.randint(5, 20) if tiny else rng.randint(20, 100)
        p += w
        t += s * w
        if tiny:
            t = round(t)
        P.append(p)
        T.append(t)
        s *= rng.uniform(0.3, 0.95)
    return P, T


def in_subtree(parent, d, a):
    while d is not None:
        if d == a:
            return True
        d = parent[d]
    return False


def case(rng, tiny):
    levels = 2 if tiny else rng.choice([2, 3])
    parent = tree(rng, levels)
    nd = len(parent)
    nj = rng.randint(2, 3) if tiny else rng.randint(3, 8)
    spread = rng.random() < 0.5  # half the cases have no spread job: the greedy's
    jobs = []
    for i in range(nj):
        P, T = curve(rng, tiny)
        count = 1 if tiny else rng.choice([1, 1, 1, 2])
        d1 = rng.randrange(nd)
        if spread and rng.random() < 0.4:
            d2 = rng.randrange(nd)
            while d2 == d1:
                d2 = rng.randrange(nd)
            sh = rng.choice([0.5, 0.25, 0.75])
            spans = [[d1, sh], [d2, 1 - sh]]
        else:
            spans = [[d1, 1.0]]
        jobs.append({"P": P, "T": T, "count": count, "spans": spans})
    fixed = [0 if tiny or rng.random() < 0.6 else rng.randint(0, 50) for _ in range(nd)]

    def alpha(job, a):
        return sum(sh for d, sh in job["spans"] if in_subtree(parent, d, a))

    limits = []
    for a in range(nd):
        fl = sum(j["count"] * alpha(j, a) * j["P"][0] for j in jobs)
        pm = sum(j["count"] * alpha(j, a) * j["P"][-1] for j in jobs)
        fx = sum(fixed[d] for d in range(nd) if in_subtree(parent, d, a))
        if rng.random() < 0.2 or pm == fl:
            limits.append(None)
        else:
            lim = fx + fl + rng.uniform(0.1, 0.9) * (pm - fl)
            limits.append(round(lim) if tiny else round(lim, 3))
    flt = sum(j["count"] * j["P"][0] for j in jobs)
    pmt = sum(j["count"] * j["P"][-1] for j in jobs)
    budget = flt + rng.uniform(0.3, 1.0) * (pmt - flt)
    budget = round(budget) if tiny else round(budget, 3)

    # the LP
    cols, obj = [], []
    for i, j in enumerate(jobs):
        for k in range(len(j["P"]) - 1):
            w = j["P"][k + 1] - j["P"][k]
            cols.append((i, w))
            obj.append(-j["count"] * (j["T"][k + 1] - j["T"][k]) / w)
    A, b = [], []
    for a in range(nd):
        if limits[a] is None:
            continue
        A.append([jobs[i]["count"] * alpha(jobs[i], a) for i, _ in cols])
        fx = sum(fixed[d] for d in range(nd) if in_subtree(parent, d, a))
        b.append(limits[a] - fx - sum(j["count"] * alpha(j, a) * j["P"][0] for j in jobs))
    A.append([jobs[i]["count"] for i, _ in cols])
    b.append(budget - flt)
    r = linprog(obj, A_ub=A, b_ub=b, bounds=[(0, w) for _, w in cols], method="highs")
    assert r.status == 0, r.message
    base = sum(j["count"] * j["T"][0] for j in jobs)
    return {
        "domains": [{"parent": parent[a], "limit_w": limits[a], "fixed_w": fixed[a]} for a in range(nd)],
        "jobs": jobs,
        "budget_w": budget,
        "lp_tput": base - r.fun,
    }


def main():
    rng = random.Random(SEED)
    cases = [case(rng, False) for _ in range(60)] + [case(rng, True) for _ in range(20)]
    json.dump({"command": "python3 tests/unit/alloc_tree_ref.py > tests/data/alloc-tree-lp.json",
               "seed": SEED, "cases": cases}, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
