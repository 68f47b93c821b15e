#!/usr/bin/env python3
"""A small OpenADR 3 VTN for the controller's tests (standard library plus
PyYAML and jsonschema, Debian's python3-yaml and python3-jsonschema).

Serves POST /auth/token (form-encoded client credentials), GET /programs,
GET /events?programID=&skip=&limit= (paged, limit at most 50) and accepts
POST /reports. Every event it serves and every body it receives is checked
against the OpenAPI definition (--spec, openadr3-3.1.0.yaml): an invalid
served event is a 500 and an invalid body a 400, and both are logged, so a
test that reads the log catches either side's mistake.

The event list is re-read from --events on every request, so a test changes
what the VTN serves by rewriting that file (atomically: write + rename).
Reports are appended, one JSON line each, to --reports. Requests are logged
to --log as JSON lines {"method","path","query","status","error"?}.
--token-uses N makes each token good for N calls (then 401), to test the
client's refresh. GET /events/{id} serves one event of --events (404 when
it has none of that id). While the file --list-file exists, the event list
(GET /events) is its raw JSON instead, neither checked nor filtered: a VTN
whose list glitches ([] or [1,2]) while its events are still there. Binds 127.0.0.1 on a free port and writes it to --port-file.
"""
import argparse
import json
import os
import secrets
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jsonschema
import yaml


def load_validators(spec_path):
    with open(spec_path) as f:
        spec = yaml.safe_load(f)
    # OpenAPI 3.0's "nullable" has no JSON Schema meaning; a null where the
    # schema says nullable is allowed by widening the type.
    def widen(node):
        if isinstance(node, dict):
            if node.get("nullable") is True and "type" in node:
                node["type"] = [node["type"], "null"]
            for v in node.values():
                widen(v)
        elif isinstance(node, list):
            for v in node:
                widen(v)
    widen(spec)
    resolver = jsonschema.RefResolver.from_schema(spec)
    schemas = spec["components"]["schemas"]

    def validator(name):
        v = jsonschema.Draft4Validator(schemas[name], resolver=resolver,
                                       format_checker=jsonschema.FormatChecker())
        return v
    return {n: validator(n) for n in ("event", "program", "reportRequest",
                                       "clientCredentialRequest")}


def first_error(v, doc):
    errs = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    if not errs:
        return None
    e = errs[0]
    return "%s at /%s" % (e.message[:200], "/".join(str(p) for p in e.path))


class State:
    def __init__(self, a):
        self.a = a
        self.v = load_validators(a.spec)
        self.lock = threading.Lock()
        self.tokens = {}  # token -> uses left


def make_handler(st):
    a = st.a

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def log(self, status, error=None):
            u = urllib.parse.urlsplit(self.path)
            rec = {"method": self.command, "path": u.path,
                   "query": dict(urllib.parse.parse_qsl(u.query)), "status": status}
            if error:
                rec["error"] = error
            with st.lock, open(a.log, "a") as f:
                f.write(json.dumps(rec) + "\n")

        def reply(self, status, obj, error=None):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.log(status, error)

        def problem(self, status, detail):
            self.reply(status, {"type": "about:blank", "title": "error", "status": status,
                                "detail": detail}, detail)

        def body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def authorized(self):
            h = self.headers.get("Authorization", "")
            if not h.startswith("Bearer "):
                return False
            tok = h[7:]
            with st.lock:
                left = st.tokens.get(tok)
                if left is None or left <= 0:
                    return False
                st.tokens[tok] = left - 1
            return True

        def do_POST(self):
            u = urllib.parse.urlsplit(self.path)
            raw = self.body()
            if u.path == a.prefix + "/auth/token":
                if not self.headers.get("Content-Type", "").startswith(
                        "application/x-www-form-urlencoded"):
                    return self.problem(400, "not form-encoded")
                form = dict(urllib.parse.parse_qsl(raw.decode(), keep_blank_values=True))
                err = first_error(st.v["clientCredentialRequest"], form)
                if err:
                    return self.problem(400, "clientCredentialRequest: " + err)
                if form["client_id"] != a.client_id or form["client_secret"] != a.client_secret:
                    return self.problem(401, "bad client credentials")
                tok = secrets.token_hex(16)
                with st.lock:
                    st.tokens[tok] = a.token_uses
                return self.reply(200, {"access_token": tok, "token_type": "Bearer",
                                        "expires_in": 3600})
            if u.path == a.prefix + "/reports":
                if not self.authorized():
                    return self.problem(401, "no or expired token")
                try:
                    doc = json.loads(raw)
                except ValueError as e:
                    return self.problem(400, "not JSON: %s" % e)
                err = first_error(st.v["reportRequest"], doc)
                if err:
                    return self.problem(400, "reportRequest: " + err)
                with st.lock, open(a.reports, "a") as f:
                    f.write(json.dumps(doc) + "\n")
                doc = dict(doc, id="r%d" % secrets.randbelow(10**9), clientID=a.client_id,
                           createdDateTime="2025-01-01T00:00:00Z",
                           modificationDateTime="2025-01-01T00:00:00Z")
                return self.reply(201, doc)
            return self.problem(404, "no such path")

        def do_GET(self):
            u = urllib.parse.urlsplit(self.path)
            q = dict(urllib.parse.parse_qsl(u.query))
            one = u.path.startswith(a.prefix + "/events/")
            if u.path not in (a.prefix + "/events", a.prefix + "/programs") and not one:
                return self.problem(404, "no such path")
            if not self.authorized():
                return self.problem(401, "no or expired token")
            if one:
                eid = urllib.parse.unquote(u.path[len(a.prefix + "/events/"):])
                with open(a.events) as f:
                    hit = [e for e in json.load(f) if e.get("id") == eid]
                if not hit:
                    return self.problem(404, "no event %s" % eid)
                return self.reply(200, hit[0])
            if u.path.endswith("/events") and a.list_file and os.path.exists(a.list_file):
                with open(a.list_file) as f:
                    raw = json.load(f)
                return self.reply(200, raw)
            try:
                skip = int(q.get("skip", 0))
                limit = int(q.get("limit", 50))
            except ValueError:
                return self.problem(400, "skip and limit are integers")
            if skip < 0 or not 0 <= limit <= 50:
                return self.problem(400, "limit must be 0-50")
            if u.path.endswith("/programs"):
                items = [{"id": a.program_id, "programName": a.program_name,
                          "createdDateTime": "2025-01-01T00:00:00Z",
                          "modificationDateTime": "2025-01-01T00:00:00Z",
                          "objectType": "PROGRAM"}]
                name = "program"
            else:
                with open(a.events) as f:
                    items = json.load(f)
                if "programID" in q:
                    items = [e for e in items if e.get("programID") == q["programID"]]
                name = "event"
            for i, it in enumerate(items):
                err = first_error(st.v[name], it)
                if err:
                    return self.problem(500, "served %s %d is invalid: %s" % (name, i, err))
            return self.reply(200, items[skip:skip + limit])

    return H


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spec", required=True)
    p.add_argument("--events", required=True)
    p.add_argument("--reports", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--prefix", default="")
    p.add_argument("--client-id", default="ven-1")
    p.add_argument("--client-secret", required=True)
    p.add_argument("--program-id", default="prog-1")
    p.add_argument("--program-name", default="dc-flex")
    p.add_argument("--token-uses", type=int, default=1000000)
    p.add_argument("--list-file", default=None)
    a = p.parse_args()
    st = State(a)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(st))
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
