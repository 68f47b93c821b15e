#!/usr/bin/env bash
# The layering check must fail when it should: a copy of the tree with one
# deliberate upward include (core including io's store.h), one private
# header reached across layers, and one repeated basename, each alone.
set -euo pipefail
src=${PFI_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { python3 "$src/tests/arch/check-layers.py" "$tmp/tree" > "$tmp/out" 2>&1; }
fresh() { rm -rf "$tmp/tree"; mkdir "$tmp/tree"; cp -r "$src/include" "$src/src" "$tmp/tree/"; }

fresh
check || { cat "$tmp/out"; echo "selftest: the clean tree should pass"; exit 1; }

fresh
echo '#include "pfi/store.h"' >> "$tmp/tree/src/core/curve.c"
if check; then echo "selftest: an upward include (core -> io) passed"; exit 1; fi
grep -q 'src/core/curve.c:.*core includes pfi/store.h of the higher layer io' "$tmp/out"

fresh
echo '#include "agent.h"' >> "$tmp/tree/src/cli/cli_util.c"
if check; then echo "selftest: another layer's private header passed"; exit 1; fi
grep -q 'src/cli/cli_util.c:.*agent.h is not a private header of src/cli' "$tmp/out"

fresh
cp "$tmp/tree/src/core/curve.c" "$tmp/tree/src/io/curve.c"
if check; then echo "selftest: a repeated basename passed"; exit 1; fi
grep -q 'same basename' "$tmp/out"
echo "selftest: each violation is caught"
