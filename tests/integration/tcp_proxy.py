#!/usr/bin/env python3
"""A TCP forwarder on loopback for test_control_ha.sh: a controller reaches
etcd through it, so killing it cuts that controller off from etcd (and from
nothing else); started again on the same port, the path heals.
--port P (0: the kernel's choice), --to PORT (on 127.0.0.1), --port-file F:
where the port is written once listening."""
import argparse, socket, threading

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--to", type=int, required=True)
ap.add_argument("--port-file", required=True)
a = ap.parse_args()


def pump(src, dst):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            dst.sendall(b)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", a.port))
srv.listen(64)
with open(a.port_file + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
import os
os.rename(a.port_file + ".tmp", a.port_file)
while True:
    c, _ = srv.accept()
    try:
        u = socket.create_connection(("127.0.0.1", a.to), timeout=2)
        u.settimeout(None)
    except OSError:
        c.close()
        continue
    for x, y in ((c, u), (u, c)):
        threading.Thread(target=pump, args=(x, y), daemon=True).start()
