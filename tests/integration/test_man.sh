#!/usr/bin/env bash
# The man pages cannot drift: every page in man/ lints clean under
# `mandoc -Tlint -Wwarning`, every command has its page, and the options each
# command accepts are the options its page documents (tests/man_check.py).
set -u
cd "$PFI_SOURCE_DIR"
command -v mandoc >/dev/null || { echo "SKIP: mandoc is not installed (scripts/install-deps.sh)"; exit 77; }
python3 tests/man_check.py "$PFI_BIN" "${PFID_BIN:-$(dirname "$PFI_BIN")/pfid}" "$PFI_SOURCE_DIR"
