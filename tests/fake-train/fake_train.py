#!/usr/bin/env python3
"""A stand-in for a training job under `pfi sweep`: prints log lines in the
Hugging Face Trainer's format ({'loss': ..., 'tokens_per_second': ...}) with
the tokens/s the GPU model gives the job at the cap the sweep set
(PFI_SWEEP_CAP_W), from `pfi model --json`, times seeded Gaussian noise.

  fake_train.py --pfi PFI_BIN --job SPEC --gpus N [--noise 0.005] [--seed 1]
                [--every 0.1] [--exit-after S] [--silent] [--report]

--exit-after S exits with status 3 after S seconds (a job that dies);
--silent prints loss lines without throughput; --report posts the tokens/s to
$PFID_URL as contrib/hf_trainer/pfid_callback.py does (POST /v1/jobs, then
POST /v1/jobs/ID/throughput) and prints loss lines only. SIGTERM ends it.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--pfi", required=True)
ap.add_argument("--job", required=True)
ap.add_argument("--gpus", type=int, default=1)
ap.add_argument("--noise", type=float, default=0.005)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--every", type=float, default=0.1)
ap.add_argument("--exit-after", type=float, default=None)
ap.add_argument("--silent", action="store_true")
ap.add_argument("--report", action="store_true")
a = ap.parse_args()

signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
cap = os.environ.get("PFI_SWEEP_CAP_W", "700")
out = subprocess.run([a.pfi, "model", "--job", a.job, "--cap", cap, "--gpus", str(a.gpus),
                      "--json"], check=True, capture_output=True, text=True).stdout
tput = json.loads(out)["points"][0]["tput_total"]
rng = random.Random(a.seed * 100003 + int(float(cap)))
def post(path, body):
    req = urllib.request.Request(os.environ["PFID_URL"] + path, method="POST",
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        r.read()


if a.report:
    post("/v1/jobs", {"id": "fake", "gpus": list(range(a.gpus))})
start = time.monotonic()
step = 0
while True:
    if a.exit_after is not None and time.monotonic() - start >= a.exit_after:
        print("RuntimeError: CUDA error: out of memory", flush=True)
        sys.exit(3)
    step += 1
    loss = 2.5 / (1 + 0.01 * step)
    if a.report:
        post("/v1/jobs/fake/throughput", {"tokens_per_s": tput * (1 + rng.gauss(0, a.noise))})
    if a.silent or a.report:
        print("{'loss': %.4f, 'grad_norm': 0.91, 'learning_rate': 4.9e-05, 'epoch': %.2f}"
              % (loss, step / 1000), flush=True)
    else:
        tps = tput * (1 + rng.gauss(0, a.noise))
        print("{'loss': %.4f, 'grad_norm': 0.91, 'learning_rate': 4.9e-05, "
              "'tokens_per_second': %.3f, 'epoch': %.2f}" % (loss, tps, step / 1000), flush=True)
    time.sleep(a.every)
