# Agent hosts as network namespaces (sourced after pfid_lib.sh; needs root
# and iproute2). One bridge in the root namespace holds the first address of
# a private /24; each host is a namespace joined to it by a veth pair, its
# end called eth0 in there, with an address of its own on that subnet. The
# controller stays in the root namespace and reaches the hosts over the
# bridge, so cutting a host's link (netns_cut) makes it unreachable as a
# dead node would be, while its pfid keeps running.
#
#   netns_setup N            hosts h0..h(N-1); sets NETNS_SUBNET (a.b.c),
#                            NETNS_GW (the bridge's address)
#   netns_addr NAME          the host's address
#   netns_exec NAME CMD...   runs CMD in the host's namespace
#   netns_pfid_start NAME LOG ARGS...
#                            pfid in the host on ADDR:0 (pfid_start's
#                            contract: sets PFID_PID, PORT, LISTEN_URL)
#   netns_cut NAME / netns_heal NAME
#                            the host's link down / up (from inside it)
#
# Names: every run takes a unique prefix (its pid and a random tag), so
# parallel ctest runs do not meet; the subnet is chosen under a lock among
# those no route or address on this machine uses. Cleanup: on exit (trap),
# and by a watcher in its own session, outside the test's process group,
# that waits for the test's pid to die (SIGKILL, a ctest timeout killing
# the group) and then removes what is left: the processes in the
# namespaces, the namespaces (their veths go with them), the bridge. A run
# also removes what an earlier killed run's dead watcher left (its owner
# pid is gone).
: "${WORK:?source pfid_lib.sh first}"

NETNS_STATE_DIR=/run/pfi-netns
NETNS_HOSTS=()

netns_require() {
    if [ "$(id -u)" != 0 ]; then
        echo "skip: network namespaces need root" >&2
        exit 77
    fi
    command -v ip >/dev/null || fail "iproute2's ip is missing (scripts/install-deps.sh installs it)"
}

# The start time of pid $1 (field 22 of /proc/PID/stat), so that a reused pid
# is not taken for the owner.
netns__start_time() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null || true; }

# netns__remove TAG: removes every namespace and link of run TAG (idempotent).
netns__remove() {
    local tag=$1 ns p
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^pfi-$tag-" || true); do
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null || true
    done
    # A namespace outlives its deletion while a socket in it lingers (a
    # FIN that a cut link never carried): its veth goes now, with the peer.
    for p in $(ip -o link show 2>/dev/null | grep -o "pv$tag[0-9]*" | sort -u); do
        ip link del "$p" 2>/dev/null || true
    done
    ip link del "pb$tag" 2>/dev/null || true
    rm -f "$NETNS_STATE_DIR/$tag"
}

# Runs left behind by a test killed together with its watcher.
netns__sweep() {
    local f tag pid st
    for f in "$NETNS_STATE_DIR"/*; do
        [ -f "$f" ] || continue
        tag=${f##*/}
        read -r pid st <"$f" || continue
        if [ -n "$pid" ] && [ "$(netns__start_time "$pid")" = "$st" ]; then continue; fi
        netns__remove "$tag"
    done
}

netns_cleanup() {
    [ -n "${NETNS_TAG:-}" ] && netns__remove "$NETNS_TAG"
    return 0
}

# The watcher: its own session (setsid), stdio closed (ctest waits for the
# test's pipes to close), polling the owner's pid.
netns__watch() {
    local owner=$1 st
    st=$(netns__start_time "$owner")
    setsid bash -c '
        owner=$1 st=$2 tag=$3
        '"$(declare -f netns__start_time netns__remove)"'
        NETNS_STATE_DIR='"$NETNS_STATE_DIR"'
        while [ "$(netns__start_time "$owner")" = "$st" ]; do sleep 0.5; done
        netns__remove "$tag"' netns-watch "$owner" "$st" "$NETNS_TAG" </dev/null >/dev/null 2>&1 &
}

netns_setup() {
    local n=$1 i a b
    netns_require
    mkdir -p "$NETNS_STATE_DIR"
    # 5 hex digits: "pb" + tag (7) and "pv" + tag + host number stay within
    # IFNAMSIZ (15).
    NETNS_TAG=$(head -c 3 /dev/urandom | od -An -tx1 | tr -d ' \n' | cut -c1-5)
    # On exit: pfid_lib's cleanup (kills the processes), then the namespaces.
    trap 'cleanup; netns_cleanup' EXIT
    netns__watch $$
    exec 8>"$NETNS_STATE_DIR/.lock"
    flock 8
    netns__sweep # under the lock: no other run is between its record and its bridge
    echo "$$ $(netns__start_time $$)" >"$NETNS_STATE_DIR/$NETNS_TAG"
    NETNS_SUBNET=
    for i in $(seq 50); do
        a=$((RANDOM % 56 + 200)) b=$((RANDOM % 256))
        if ! ip -4 route show | grep -q "^10\.$a\.$b\." && ! ip -4 addr show | grep -q " 10\.$a\.$b\."; then
            NETNS_SUBNET=10.$a.$b
            break
        fi
    done
    [ -n "$NETNS_SUBNET" ] || { flock -u 8; fail "no free 10.x.y.0/24 for the test bridge"; }
    NETNS_GW=$NETNS_SUBNET.1
    ip link add "pb$NETNS_TAG" type bridge || { flock -u 8; fail "cannot create a bridge (ip link add)"; }
    ip addr add "$NETNS_GW/24" dev "pb$NETNS_TAG"
    ip link set "pb$NETNS_TAG" up
    flock -u 8
    exec 8>&-
    for i in $(seq 0 $((n - 1))); do netns__host "h$i" "$NETNS_SUBNET.$((10 + i))"; done
}

# netns__host NAME ADDR
netns__host() {
    local name=$1 addr=$2 ns=pfi-$NETNS_TAG-$1 veth=pv$NETNS_TAG${1#h}
    ip netns add "$ns" || fail "ip netns add $ns"
    ip link add "$veth" type veth peer name eth0 netns "$ns" || fail "ip link add $veth (veth)"
    ip link set "$veth" master "pb$NETNS_TAG" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    NETNS_HOSTS+=("$name")
    declare -g "NETNS_ADDR_$name=$addr"
}

netns_addr() {
    local v=NETNS_ADDR_$1
    [ -n "${!v:-}" ] || fail "no netns host $1"
    echo "${!v}"
}

netns_exec() {
    local name=$1
    shift
    ip netns exec "pfi-$NETNS_TAG-$name" "$@"
}

netns_pfid_start() {
    local name=$1 log=$2 addr
    shift 2
    addr=$(netns_addr "$name")
    ip netns exec "pfi-$NETNS_TAG-$name" "$PFID_BIN" --listen "$addr:0" --token-file "$TOKEN_FILE" \
        "$@" 2>"$log" &
    PFID_PID=$!
    PIDS+=("$PFID_PID")
    await_listening "$log" "$PFID_PID" "pfid on $name"
    PORT=${LISTEN_URL##*:}
}

netns_cut() { ip -n "pfi-$NETNS_TAG-$1" link set eth0 down || fail "netns_cut $1"; }
netns_heal() { ip -n "pfi-$NETNS_TAG-$1" link set eth0 up || fail "netns_heal $1"; }
