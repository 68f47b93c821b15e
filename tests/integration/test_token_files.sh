#!/usr/bin/env bash
# Every program that reads a token file reads it by the same rules (issue 30
# item 5: pfi/token_file.h) and none hangs on a FIFO (issue 27 item 8: pfid
# waited for ever for a writer, as did pfi control and pfi sweep): pfid, pfi
# control run, pfi control target add and pfi sweep --via-pfid each refuse
# a FIFO within seconds (exit 1, the file named, "a FIFO"), a group-readable
# file (pfi sweep used any), and a token on two lines; a symbolic link to a
# private file (a Kubernetes Secret's layout) is read. The Slurm plugin
# compiles the same reader (test_token_file covers its rules, test_slurm the
# plugin).
. "$(dirname "$0")/pfid_lib.sh"
: "${PFI_BIN:?}"
mkfifo -m 600 "$WORK/fifo"
printf '%s\n' "$TOKEN" >"$WORK/readable"
chmod 644 "$WORK/readable"
printf '%s\nsecond line\n' "$TOKEN" >"$WORK/two-lines"
chmod 600 "$WORK/two-lines"
mkdir "$WORK/secret" "$WORK/secret/..data"
printf '%s\n' "$TOKEN" >"$WORK/secret/..data/token"
chmod 400 "$WORK/secret/..data/token"
ln -s ..data/token "$WORK/secret/token"

# refused WHAT FILE WORDS CMD...: CMD must exit 1 within 10 s, naming FILE
# and saying WORDS.
refused() {
    local what=$1 file=$2 words=$3 rc=0
    shift 3
    timeout 10 "$@" >"$WORK/out" 2>&1 </dev/null || rc=$?
    [ "$rc" = 124 ] && fail "$what: still waiting after 10 s"
    [ "$rc" = 1 ] || fail "$what: exit $rc, expected 1: $(cat "$WORK/out")"
    grep -qF "$file" "$WORK/out" && grep -qF "$words" "$WORK/out" ||
        fail "$what: no clear message: $(cat "$WORK/out")"
    ok "$what: refused ($(tail -n1 "$WORK/out"))"
}
PFID=("$PFID_BIN" --backend sim --sim-gpus 1 --db "$WORK/pfid.db" --listen 127.0.0.1:0
      --lock-dir "$WORK/locks")
CONTROL=("$PFI_BIN" control run --db "$WORK/ctl.db" --agents http://127.0.0.1:1 --listen 127.0.0.1:0)
TARGET=("$PFI_BIN" control target add --url http://127.0.0.1:1 --site-power-w 1000 --duration-s 60)
SWEEP=("$PFI_BIN" sweep --caps 400,700 --gpus 0 --out "$WORK/sw" --lock-dir "$WORK/locks"
       --via-pfid http://127.0.0.1:1)
for f in fifo readable two-lines; do
    case $f in
    fifo) words="a FIFO" ;;
    readable) words="group or others" ;;
    two-lines) words="more than one line" ;;
    esac
    refused "pfid, $f" "$WORK/$f" "$words" "${PFID[@]}" --token-file "$WORK/$f"
    refused "pfi control run, $f" "$WORK/$f" "$words" "${CONTROL[@]}" --token-file "$WORK/$f"
    refused "pfi control target add, $f" "$WORK/$f" "$words" "${TARGET[@]}" --token-file "$WORK/$f"
    refused "pfi sweep --via-pfid, $f" "$WORK/$f" "$words" "${SWEEP[@]}" --token-file "$WORK/$f" -- true
done
# pfid does not even bind before the token is read: nothing was started.
[ ! -e "$WORK/pfid.db" ] || fail "pfid made its store before reading the token"

# Through a symbolic link to a private file: read.
pfid_start "$WORK/pfid.log" --backend sim --sim-gpus 1 --db "$WORK/pfid.db" --lock-dir "$WORK/locks" \
    --token-file "$WORK/secret/token"
req POST /v1/jobs '{"id":"linked","gpus":[0]}'; expect 201 "the token from a linked Secret file"
echo PASS
