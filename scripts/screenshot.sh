#!/usr/bin/env bash
# Regenerates docs/report-screenshot.png, the README's picture of the report's
# top: runs `pfi report` on the embedded dataset and has headless Chromium draw
# the page, so the picture is always the page the code writes, never a hand
# edit. Usage: scripts/screenshot.sh [PFI_BIN] (default build/pfi); SCREENSHOT_OUT
# writes elsewhere (test_screenshot does, leaving docs/ alone).
# Needs Debian's chromium (apt-get install chromium).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pfi=${1:-$root/build/pfi}
out=${SCREENSHOT_OUT:-$root/docs/report-screenshot.png}
width=${SCREENSHOT_WIDTH:-1280} height=${SCREENSHOT_HEIGHT:-1500}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "screenshot.sh: no chromium (apt-get install chromium)" >&2; exit 1; }
[ -x "$pfi" ] || { echo "screenshot.sh: no pfi at $pfi (build first)" >&2; exit 1; }
work=$(mktemp -d /tmp/pfi-screenshot-XXXXXX)
trap 'rm -rf "$work"' EXIT
"$pfi" report -o "$work/rep" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
# a private profile: nothing of the user's browser is read or kept
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" \
    --window-size="$width,$height" --screenshot="$work/shot.png" "file://$work/rep/report.html" \
    >/dev/null 2>&1
[ -s "$work/shot.png" ] || { echo "screenshot.sh: chromium wrote no picture" >&2; exit 1; }
mv "$work/shot.png" "$out"
echo "screenshot.sh: wrote $out (${width}x$height)"
