#!/usr/bin/env python3
"""The README and docs/ cannot drift: tests/integration/test_readme.sh runs this.

README.md (the first file): every fenced block carries a language; its `sh`
blocks are its commands and all of them run, in order, as one bash script
(`set -euo pipefail`, so state and background processes carry from one
block to the next, as in a reader's shell), exactly as printed, in a
scratch folder laid out as the checkout: the source tree's folders linked
in, `build/pfi` and `build/pfid` the binaries under test, `../shared` the
shared folder. Two substitutions, said here: the default ports 9477 and
9478 become free ones (tests run in parallel), and `make demo` runs what it
runs after building (`scripts/demo.sh build/pfi`; in a sanitizer build,
where it takes minutes, test_report covers pfi report instead); `make test`
is this suite itself and is not run. A command in a block that is not `sh` is an error.

Every file:
1. Every `pfi ...` line in a fenced code block (a trailing line indented
   under it continues it) is run from the source root. A synopsis is
   illustrative, not run: it has `[`, `|`, `$VAR`, `...` or an ALL-CAPS placeholder
   (FILE, SWEEPS.csv, W); for it, `pfi CMD --help` must print `Usage: pfi CMD`
   (the command exists). Any other line must exit 0. (In the README these
   are its `sh` blocks' job, above.)
2. `<!-- readme-check: pfi ... -->` before a Markdown table: the command is
   run and each table row is compared, in order, with the output's rows that
   carry numbers: the row's cells after the label, taking the second value of
   a "paper / ours" cell, against the output row's numbers by position, at
   the precision the README prints (0.806 against 0.80612 passes, 0.81 would
   not); "undefined" or an em dash against "undef".
Usage: readme_check.py PFI_BIN PFID_BIN SHARED_DIR README.md [DOC.md...]
(from the source root).
"""
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

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


def check_tables(pfi, lines, errors, name="README.md"):
    n = 0
    for i, line in enumerate(lines):
        m = re.match(r"^<!-- readme-check: (pfi .*) -->$", line.strip())
        if not m:
            continue
        args = shlex.split(m.group(1))[1:]
        r = run(pfi, args)
        if r.returncode != 0:
            errors.append("%s:%d: %s exits %d: %s" % (name, i + 1, m.group(1), r.returncode, r.stderr.strip()))
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
            errors.append("%s:%d: %d table rows, the output has %d numeric rows" % (name, header[0], len(body), len(out)))
            continue
        for (ln, cells), got in zip(body, out):
            for col, cell in enumerate(cells[1:]):
                want = value(cell)
                n += 1
                if col >= len(got) or not same(want, got[col]):
                    errors.append("%s:%d: column %d (%s) says %s, `%s` prints %s" % (
                        name, ln, col + 2, header[1][col + 1].strip(), want, m.group(1),
                        got[col] if col < len(got) else "nothing"))
    return n


def free_port():
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def sh_blocks(lines, errors, name):
    """[(readme line, text)] of the sh blocks' lines; other blocks checked."""
    out, lang, start = [], None, 0
    for i, line in enumerate(lines):
        if line.startswith("```"):
            if lang is None:
                lang, start = line[3:].strip(), i + 1
                if not lang:
                    errors.append("%s:%d: a code block without a language (sh runs; text, json, conf do not)" % (name, i + 1))
            else:
                lang = None
            continue
        if lang == "sh":
            out.append((i + 1, line))
        elif lang is not None and re.match(r"^\s*(build/pfi|build/pfid|pfi|pfid|make|curl|man) ", line):
            errors.append("%s:%d: a command in a `%s` block, which is not run: make it `sh`" % (name, i + 1, lang))
    return out


def run_readme(pfi, pfid, shared, name, lines, errors):
    blocks = sh_blocks(lines, errors, name)
    ldd = subprocess.run(["ldd", pfi], capture_output=True, text=True).stdout
    sanitized = "libasan" in ldd or "libubsan" in ldd
    ports = {"9477": str(free_port()), "9478": str(free_port())}
    script, where, skipped = ["set -euo pipefail",
                              "trap 'echo \"README_FAILED $LINENO: $BASH_COMMAND\" >&2' ERR"], [0, 0], 0
    for ln, text in blocks:
        t = text
        if re.match(r"^make test\b", t.strip()):
            skipped += 1
            t = "# " + t
        elif re.match(r"^make demo\b", t.strip()) and sanitized:
            # 18 s of CPU under ASan (minutes on a loaded machine); this
            # build's test_report runs pfi report, the plain build runs it here
            skipped += 1
            t = "# " + t
        elif re.match(r"^make demo\b", t.strip()):
            t = "bash scripts/demo.sh build/pfi"
        elif t.strip().startswith("make "):
            errors.append("%s:%d: `%s`: test_readme knows how to run only make demo" % (name, ln, t.strip()))
            t = "# " + t
        for a, b in ports.items():
            t = t.replace("127.0.0.1:" + a, "127.0.0.1:" + b)
        script.append(t)
        where.append(ln)
    src = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "checkout")
        os.mkdir(root)
        for e in os.listdir(src):
            if e != "build" and not e.startswith("build-") and not e.startswith("."):
                os.symlink(os.path.join(src, e), os.path.join(root, e))
        os.mkdir(os.path.join(root, "build"))
        os.symlink(os.path.abspath(pfi), os.path.join(root, "build", "pfi"))
        os.symlink(os.path.abspath(pfid), os.path.join(root, "build", "pfid"))
        os.symlink(os.path.abspath(shared), os.path.join(tmp, "shared"))
        with open(os.path.join(tmp, "readme.sh"), "w") as f:
            f.write("\n".join(script) + "\n")
        # Output to a file, not a pipe: a background process left running
        # (a failed block never reaches its kill) must not keep us waiting.
        log = os.path.join(tmp, "readme.log")
        with open(log, "w") as f:
            proc = subprocess.Popen(["bash", os.path.join(tmp, "readme.sh")], cwd=root, stdout=f,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            try:
                proc.wait(timeout=240)
            except subprocess.TimeoutExpired:
                proc.returncode = -1
            finally:
                # what a failed block left running: SIGTERM first (pfid
                # restores its caps), then SIGKILL
                for sig, pause in ((signal.SIGTERM, 1), (signal.SIGKILL, 0)):
                    try:
                        os.killpg(proc.pid, sig)
                        time.sleep(pause)
                    except ProcessLookupError:
                        break
        out = open(log, encoding="utf-8", errors="replace").read()
        if proc.returncode == -1:
            out += "\n(timed out after 240 s)"
    if proc.returncode != 0:
        m = re.findall(r"README_FAILED (\d+): (.*)", out)
        at = "%s:%d: `%s`" % (name, where[int(m[-1][0]) - 1], m[-1][1]) if m else name
        errors.append("%s: the README's commands exit %d:\n%s" % (at, proc.returncode, "\n".join(out.splitlines()[-25:])))
    return len(blocks) - skipped


def main():
    pfi, pfid, shared, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    errors, ran, synopses, compared = [], 0, 0, 0
    for k, name in enumerate(files):
        lines = open(name, encoding="utf-8").read().splitlines()
        if k == 0:
            ran += run_readme(pfi, pfid, shared, name, lines, errors)
        else:
            for ln, cmd in code_commands(lines):
                words = shlex.split(cmd, comments=True)
                if illustrative(words):
                    synopses += 1
                    r = run(pfi, [words[1], "--help"])
                    if r.returncode != 0 or ("Usage: pfi " + words[1]) not in r.stdout:
                        errors.append("%s:%d: synopsis of `pfi %s`, which has no such --help" % (name, ln, words[1]))
                    continue
                r = run(pfi, words[1:])
                ran += 1
                if r.returncode != 0:
                    errors.append("%s:%d: `%s` exits %d: %s" % (name, ln, cmd, r.returncode, r.stderr.strip()[:300]))
        compared += check_tables(pfi, lines, errors, name)
    for e in errors:
        print("FAIL: " + e)
    print("readme: %d command lines run, %d synopses checked, %d quoted numbers compared in %d files" % (
        ran, synopses, compared, len(files)))
    if ran == 0 or compared == 0:
        print("FAIL: nothing was checked")
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
