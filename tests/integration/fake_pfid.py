#!/usr/bin/env python3
"""A pfid stand-in for the controller's tests of the cap owner contract
(issue 27 item 9): two GPUs at 500 W, one training job on both; GPU 1 is
held by another controller (--holder) whose cap of 400 W is in force, so a
cap call on it from any other owner gets 409 {"error", "owner", "epoch"};
every cap call's method, GPU and Pfi-Owner / Pfi-Epoch headers go to --log
as one JSON line. --port-file: where the port is written."""
import argparse, json, http.server, threading

ap = argparse.ArgumentParser()
ap.add_argument("--port-file", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--holder", default="other-ctl")
a = ap.parse_args()
lock = threading.Lock()
caps = {1: {"watts": 400.0, "owner": a.holder}}


def gpu(i):
    c = caps.get(i)
    return {"gpu": i, "up": True, "sample": {"power_watts": 400.0 if c else 500.0},
            "limits": {"enforced_w": c["watts"] if c else 700.0, "default_w": 700.0,
                       "min_w": 200.0, "max_w": 700.0},
            "cap": {"watts": c["watts"], "expires_at": 4e9, "prior_w": 700.0} if c else None}


class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *x):
        pass

    def send(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        with lock:
            if self.path == "/v1/gpus":
                return self.send(200, {"gpus": [gpu(0), gpu(1)]})
            if self.path == "/v1/jobs":
                return self.send(200, {"jobs": [{"id": "j", "gpus": [0, 1], "phase": "training",
                                                 "tokens_per_s": 1000, "tokens_sd": 5}]})
        self.send(404, {"error": "no such path"})

    def cap_call(self, method):
        parts = self.path.split("/")  # /v1/gpus/N/limit
        g = int(parts[3])
        owner = self.headers.get("Pfi-Owner")
        body = {}
        if method == "PUT":
            n = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(n) or b"{}")
        with lock:
            with open(a.log, "a") as f:
                f.write(json.dumps({"method": method, "gpu": g, "owner": owner,
                                    "epoch": self.headers.get("Pfi-Epoch"),
                                    "watts": body.get("watts")}) + "\n")
            c = caps.get(g)
            if c and c["owner"] != owner:
                return self.send(409, {"error": "GPU %d is capped by another controller" % g,
                                       "owner": c["owner"], "epoch": 0})
            if method == "PUT":
                caps[g] = {"watts": float(body["watts"]), "owner": owner}
                return self.send(200, {"gpu": g, "enforced_w": float(body["watts"])})
            caps.pop(g, None)
            return self.send(200, {"gpu": g})

    def do_PUT(self):
        self.cap_call("PUT")

    def do_DELETE(self):
        self.cap_call("DELETE")


s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(a.port_file + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
import os
os.rename(a.port_file + ".tmp", a.port_file)
s.serve_forever()
