#!/usr/bin/env python3
"""Checks the layering of pfi's sources (DESIGN.md, "Layers and folders").

A layer may include its own headers and those of the layers below it:
    core -> io -> telemetry -> agent, control;  core, io -> report;
    cli over everything but agent.
Public headers live in include/<layer>/pfi/X.h and are included as "pfi/X.h";
private headers live in src/<layer>/ and are included by that layer alone,
by bare name. No two source files may share a basename (a stack trace or a
profile names a file by its basename).

Usage: check-layers.py [ROOT]   (exit 1 and one line per violation)
The build enforces the same rule (each layer's library sees only the include
roots below it); this check also covers what the compiler cannot see, such as
a private header included across layers through a relative path.
"""
import os
import re
import sys

BELOW = {
    "core": [],
    "io": ["core"],
    "telemetry": ["core", "io"],
    "report": ["core", "io"],
    "control": ["core", "io", "telemetry"],
    "agent": ["core", "io", "telemetry"],
    "cli": ["core", "io", "telemetry", "report", "control"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def main(root):
    errors = []
    public = {}  # "pfi/X.h" -> layer
    for layer in BELOW:
        d = os.path.join(root, "include", layer, "pfi")
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            key = "pfi/" + name
            if key in public:
                errors.append(f"include/{layer}/pfi/{name}: also in include/{public[key]}/pfi/")
            public[key] = layer
    stray = os.path.join(root, "include", "pfi")
    if os.path.isdir(stray) and os.listdir(stray):
        errors.append("include/pfi/: headers must live in include/<layer>/pfi/")

    files = []  # (layer, path relative to root)
    for layer in BELOW:
        for base in (os.path.join("include", layer, "pfi"), os.path.join("src", layer)):
            d = os.path.join(root, base)
            for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                if name.endswith((".c", ".h")):
                    files.append((layer, os.path.join(base, name)))
    for d in sorted(os.listdir(os.path.join(root, "src"))):
        if os.path.isdir(os.path.join(root, "src", d)) and d not in BELOW:
            errors.append(f"src/{d}/: not a known layer (add it to BELOW and CMakeLists.txt)")

    seen = {}
    for layer, rel in files:
        if rel.endswith(".c"):
            b = os.path.basename(rel)
            if b in seen:
                errors.append(f"{rel}: same basename as {seen[b]}")
            seen[b] = rel
        allowed = set(BELOW[layer]) | {layer}
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            for ln, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if inc.startswith("pfi/"):
                    owner = public.get(inc)
                    if owner is None:
                        errors.append(f"{rel}:{ln}: {inc} is not a public header of any layer")
                    elif owner not in allowed:
                        errors.append(f"{rel}:{ln}: {layer} includes {inc} of the higher layer {owner}")
                elif "/" in inc:
                    errors.append(f"{rel}:{ln}: {inc}: a private header of another folder")
                elif not os.path.isfile(os.path.join(root, "src", layer, inc)):
                    errors.append(f"{rel}:{ln}: {inc} is not a private header of src/{layer}")
    for e in errors:
        print(e)
    if errors:
        print(f"check-layers: {len(errors)} violation(s)", file=sys.stderr)
        return 1
    print(f"check-layers: {len(files)} files, layering holds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")))
