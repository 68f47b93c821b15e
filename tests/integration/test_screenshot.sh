#!/usr/bin/env bash
# The README's picture is made by scripts/screenshot.sh, never by hand: the
# script runs here as it does for docs/report-screenshot.png (pfi report on
# the embedded dataset, headless Chromium), into a temporary file, and must
# leave a PNG of the size it states.
set -euo pipefail
: "${PFI_BIN:?PFI_BIN not set (run through ctest)}"
cd "$PFI_SOURCE_DIR"
export LSAN_OPTIONS="suppressions=$PFI_SOURCE_DIR/tests/integration/lsan-plplot.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
WORK=$(mktemp -d /tmp/pfi-screenshot-test-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
before=$(md5sum docs/report-screenshot.png)
SCREENSHOT_OUT="$WORK/shot.png" SCREENSHOT_WIDTH=900 SCREENSHOT_HEIGHT=700 \
    scripts/screenshot.sh "$PFI_BIN" >"$WORK/out" 2>&1 || { cat "$WORK/out"; exit 1; }
python3 - "$WORK/shot.png" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
assert struct.unpack(">II", b[16:24]) == (900, 700), struct.unpack(">II", b[16:24])
assert len(b) > 20_000, len(b)  # a rendered page, not a blank one
PY
[ "$(md5sum docs/report-screenshot.png)" = "$before" ] || { echo "FAIL: docs/ changed"; exit 1; }
grep -q "wrote $WORK/shot.png (900x700)" "$WORK/out" || { cat "$WORK/out"; exit 1; }
echo "ok: scripts/screenshot.sh"
