#!/usr/bin/env python3
"""Fails when a test, bench or script names a path outside the repository.

A user's clone has nothing beside it, so every file the tests, benchmarks and
scripts read must live in the repository. This reads every tracked source file
of those kinds, takes each string literal that looks like a path, resolves the
relative ones against the file's folder and its crate's folder, and reports
every one that lands outside the repository, every absolute path that is not
a system path, and every environment variable that points at outside data.
"""

import os
import re
import subprocess
import sys

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))

# Where tests, benches and scripts live, and what counts as a script.
SCOPES = re.compile(
    r"^(tests/|benches/|[^/]+/tests/|[^/]+/benches/|\.ci/|examples/)"
)
KINDS = (".rs", ".sh", ".py", "run")
# Vendored data is read, not run.
SKIP = re.compile(r"^[^/]+/tests/data/")

# Absolute paths a test may name: the operating system's, not another checkout's.
SYSTEM = re.compile(
    r"^/(dev|proc|sys|tmp|bin|usr|etc)(/|$)"
)
# Names of outside data that must not come back under another spelling.
# (Spelled in pieces so that this file does not name them itself.)
FORBIDDEN = re.compile("TERN_" + r"SHARED|\bshared/testdata\b|\.\./" + r"shared\b")
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')


def tracked_files():
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for path in out.splitlines():
        if path == ".ci/self-contained.py":
            continue
        if SCOPES.match(path) and not SKIP.match(path) and path.endswith(KINDS):
            yield path


def crate_dir(path):
    """The folder of the Cargo.toml that owns `path` (what CARGO_MANIFEST_DIR is)."""
    d = os.path.dirname(os.path.join(ROOT, path))
    while d.startswith(ROOT):
        if os.path.exists(os.path.join(d, "Cargo.toml")):
            return d
        d = os.path.dirname(d)
    return ROOT


def inside(p):
    p = os.path.realpath(p)
    return p == ROOT or p.startswith(ROOT + os.sep)


def problems(path, text):
    bases = {os.path.dirname(os.path.join(ROOT, path)), crate_dir(path)}
    for lineno, line in enumerate(text.splitlines(), 1):
        if FORBIDDEN.search(line):
            yield lineno, "names data outside the repository"
            continue
        for m in STRING.finditer(line):
            lit = m.group(1) if m.group(1) is not None else m.group(2)
            if not lit or " " in lit or "{" in lit:
                continue
            if lit.startswith("/"):
                # JSON pointers and suffixes joined to CARGO_MANIFEST_DIR look
                # absolute too; a real one names a folder this machine has.
                top = "/" + lit[1:].split("/", 1)[0]
                if top != "/" and not SYSTEM.match(lit) and os.path.isdir(top):
                    yield lineno, f"absolute path {lit!r}"
            elif lit.startswith("..") and "/" in lit:
                if not any(inside(os.path.join(b, lit)) for b in bases):
                    yield lineno, f"{lit!r} resolves outside the repository"


def main():
    found = 0
    for path in tracked_files():
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for lineno, why in problems(path, text):
            print(f"{path}:{lineno}: {why}", file=sys.stderr)
            found += 1
    if found:
        print(f"{found} path(s) outside the repository", file=sys.stderr)
        return 1
    print("self-contained: no test, bench or script names a path outside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
