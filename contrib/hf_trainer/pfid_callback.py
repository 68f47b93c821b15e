"""Report a Hugging Face Trainer's throughput to pfid, the pfi node agent.

    from pfid_callback import PfidCallback
    trainer = Trainer(..., callbacks=[PfidCallback(seq_len=4096, arch="dense", task="pt")])

On each node, the process with local rank 0 registers the job with the node's
pfid (POST /v1/jobs: the job id and this node's GPU indices), reports tokens/s
every `every_steps` optimizer steps (POST /v1/jobs/ID/throughput), and ends
the job when training ends (DELETE /v1/jobs/ID). The tokens/s reported are
this node's share (global tokens/s x local GPUs / world size), so that they
match the power pfid measures on the same GPUs.

Only the standard library is used (urllib). pfid being down never stops
training: a failed call is logged once and retried at the next report. A
registration that fails because pfid is not there (yet: it may come up
after training started, or restart with an empty store) is retried from
on_step_end with exponential backoff (retry_s, doubling up to retry_max_s),
one short call per attempt; a refusal (401, 400) is not retried.
Without transformers installed the class still imports (a plain base class),
so that it can be tested and reused by other training loops: call
on_train_begin / on_step_end / on_train_end with objects carrying the
attributes used below.

Configuration (arguments, else environment):
  url         PFID_URL         default http://127.0.0.1:9477
  token_file  PFID_TOKEN_FILE  bearer token file (the same one pfid reads)
  job_id      PFID_JOB_ID      default SLURM_JOB_ID, else "hf-<pid>"
  gpus        PFID_GPUS        "0,1,..."; default CUDA_VISIBLE_DEVICES if
                               numeric, else 0..LOCAL_WORLD_SIZE-1
"""

import json
import logging
import os
import time
import urllib.error
import urllib.request

try:  # the real base class when transformers is there
    from transformers import TrainerCallback
except ImportError:  # pragma: no cover - exercised by the integration test

    class TrainerCallback:  # minimal stand-in with the same hook names
        pass


log = logging.getLogger("pfid_callback")


def _gpus_from_env():
    spec = os.environ.get("PFID_GPUS") or os.environ.get("CUDA_VISIBLE_DEVICES", "")
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if parts and all(p.isdigit() for p in parts):
        return [int(p) for p in parts]
    n = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    return list(range(n))


class PfidCallback(TrainerCallback):
    def __init__(self, url=None, token_file=None, job_id=None, gpus=None, arch=None,
                 task=None, seq_len=None, tokens_per_step=None, every_steps=10, timeout=2.0,
                 retry_s=5.0, retry_max_s=300.0):
        """tokens_per_step: tokens of one optimizer step over the whole job;
        without it, seq_len x per-device batch x gradient accumulation x
        world size from the TrainingArguments."""
        self.url = (url or os.environ.get("PFID_URL", "http://127.0.0.1:9477")).rstrip("/")
        token_file = token_file or os.environ.get("PFID_TOKEN_FILE")
        self.token = None
        if token_file:
            with open(token_file) as f:
                self.token = f.readline().strip()
        self.job_id = job_id or os.environ.get("PFID_JOB_ID") or (
            "slurm-" + os.environ["SLURM_JOB_ID"] if "SLURM_JOB_ID" in os.environ
            else "hf-%d" % os.getpid())
        self.gpus = list(gpus) if gpus is not None else _gpus_from_env()
        self.arch, self.task = arch, task
        self.seq_len, self.tokens_per_step = seq_len, tokens_per_step
        self.every_steps = max(1, int(every_steps))
        self.timeout = timeout
        self._active = False
        self._last = None  # (time, step) of the last report
        self._warned = False
        self._retry_s, self._retry_max_s = float(retry_s), float(retry_max_s)
        self._backoff = self._retry_s
        self._next_try = None  # monotonic time of the next registration attempt

    # -- HTTP -------------------------------------------------------------
    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            try:
                msg = json.loads(e.read()).get("error", "")
            except ValueError:
                msg = ""
            return e.code, {"error": msg}
        except (urllib.error.URLError, OSError) as e:
            return None, {"error": str(e)}

    def _warn(self, what, status, resp):
        if not self._warned:
            log.warning("pfid %s failed (%s): %s", what, status, resp.get("error", ""))
            self._warned = True

    # -- throughput ---------------------------------------------------------
    def _tokens_per_step(self, args):
        if self.tokens_per_step:
            return float(self.tokens_per_step)
        if not self.seq_len:
            return None
        world = getattr(args, "world_size", 1) or 1
        return float(self.seq_len * args.per_device_train_batch_size *
                     args.gradient_accumulation_steps * world)

    def _node_share(self, args):
        world = getattr(args, "world_size", 1) or 1
        return min(1.0, len(self.gpus) / world)

    # -- Trainer hooks ------------------------------------------------------
    def _register(self):
        """One registration attempt; schedules the next one when pfid was not
        reachable or not able to answer (5xx), not when it refused."""
        body = {"id": self.job_id, "gpus": self.gpus}
        if self.arch:
            body["arch"] = self.arch
        if self.task:
            body["task"] = self.task
        status, resp = self._call("POST", "/v1/jobs", body)
        if status in (200, 201) or (status == 409 and "already registered" in resp.get("error", "")):
            self._active = True  # a restarted process keeps its registration
            self._next_try = None
            self._backoff = self._retry_s
            if self._warned:
                log.warning("pfid registration succeeded")
            return
        self._warn("registration", status, resp)
        if status is None or status >= 500:
            self._next_try = time.monotonic() + self._backoff
            self._backoff = min(self._backoff * 2, self._retry_max_s)
        else:
            self._next_try = None

    def on_train_begin(self, args, state, control, **kwargs):
        if not getattr(state, "is_local_process_zero", True):
            return
        self._register()
        self._last = (time.monotonic(), state.global_step)

    def on_step_end(self, args, state, control, **kwargs):
        if not self._active and self._next_try is not None and time.monotonic() >= self._next_try:
            self._register()
            if self._active:  # rates from here on, not over the time it was down
                self._last = (time.monotonic(), state.global_step)
        if not self._active or state.global_step % self.every_steps:
            return
        now = time.monotonic()
        t0, s0 = self._last
        tps = self._tokens_per_step(args)
        self._last = (now, state.global_step)
        if tps is None or now <= t0 or state.global_step <= s0:
            return
        rate = (state.global_step - s0) * tps / (now - t0) * self._node_share(args)
        status, resp = self._call("POST", "/v1/jobs/%s/throughput" % self.job_id,
                                  {"tokens_per_s": rate})
        if status == 404:  # pfid forgot the job (a new store): register again
            self._active = False
            self._next_try = time.monotonic()
        elif status != 200:
            self._warn("throughput report", status, resp)

    def on_train_end(self, args, state, control, **kwargs):
        if self._active:
            status, resp = self._call("DELETE", "/v1/jobs/%s" % self.job_id)
            if status != 200:
                self._warn("job end", status, resp)
            self._active = False
