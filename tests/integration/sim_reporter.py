#!/usr/bin/env python3
"""Real throughput for sim-backend jobs: what a training loop's callback
does (contrib/hf_trainer/pfid_callback.py), with the sim's model standing in
for the training loop.

For every job on every node of --spec, every --interval seconds: read the
node's GPUs (GET /v1/gpus, each GPU's enforced limit), look the job's
tokens/s per GPU up at each of its GPUs' limits in its table (the GPU
model's own numbers: `pfi model --job GROUP --cap 200,...,700 --json`,
linear between caps), and POST the sum to /v1/jobs/ID/throughput. So a cap
the controller sets changes the throughput pfid is told, as a real job's
would. Standard library only; runs until killed; a node that does not
answer is skipped until it does.

--spec JSON: {"tables": {"T": [[cap_w, tokens_per_s_per_gpu], ...]},
              "nodes": [{"url": "http://...", "jobs": [{"id", "table", "gpus": [...]}]}]}
"""
import argparse
import bisect
import json
import sys
import time
import urllib.request


def lookup(table, cap):
    caps = [c for c, _ in table]
    i = bisect.bisect_left(caps, cap)
    if i <= 0:
        return table[0][1]
    if i >= len(table):
        return table[-1][1]
    (c0, t0), (c1, t1) = table[i - 1], table[i]
    return t0 + (t1 - t0) * (cap - c0) / (c1 - c0)


def call(method, url, token=None, body=None, timeout=2):
    req = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode())
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spec", required=True)
    p.add_argument("--token-file", required=True)
    p.add_argument("--interval", type=float, default=0.25)
    a = p.parse_args()
    spec = json.load(open(a.spec))
    token = open(a.token_file).readline().strip()
    tables = {k: sorted(v) for k, v in spec["tables"].items()}
    while True:
        t0 = time.monotonic()
        for node in spec["nodes"]:
            try:
                limits = {g["gpu"]: g["limits"]["enforced_w"] for g in call("GET", node["url"] + "/v1/gpus")["gpus"]}
                for j in node["jobs"]:
                    tps = sum(lookup(tables[j["table"]], limits[g]) for g in j["gpus"])
                    call("POST", "%s/v1/jobs/%s/throughput" % (node["url"], j["id"]), token,
                         {"tokens_per_s": round(tps, 3)})
            except Exception as e:  # a node down, a job not registered yet
                print("reporter: %s: %s" % (node["url"], e), file=sys.stderr)
        time.sleep(max(0.0, a.interval - (time.monotonic() - t0)))


if __name__ == "__main__":
    main()
