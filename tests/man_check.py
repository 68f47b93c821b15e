#!/usr/bin/env python3
"""The man pages cannot drift: tests/integration/test_man.sh runs this.

1. Every page in man/ lints clean: `mandoc -Tlint -Wwarning` prints nothing
   and exits 0, and its .Dt names the file.
2. Every command `pfi --help` lists has its page (pfi-CMD.1; control is
   pfi-control.8), as do pfi(1) and pfid(8).
3. The options a command has are the options its page documents (the `.It Fl`
   entries of its list):
   - what the command accepts, read from the binary: glibc's getopt_long
     answers `--=x` with "option '--=x' is ambiguous; possibilities: ..."
     naming every long option (pfi's commands leave opterr on); pfid turns
     glibc's messages off, so for it the `struct option` table of
     src/agent/pfid_opts.c is read instead;
   - every option its --help prints (a line of its option table or usage);
   - every option the page documents is accepted: one the binary's own list
     names is; any other (pfid's, an alias glibc's list leaves out) is run,
     `CMD --OPT[=1] --help`, and must not answer as an unknown option does
     (the answer to a made-up option with its name swapped in), so a
     wording change in getopt's or pfi's messages cannot make this pass or
     fail; an abbreviation getopt_long would take is refused.
   pfi-control(8) has one `.Ss pfi control VERB ...` subsection per verb;
   its options are checked against that verb.
Usage: man_check.py PFI_BIN PFID_BIN SOURCE_DIR
"""
import concurrent.futures
import glob
import os
import re
import subprocess
import sys

LONG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
BOGUS = "pfi-no-such-option"


def run(argv):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def lint(page, errors):
    r = subprocess.run(["mandoc", "-Tlint", "-Wwarning", page], capture_output=True, text=True)
    msg = (r.stdout + r.stderr).strip()
    if r.returncode != 0 or msg:
        errors.append("%s: mandoc -Tlint -Wwarning (exit %d):\n%s" % (page, r.returncode, msg))
    name = os.path.basename(page)
    m = re.search(r"^\.Dt (\S+) (\d)", open(page, encoding="utf-8").read(), re.M)
    want = name.rsplit(".", 1)
    if not m or m.group(1).lower() != want[0] or m.group(2) != want[1]:
        errors.append("%s: .Dt does not name the page %s(%s)" % (page, want[0], want[1]))


def page_options(page):
    """{verb path (tuple) or (): {option: takes_argument}} of the page's lists.
    A `.Ss pfi control status, plan, target rm` subsection documents the
    options of each verb it names."""
    sections, verbs = {(): {}}, [()]
    for line in open(page, encoding="utf-8"):
        m = re.match(r"^\.Ss pfi control (.+)$", line)
        if m:
            verbs = [tuple(v.split()) for v in m.group(1).split(",")]
            for v in verbs:
                sections.setdefault(v, {})
            continue
        if not line.startswith(".It "):
            continue
        # .It Fl -grid Ar W,W,... , Fl g Ar W
        for m in re.finditer(r"Fl (-[a-z][a-z0-9-]*)((?:\s+Ar\s+\S+)?)", line):
            for v in verbs:
                sections[v][m.group(1)[1:]] = bool(m.group(2).strip())
    return sections


def help_options(text):
    """Options a --help prints in its usage lines and option table."""
    found, usage = set(), True
    for line in text.splitlines():
        if not line.strip():
            usage = False
            continue
        if usage or re.match(r"^\s+(-\w, )?--[a-z]", line):
            found |= set(LONG.findall(line if usage else line.strip().split("  ")[0]))
    return found


def accepted_by_binary(argv):
    _, _, err = run(argv + ["--=x"])
    m = re.search(r"possibilities:(.*)", err)
    return set(re.findall(r"'--([a-z][a-z0-9-]*)'", m.group(1))) if m else set()


def accepted_by_table(path):
    text = open(path, encoding="utf-8").read()
    return set(re.findall(r'\{\s*"([a-z][a-z0-9-]*)"\s*,\s*(?:no_argument|required_argument|'
                          r'optional_argument|[012])\s*,', text))


def ask(argv, name, takes_arg):
    arg = "--" + name + ("=1" if takes_arg else "")
    rc, out, err = run(argv + [arg, "--help"])
    return rc, (out + err).replace("--" + name, "--@")


_unknown = {}


def answers_as_unknown(argv, opt, takes_arg):
    key = (tuple(argv), takes_arg)
    if key not in _unknown:
        _unknown[key] = ask(argv, BOGUS, takes_arg)
    return ask(argv, opt, takes_arg) == _unknown[key]


def check_command(argv, page, sections, verb, help_argv, code, errors, from_source=False):
    documented = sections.get(verb, {})
    label = " ".join(os.path.basename(a) for a in argv)
    rc, out, err = run(help_argv)
    if rc != 0:
        errors.append("%s: `%s` exits %d" % (page, " ".join(help_argv), rc))
    if not code:
        errors.append("%s: found no options of `%s` to compare with (see tests/man_check.py)" % (page, label))
    for o in sorted(code - set(documented)):
        errors.append("%s: `%s` accepts --%s, which the page does not document" % (page, label, o))
    # one --help may cover several verbs (target add, list, rm): its options
    # need a page entry, under any verb
    on_page = set().union(*sections.values())
    for o in sorted(help_options(out) - on_page):
        errors.append("%s: `%s --help` prints --%s, which the page does not document" % (page, label, o))
    # The binary's own list is the answer for what it names; anything else
    # the page documents (pfid's options, read from the source; an alias
    # glibc leaves out of its list) is asked of the binary itself.
    ask_binary = sorted(o for o in documented if from_source or o not in code)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        unknown = list(pool.map(lambda o: answers_as_unknown(argv, o, documented[o]), ask_binary))
    for o, u in zip(ask_binary, unknown):
        if u:
            errors.append("%s: documents --%s, which `%s` does not accept" % (page, o, label))
        elif not from_source and any(c.startswith(o) for c in code):
            errors.append("%s: documents --%s, an abbreviation of an option of `%s`" % (page, o, label))
    return len(documented)


def main():
    pfi, pfid, src = sys.argv[1], sys.argv[2], sys.argv[3]
    man = os.path.join(src, "man")
    errors, n_opts = [], 0
    pages = sorted(glob.glob(os.path.join(man, "*.[158]")))
    for p in pages:
        lint(p, errors)
    rc, out, _ = run([pfi, "--help"])
    cmds = re.findall(r"^  ([a-z]+)\s", out.split("Commands:", 1)[-1], re.M)
    if len(cmds) < 10:
        errors.append("`pfi --help` lists %d commands" % len(cmds))
    want = ["pfi.1", "pfid.8"] + ["pfi-%s.%s" % (c, "8" if c == "control" else "1") for c in cmds]
    for w in want:
        if not os.path.exists(os.path.join(man, w)):
            errors.append("man/%s is missing" % w)
    checked = 0
    for c in cmds:
        page = os.path.join(man, "pfi-%s.%s" % (c, "8" if c == "control" else "1"))
        if not os.path.exists(page):
            continue
        sections = page_options(page)
        if c == "control":
            verbs = [v for v in sections if v]
            if not verbs:
                errors.append("%s: no `.Ss pfi control VERB` subsections" % page)
            for v in verbs:
                argv = [pfi, "control"] + list(v)
                n_opts += check_command(argv, page, sections, v, argv + ["--help"],
                                        accepted_by_binary(argv), errors)
        else:
            argv = [pfi, c]
            n_opts += check_command(argv, page, sections, (), argv + ["--help"],
                                    accepted_by_binary(argv), errors)
        checked += 1
    page = os.path.join(man, "pfid.8")
    if os.path.exists(page):
        table = accepted_by_table(os.path.join(src, "src/agent/pfid_opts.c"))
        n_opts += check_command([pfid], page, page_options(page), (), [pfid, "--help"], table,
                                errors, from_source=True)
        checked += 1
    for e in errors:
        print("FAIL: " + e)
    print("man: %d pages linted, %d commands and %d documented options checked" % (
        len(pages), checked, n_opts))
    return 1 if errors or not pages else 0


if __name__ == "__main__":
    sys.exit(main())
