#!/usr/bin/env python3
"""The README cannot drift: tests/integration/test_readme.sh runs this.

1. Every `pfi ...` line in a fenced code block (a trailing line indented
   under it continues it) is run from the source root. A synopsis is
   illustrative, not run: it has `[`, `|`, `$VAR`, `...` or an ALL-CAPS placeholder
   (FILE, SWEEPS.csv, W); for it, `pfi CMD --help` must print `Usage: pfi CMD`
   (the command exists). Any other line must exit 0.
2. `<!-- readme-check: pfi ... -->` before a Markdown table: the command is
   run and each table row is compared, in order, with the output's rows that
   carry numbers: the row's cells after the label, taking the second value of
   a "paper / ours" cell, against the output row's numbers by position, at
   the precision the README prints (0.806 against 0.80612 passes, 0.81 would
   not); "undefined" or an em dash against "undef".
Usage: readme_check.py PFI_BIN README.md (from the source root).
"""
import re
import shlex
import subprocess
import sys

PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_.]*(\.csv|\.json)?$")
NUM = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def run(pfi, args):
    return subprocess.run([pfi] + args, capture_output=True, text=True)


def code_commands(lines):
    cmds, inside = [], False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            inside = not inside
            continue
        if not inside:
            continue
        if line.startswith("pfi "):
            cmds.append([i + 1, line.strip()])
        elif cmds and cmds[-1][0] is not None and line.startswith("    ") and line.strip() \
                and lines[i - 1].rstrip() and (lines[i - 1].startswith("pfi ") or lines[i - 1].startswith("    ")):
            cmds[-1][1] += " " + line.strip()
    return cmds


def illustrative(words):
    return any(c in w for w in words for c in "[|$") or "..." in " ".join(words) or \
        any(PLACEHOLDER.match(w) for w in words[1:])


def value(cell):
    cell = cell.strip().replace("\u2212", "-")
    if " / " in cell:
        cell = cell.split(" / ")[1].strip()
    return cell


def same(want, got):
    if want in ("undefined", "\u2014", "-", "null"):
        return got in ("undef", "null", "-")
    if not NUM.match(want) or not NUM.match(got):
        return want == got
    m = re.match(r"^[-+]?\d*\.?(\d*)", want)
    decimals = len(m.group(1)) if "." in want else 0
    return abs(float(got) - float(want)) <= 0.5 * 10 ** -decimals + 1e-12


def check_tables(pfi, lines, errors):
    n = 0
    for i, line in enumerate(lines):
        m = re.match(r"^<!-- readme-check: (pfi .*) -->$", line.strip())
        if not m:
            continue
        args = shlex.split(m.group(1))[1:]
        r = run(pfi, args)
        if r.returncode != 0:
            errors.append("README:%d: %s exits %d: %s" % (i + 1, m.group(1), r.returncode, r.stderr.strip()))
            continue
        rows = []
        for k in range(i + 1, len(lines)):
            t = lines[k].strip()
            if not t.startswith("|"):
                if rows or not t == "":
                    break
                continue
            cells = [c for c in t.strip("|").split("|")]
            if all(set(c.strip()) <= set("-: ") for c in cells):
                continue
            rows.append((k + 1, cells))
        header, body = rows[0], rows[1:]
        out = []
        for l in r.stdout.splitlines():
            toks = [t for t in l.replace("|", " ").split() if t]
            nums = [t for t in toks[1:] if NUM.match(t) or t == "undef"]
            if len(toks) > 1 and len(nums) == len(toks) - 1 and len(nums) >= len(header[1]) - 1:
                out.append(nums)
        if len(out) < len(body):
            errors.append("README:%d: %d table rows, the output has %d numeric rows" % (header[0], len(body), len(out)))
            continue
        for (ln, cells), got in zip(body, out):
            for col, cell in enumerate(cells[1:]):
                want = value(cell)
                n += 1
                if col >= len(got) or not same(want, got[col]):
                    errors.append("README:%d: column %d (%s) says %s, `%s` prints %s" % (
                        ln, col + 2, header[1][col + 1].strip(), want, m.group(1),
                        got[col] if col < len(got) else "nothing"))
    return n


def main():
    pfi, readme = sys.argv[1], sys.argv[2]
    lines = open(readme, encoding="utf-8").read().splitlines()
    errors, ran, synopses = [], 0, 0
    for ln, cmd in code_commands(lines):
        words = shlex.split(cmd, comments=True)
        if illustrative(words):
            synopses += 1
            r = run(pfi, [words[1], "--help"])
            if r.returncode != 0 or ("Usage: pfi " + words[1]) not in r.stdout:
                errors.append("README:%d: synopsis of `pfi %s`, which has no such --help" % (ln, words[1]))
            continue
        r = run(pfi, words[1:])
        ran += 1
        if r.returncode != 0:
            errors.append("README:%d: `%s` exits %d: %s" % (ln, cmd, r.returncode, r.stderr.strip()[:300]))
    compared = check_tables(pfi, lines, errors)
    for e in errors:
        print("FAIL: " + e)
    print("readme: %d commands run, %d synopses checked, %d quoted numbers compared" % (ran, synopses, compared))
    if ran == 0 or compared == 0:
        print("FAIL: nothing was checked")
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
