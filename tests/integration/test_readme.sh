#!/usr/bin/env bash
# The README and docs/ cannot drift: every command in the README's sh blocks
# runs as printed, every `pfi` command in docs/'s code blocks runs (or, for a
# synopsis, names a command that exists), and the numbers of a table marked
# `<!-- readme-check: CMD -->` match CMD's output (tests/readme_check.py).
set -u
cd "$PFI_SOURCE_DIR"
export LSAN_OPTIONS="suppressions=$PFI_SOURCE_DIR/tests/integration/lsan-plplot.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
python3 tests/readme_check.py "$PFI_BIN" "${PFID_BIN:-$(dirname "$PFI_BIN")/pfid}" "$PFI_SHARED_DIR" \
  README.md docs/*.md
