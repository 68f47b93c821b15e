#!/usr/bin/env bash
# Misbehaving clients on loopback, bounded to seconds (docs/pfid.md, "HTTP API"):
# thousands of slow connections from one address do not take the API from
# another; with every ordinary slot taken, an address that made an
# authorized call still gets through (the reserve) and another does not;
# idle connections are closed; the flood leaves a handful of log lines, not
# thousands; two Content-Length headers are refused.
. "$(dirname "$0")/pfid_lib.sh"

cat >"$WORK/flood.py" <<'EOF_PY'
# flood.py SRC PORT N SECONDS: N connections from SRC that send half a
# request and then nothing, held SECONDS; prints how many connected.
import resource, socket, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
src, port, n, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
socks, up = [], 0
for i in range(n):
    s = socket.socket()
    s.setblocking(True)
    s.settimeout(1)
    try:
        s.bind((src, 0)); s.connect(("127.0.0.1", port))
        s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        up += 1
        socks.append(s)
    except OSError:
        s.close()
print(up, flush=True)
time.sleep(hold)
EOF_PY
# flood.out is emptied before the flood starts: the shell truncates it only
# once the background job runs, and `flooded` must not see the last flood's
flood() { : >"$WORK/flood.out"; python3 "$WORK/flood.py" "$@" >"$WORK/flood.out" & FLOOD=$!; PIDS+=("$FLOOD"); }
flooded() { [ -s "$WORK/flood.out" ]; }
# fast METHOD PATH [SRC]: the call must answer within 2 s.
fast() {
    local code
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 ${3:+--interface $3} -X "$1" \
        -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT$2") || code=000
    echo "$code"
}
SIM=(--backend sim --sim-gpus 2 --interval 0.5)

# --- one host's flood, per-address limit ---
pfid_start "$WORK/a.log" "${SIM[@]}" --db "$WORK/a.db" --http-max-conns 256 --http-conns-per-ip 32 --http-timeout 3
req PUT /v1/gpus/0/limit '{"watts":300,"expires_s":600}'; expect 200 "cap before the flood"
LINES0=$(wc -l <"$WORK/a.log")
flood 127.0.0.2 "$PORT" 600 4
wait_until 20 flooded || fail "flood did not start"
for p in /healthz /metrics; do
    [ "$(fast GET $p 127.0.0.3)" = 200 ] || fail "GET $p from another address during the flood"
done
[ "$(fast DELETE /v1/gpus/0/limit)" = 200 ] || fail "DELETE /v1/gpus/0/limit during the flood"
ok "$(cat "$WORK/flood.out") slow connections from 127.0.0.2 against 256 slots: /healthz, /metrics, DELETE limit still answer within 2 s"
kill "$FLOOD" 2>/dev/null || true; wait "$FLOOD" 2>/dev/null || true
LINES=$(( $(wc -l <"$WORK/a.log") - LINES0 ))
[ "$LINES" -lt 30 ] || fail "$LINES log lines for one flood: $(tail -n 5 "$WORK/a.log")"
ok "the flood wrote $LINES log line(s)"

# --- idle connections are closed after --http-timeout ---
python3 - "$PORT" <<'EOF_PY' || fail "an idle connection was not closed within the timeout"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.send(b"GET /healthz HTTP/1.1\r\n")
s.settimeout(6)
t = time.monotonic()
assert s.recv(100) == b"", "data on an incomplete request"
assert 2 <= time.monotonic() - t <= 5.5, time.monotonic() - t
EOF_PY
ok "a connection idle for --http-timeout 3 s is closed"

# --- two Content-Length headers (and CL with TE) are refused ---
python3 - "$PORT" "$TOKEN" <<'EOF_PY' || fail "smuggled length accepted"
import socket, sys
port, tok = int(sys.argv[1]), sys.argv[2]
for extra in (b"Content-Length: 2\r\nContent-Length: 2\r\n",
              b"Content-Length: 2\r\nContent-Length: 40\r\n",
              b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n"):
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(3)
    s.send(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tok.encode() +
           b"\r\n" + extra + b"\r\n{}")
    r = s.recv(4096)
    assert r.startswith(b"HTTP/1.1 400"), (extra, r[:200])
    s.close()
EOF_PY
req GET /v1/jobs "" no
[ "$(jq_py 'len(d["jobs"])')" = 0 ] || fail "a smuggled request registered a job: $BODY"
ok "two Content-Length headers, or one with Transfer-Encoding: 400"
pfid_stop TERM

# --- every ordinary slot taken: the reserve for authorized clients ---
# The idle timeout and the hold are long (the flood is killed once checked):
# on a loaded machine, connecting 200 sockets can take seconds, and a slot
# freed by the timeout would let the untrusted address in for the wrong reason.
pfid_start "$WORK/b.log" "${SIM[@]}" --db "$WORK/b.db" --http-max-conns 64 --http-conns-per-ip 1000 --http-timeout 60
req PUT /v1/gpus/1/limit '{"watts":300,"expires_s":600}'; expect 200 "the controller caps GPU 1 (127.0.0.1 is now trusted)"
flood 127.0.0.2 "$PORT" 200 60
wait_until 20 flooded || fail "flood did not start"
sleep 0.3
[ "$(fast GET /healthz 127.0.0.3)" = 000 ] || fail "an untrusted address got a reserved slot"
[ "$(fast DELETE /v1/gpus/1/limit)" = 200 ] || fail "the trusted controller was locked out"
[ "$(fast GET /healthz)" = 200 ] || fail "the trusted address cannot read /healthz"
ok "48 of 64 slots taken: another address is refused, the authorized controller's DELETE gets through"
grep -q "connection(s) refused so far" "$WORK/b.log" || fail "refusals not logged"
kill "$FLOOD" 2>/dev/null || true; wait "$FLOOD" 2>/dev/null || true
pfid_stop TERM
echo PASS
