#!/usr/bin/env bash
# The README cannot drift: every `pfi` command in its code blocks runs (or,
# for a synopsis, names a command that exists), and the numbers of a table
# marked `<!-- readme-check: CMD -->` match CMD's output (tests/readme_check.py).
set -u
cd "$PFI_SOURCE_DIR"
python3 tests/readme_check.py "$PFI_BIN" README.md
