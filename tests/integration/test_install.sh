#!/usr/bin/env bash
# `make install` puts a working pfi under DESTDIR/PREFIX: what `make install
# PREFIX=P DESTDIR=D` runs (cmake --install with the prefix) installs the
# binaries, the man pages, the dataset, the systemd units (naming the
# prefix's binaries) and the Slurm script; the installed pfi report reads
# the installed dataset (no PFI_DATA_DIR, no source tree beside it, run
# from an empty folder), and stops finding it when it is moved away; man -l
# renders every installed page without a warning.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${PFI_BUILD_DIR:?}" "${PFI_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LSAN_OPTIONS="suppressions=$PFI_SOURCE_DIR/tests/integration/lsan-plplot.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
prefix=/opt/pfi-test
root=$tmp/dest$prefix
DESTDIR=$tmp/dest cmake --install "$PFI_BUILD_DIR" --prefix "$prefix" > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }

for f in bin/pfi bin/pfid share/man/man1/pfi.1 share/man/man1/pfi-index.1 share/man/man5/pfi-formats.5 \
         share/man/man8/pfid.8 share/man/man8/pfi-control.8 share/pfi/paper-h200/sweeps.csv \
         share/pfi/paper-h200/telemetry.csv share/pfi/paper-h200/heldout-sweeps.csv \
         share/pfi/paper-h100/sweeps.csv lib/systemd/system/pfid.service \
         lib/systemd/system/pfi-control.service lib/pfi/pfi-slurm-job.sh share/doc/pfi/README.md; do
  [ -e "$root/$f" ] || fail "$prefix/$f was not installed"
done
[ -x "$root/bin/pfi" ] && [ -x "$root/bin/pfid" ] || fail "the binaries are not executable"
n=$(ls "$PFI_SOURCE_DIR"/man/*.[158] | wc -l)
m=$(ls "$root"/share/man/man[158]/* | wc -l)
[ "$n" = "$m" ] || fail "$m man pages installed, man/ has $n"
grep -q "^ExecStart=$prefix/bin/pfid " "$root/lib/systemd/system/pfid.service" ||
  fail "pfid.service does not start $prefix/bin/pfid"
grep -q "^ExecStart=$prefix/bin/pfi control run" "$root/lib/systemd/system/pfi-control.service" ||
  fail "pfi-control.service does not start $prefix/bin/pfi"
if [ -n "${PFI_SPANK_PLUGIN:-}" ]; then
  [ -e "$root/lib/pfi/spank_pfi.so" ] || fail "the SPANK plugin was built but not installed"
fi
"$root/bin/pfid" --version | grep -q '^pfid ' || fail "installed pfid --version"

# The installed report, away from the source tree and its environment.
mkdir "$tmp/work"
cd "$tmp/work" || exit 1
run_report() {
  env -u PFI_DATA_DIR -u PFI_SHARED_DIR "$root/bin/pfi" report --workloads 2 --ci 0 -o "$1" \
    > "$tmp/report.out" 2> "$tmp/report.err"
}
run_report "$tmp/work/r1" || { rc=$?; cat "$tmp/report.err"; fail "installed pfi report exits $rc"; }
grep -q "$root/bin/../share/pfi/paper-h200/sweeps.csv" r1/report.html ||
  fail "the report does not name the installed dataset: $(grep -o '[^ \"<>]*sweeps.csv' r1/report.html | head -1)"
python3 - "$tmp/work/r1/summary.json" <<'PY' || fail "the installed report's summary"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["groups"] == 25 and s["heldout_groups"] == 4, s["groups"]
assert s["generations"]["pairs"] == 6, s["generations"]  # data/paper-h100 beside it
PY
# Moved away, the installed dataset is no longer found: the first run used it.
mv "$root/share/pfi" "$tmp/moved"
if run_report "$tmp/work/r2" && grep -q "$root/bin/../share/pfi" r2/report.html; then
  fail "pfi report still reads $prefix/share/pfi after it was moved"
fi
mv "$tmp/moved" "$root/share/pfi"

# Every installed page renders with man -l, without a warning.
for p in "$root"/share/man/man[158]/*; do
  out=$(MANPAGER=cat MANWIDTH=80 man -l "$p" 2> "$tmp/man.err") || fail "man -l $p"
  [ -s "$tmp/man.err" ] && fail "man -l $p: $(head -3 "$tmp/man.err")"
  name=$(basename "$p"); name=${name%.*}
  echo "$out" | grep -qi "^$name" || echo "$out" | grep -q "${name^^}" || fail "man -l $p does not show $name"
done
echo "install: $m pages, the binaries, the dataset and the units under $prefix; the installed report read $prefix/share/pfi"
