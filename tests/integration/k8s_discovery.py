#!/usr/bin/env python3
"""An API server's discovery documents and nothing else, for
`kubectl apply --dry-run=client`: kubectl maps each manifest's apiVersion
and kind through discovery (/api, /apis, /api/v1, /apis/GROUP/VERSION)
and GETs the live object to decide between create and patch; this answers
discovery for the kinds contrib/kubernetes uses and 404 NotFound for every
object, so a manifest whose kind or apiVersion is wrong, or whose scope
(namespaced or not) does not match, fails as it would on a cluster.

Usage: k8s_discovery.py PORT_FILE [LOG]
"""
import http.server
import json
import os
import sys


def res(name, kind, namespaced):
    return {"name": name, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind,
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}


GROUPS = {
    "v1": [res("namespaces", "Namespace", False), res("configmaps", "ConfigMap", True),
           res("secrets", "Secret", True), res("serviceaccounts", "ServiceAccount", True),
           res("services", "Service", True), res("pods", "Pod", True),
           res("persistentvolumeclaims", "PersistentVolumeClaim", True)],
    "apps/v1": [res("daemonsets", "DaemonSet", True), res("deployments", "Deployment", True)],
    "rbac.authorization.k8s.io/v1": [
        res("clusterroles", "ClusterRole", False), res("clusterrolebindings", "ClusterRoleBinding", False),
        res("roles", "Role", True), res("rolebindings", "RoleBinding", True)],
}


def documents():
    docs = {"/api": {"kind": "APIVersions", "versions": ["v1"],
                     "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}}
    groups = []
    for gv, rs in GROUPS.items():
        path = "/api/v1" if gv == "v1" else "/apis/" + gv
        docs[path] = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": rs}
        if gv != "v1":
            g, v = gv.split("/")
            groups.append({"name": g, "versions": [{"groupVersion": gv, "version": v}],
                           "preferredVersion": {"groupVersion": gv, "version": v}})
    docs["/apis"] = {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
    return docs


DOCS = documents()


class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *a):
        if LOG:
            LOG.write((fmt % a) + "\n")

    def send(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path in DOCS:
            self.send(200, DOCS[path])
        else:
            self.send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                            "reason": "NotFound", "code": 404, "message": path + " not found"})


LOG = open(sys.argv[2], "a", buffering=1) if len(sys.argv) > 2 else None
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(httpd.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
httpd.serve_forever()
