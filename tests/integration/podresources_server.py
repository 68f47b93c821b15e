#!/usr/bin/env python3
"""A kubelet stand-in for pfid's tests: the PodResources v1 API (gRPC, the
real proto: src/io/proto/podresources.proto compiled by protoc) on a Unix
socket, and the node's PodList (JSON, as the API server's
/api/v1/pods?fieldSelector=spec.nodeName=NODE answers) over HTTP.

Both come from one state file, read on every request so that a test changes
the node by rewriting it (atomically):
  {"pods": [{"namespace": "ns", "name": "pod", "labels": {}, "annotations": {},
             "phase": "Running",
             "containers": [{"name": "c", "devices": [
                 {"resource_name": "nvidia.com/gpu", "device_ids": ["GPU-..."]}]}]}],
   "grpc_error": false}
grpc_error true makes List fail with UNAVAILABLE (a restarting kubelet).

Usage: podresources_server.py --socket PATH --state FILE --pb-dir DIR
           --port-file FILE [--token TOKEN] [--log FILE]
DIR holds podresources_pb2.py (protoc --python_out). The HTTP port goes to
--port-file once both servers listen. With --token the PodList needs
"Authorization: Bearer TOKEN" (a 401 otherwise).
"""
import argparse
import http.server
import json
import os
import sys
import threading
from concurrent import futures

import grpc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--pb-dir", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--token")
    ap.add_argument("--log")
    args = ap.parse_args()
    sys.path.insert(0, args.pb_dir)
    import podresources_pb2 as pb  # noqa: E402

    log = open(args.log, "a", buffering=1) if args.log else sys.stderr

    def state():
        with open(args.state) as f:
            return json.load(f)

    def list_pods(request, context):
        s = state()
        log.write("List\n")
        if s.get("grpc_error"):
            context.abort(grpc.StatusCode.UNAVAILABLE, "kubelet restarting")
        resp = pb.ListPodResourcesResponse()
        for p in s["pods"]:
            pr = resp.pod_resources.add(name=p["name"], namespace=p["namespace"])
            for c in p.get("containers", []):
                cr = pr.containers.add(name=c["name"], cpu_ids=[0, 1])
                for d in c.get("devices", []):
                    dv = cr.devices.add(resource_name=d["resource_name"], device_ids=d["device_ids"])
                    dv.topology.nodes.add(ID=0)
        return resp

    handler = grpc.method_handlers_generic_handler(
        "v1.PodResourcesLister",
        {
            "List": grpc.unary_unary_rpc_method_handler(
                list_pods,
                request_deserializer=pb.ListPodResourcesRequest.FromString,
                response_serializer=pb.ListPodResourcesResponse.SerializeToString,
            )
        },
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    if os.path.exists(args.socket):
        os.unlink(args.socket)
    server.add_insecure_port("unix:" + args.socket)
    server.start()

    class Pods(http.server.BaseHTTPRequestHandler):
        def log_message(self, fmt, *a):
            log.write("http " + (fmt % a) + "\n")

        def do_GET(self):
            if not self.path.startswith("/api/v1/pods"):
                self.send_error(404)
                return
            if args.token and self.headers.get("Authorization") != "Bearer " + args.token:
                self.send_error(401)
                return
            items = []
            for p in state()["pods"]:
                items.append({
                    "metadata": {"name": p["name"], "namespace": p["namespace"],
                                 "uid": p["namespace"] + "-" + p["name"],
                                 "labels": p.get("labels", {}),
                                 "annotations": p.get("annotations", {})},
                    "spec": {"nodeName": "node"},
                    "status": {"phase": p.get("phase", "Running")},
                })
            body = json.dumps({"kind": "PodList", "apiVersion": "v1",
                               "metadata": {"resourceVersion": "1"}, "items": items}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pods)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(httpd.server_address[1]))
    os.rename(tmp, args.port_file)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    server.wait_for_termination()


if __name__ == "__main__":
    main()
