"""The disk-impact advisory: which commands commonly create large artifacts, and the verdict.

**Recognised commands** (:data:`TOOLS`): builds and package managers by subcommand —
``cargo`` build/test/bench/run/install/doc/check/clippy/nextest/fetch/vendor (``b``, ``t``,
``r``, ``c``, ``d`` are their aliases), ``docker``/``podman`` build/buildx/pull/load/import/
compose, ``pip``/``pip3`` (and ``python -m pip``) install/download/wheel, ``npm``
install/ci/update, ``yarn`` (bare, install, add, upgrade), ``pnpm`` install/add/update/fetch,
``bun`` install/add, ``uv`` sync/pip/venv, ``apt-get``/``apt``/``dnf``/``yum``
install/upgrade…, ``go`` build/test/install/get/mod, ``git clone``; and copy, archive and
allocation tools with no subcommand — ``cp``, ``rsync``, ``unzip``, ``fallocate``, ``dd``,
``truncate`` — plus ``tar`` (``tar:extract``, ``tar:create``, ``tar:`` otherwise). The first
recognised simple command of a line decides; wrappers (``sudo``, ``nice``…), ``VAR=``
prefixes and ``sh -c`` payloads are seen through. A pipeline or a redirection does not hide
a build (``cargo build 2>&1 | tail`` is ``cargo:build``), but the command name and
subcommand must be literal words: an expansion there is not guessed at.

**Signature**: ``binary:subcommand|repo:<class>|cwd:<class>`` from a fixed vocabulary only
(never an argument): ``repo`` is ``git`` when the payload cwd is inside a git work tree,
else ``none``; ``cwd`` is ``repo-root`` (the work tree's top), ``subdir`` (below it),
``tmp`` (under the temp directory, /tmp, /var/tmp or /dev/shm), ``home`` (under $HOME) or
``other`` — the deepest of those bases decides (a home under /tmp is ``home``).

**Verdict** (:func:`advise`): for each filesystem involved the cache's ``disk_history``
entry ``"<signature>|<fs identity>"`` gives the nearest-rank p90 of the last 100 signed
deltas; ``p90 > 80% of the free bytes now`` is a governed, never-blocking finding. No entry
(or no history at all) is UNKNOWN, never safe — the hook stays silent and records why.
"""

from __future__ import annotations

import os

from yupana.state import paths

from yupana import shell
from yupana.evaluate import SATISFIED, UNSATISFIED, Finding

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any
    from yupana.state.disk_samples import Fs

HEADROOM_SHARE = 0.8

TOOLS: dict[str, frozenset[str] | None] = {
    "cargo": frozenset(("build", "test", "bench", "run", "install", "doc", "check", "clippy", "nextest", "fetch",
                        "vendor")),
    "docker": frozenset(("build", "buildx", "pull", "load", "import", "compose")),
    "podman": frozenset(("build", "buildx", "pull", "load", "import", "compose")),
    "pip": frozenset(("install", "download", "wheel")),
    "pip3": frozenset(("install", "download", "wheel")),
    "npm": frozenset(("install", "ci", "update")),
    "yarn": frozenset(("install", "add", "upgrade")),
    "pnpm": frozenset(("install", "add", "update", "fetch")),
    "bun": frozenset(("install", "add")),
    "uv": frozenset(("sync", "pip", "venv")),
    "apt-get": frozenset(("install", "upgrade", "dist-upgrade", "full-upgrade", "build-dep", "download", "source")),
    "apt": frozenset(("install", "upgrade", "full-upgrade", "download", "source")),
    "dnf": frozenset(("install", "upgrade", "update", "download", "builddep")),
    "yum": frozenset(("install", "upgrade", "update", "download")),
    "go": frozenset(("build", "test", "install", "get", "mod")),
    "git": frozenset(("clone",)),
    "cp": None, "rsync": None, "tar": None, "unzip": None, "fallocate": None, "dd": None, "truncate": None,
}
ALIASES = {("cargo", "b"): "build", ("cargo", "t"): "test", ("cargo", "r"): "run", ("cargo", "c"): "check",
           ("cargo", "d"): "doc", ("npm", "i"): "install", ("npm", "add"): "install", ("pnpm", "i"): "install",
           ("bun", "i"): "install", ("npm", "up"): "update"}
# Options before the subcommand that take a separate value.
_VALUE_OPTIONS = {
    "cargo": ("-C", "--config", "-Z", "--color"), "docker": ("-H", "--host", "-c", "--context", "--config", "-l",
                                                              "--log-level"),
    "podman": ("--connection", "--url", "--identity", "--root", "--runroot", "--log-level"),
    "npm": ("--prefix", "-C"), "yarn": ("--cwd",), "pnpm": ("-C", "--dir", "--filter", "-F"), "go": ("-C",),
    "apt-get": ("-o", "-c", "-t"), "apt": ("-o", "-c", "-t"), "dnf": ("--setopt", "-c", "--releasever"),
    "yum": ("-c", "--releasever"), "git": ("-C", "-c"), "uv": ("--directory", "--project", "--config-file"),
    "pip": ("--python",), "pip3": ("--python",),
}
_PYTHONS = ("python", "python3")
_SAME_TOOL = {"pip3": "pip"}  # one history for one tool


def recognise(reading: shell.Reading) -> tuple[str, str] | None:
    """(binary, subcommand) of the first recognised simple command, or None."""
    for cmd in reading.commands:
        found = recognise_command(cmd.argv)
        if found:
            return found
    return None


def recognise_command(argv: list[shell.Word]) -> tuple[str, str] | None:
    if not argv or argv[0].dynamic:
        return None
    binary = argv[0].text.rsplit("/", 1)[-1]
    rest = argv[1:]
    if binary.startswith(_PYTHONS) and binary.rstrip("0123456789.") in _PYTHONS:
        if len(rest) >= 2 and not rest[0].dynamic and rest[0].text == "-m" and rest[1].text in ("pip", "pip3"):
            binary, rest = "pip", rest[2:]
        else:
            return None
    if binary not in TOOLS:
        return None
    subs = TOOLS[binary]
    if subs is None:
        return (binary, _tar_mode(rest)) if binary == "tar" else (binary, "")
    sub = _subcommand(binary, rest)
    if sub is None:
        return ("yarn", "install") if binary == "yarn" and not any(not w.text.startswith("-") for w in rest) else None
    sub = ALIASES.get((binary, sub), sub)
    return (_SAME_TOOL.get(binary, binary), sub) if sub in subs else None


def _subcommand(binary: str, words: list[shell.Word]) -> str | None:
    takes_value = _VALUE_OPTIONS.get(binary, ())
    i = 0
    while i < len(words):
        w = words[i]
        if w.dynamic:
            return None
        text = w.text
        if binary == "cargo" and text.startswith("+"):
            i += 1
        elif text.startswith("-"):
            i += 2 if text in takes_value else 1
        else:
            return text
    return None


def _tar_mode(words: list[shell.Word]) -> str:
    for w in words:
        text = w.text
        if text in ("--extract", "--get"):
            return "extract"
        if text == "--create":
            return "create"
        if text.startswith("--"):
            continue
        letters = text[1:] if text.startswith("-") else text
        if "x" in letters:
            return "extract"
        if "c" in letters:
            return "create"
        if not text.startswith("-"):
            break  # old-style tar puts the letters first; a later operand is a file name
    return ""


def classes(cwd: str, git_top: str | None) -> tuple[str, str]:
    """(repo class, cwd class) of the working directory."""
    cwd = os.path.normpath(cwd)
    if git_top:
        return "git", "repo-root" if os.path.normpath(git_top) == cwd else "subdir"
    bases = [(b, "tmp") for b in (paths.temp_dir(), "/tmp", "/var/tmp", "/dev/shm")]
    home = os.environ.get("HOME")
    if home:
        bases.append((home, "home"))
    best = ("", "other")
    for base, cls in bases:  # the deepest base wins: a home under /tmp is home
        base = os.path.normpath(base)
        if _under(cwd, base) and len(base) > len(best[0]):
            best = (base, cls)
    return "none", best[1]


def _under(path: str, base: str) -> bool:
    base = os.path.normpath(base)
    if base == "/":
        return False
    return path == base or path.startswith(base + "/")


def signature(binary: str, sub: str, repo_class: str, cwd_class: str) -> str:
    return f"{binary}:{sub}|repo:{repo_class}|cwd:{cwd_class}"


def advise(history: dict[str, Any] | None, sig: str, fss: list[Fs]) -> tuple[list[Finding], list[str]]:
    """(findings, reasons no verdict was available) for a recognised command.

    ``fss`` are :class:`yupana.state.disk_samples.Fs` snapshots (not imported here: recognising a
    command must stay cheap for the commands that turn out to be unrelated).

    One finding per filesystem with history: ``unsatisfied`` (never blocking) when the p90
    exceeds 80% of its free bytes now, else ``satisfied``.
    """
    if history is None:
        return [], ["the projection holds no disk history (its read failed or it was never projected): UNKNOWN"]
    findings: list[Finding] = []
    missing: list[str] = []
    for fs in fss:
        key = f"{sig}|{fs.identity}"
        entry = history.get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("p90"), int) or not entry.get("n"):
            missing.append(f"no history for {key}")
            continue
        p90, n = entry["p90"], entry["n"]
        extra = {"key": key, "p90_bytes": p90, "free_bytes": fs.free, "samples": n}
        if p90 > HEADROOM_SHARE * fs.free:
            where = " and ".join(fs.roles)
            message = (f"`{sig.split('|', 1)[0].rstrip(':')}` has consumed up to {_gib(p90)} on the filesystem holding "
                       f"the {where} (p90 of the last {n} runs here), more than 80% of the {_gib(fs.free)} free there "
                       f"now — free some space first, or expect it to run out")
            findings.append(Finding(key, "disk", message, outcome=UNSATISFIED, extra=extra))
        else:
            findings.append(Finding(key, "disk", "", outcome=SATISFIED, extra=extra))
    return findings, missing


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB"
