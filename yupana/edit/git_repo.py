"""The git repository holding a path: its top (:func:`git_top`) and its name (:func:`repo_name`).

Read from ``.git`` and the git config directly, never by running git. Asked for by the
guard's exposure lookup and records and by pre-bash's disk classes, through
:mod:`payload`, which loads this module on first use. Hot path: ``os`` only.
"""

from __future__ import annotations

import os


def git_top(path: str) -> str | None:
    """The nearest directory at or above ``path`` holding ``.git`` (directory or file)."""
    try:
        d = os.path.abspath(path)
        if not os.path.isdir(d):
            d = os.path.dirname(d)
        while True:
            if os.path.exists(os.path.join(d, ".git")):
                return d
            parent = os.path.dirname(d)
            if parent == d:
                return None
            d = parent
    except (OSError, ValueError):
        return None


def repo_name(top: str) -> str | None:
    """The repository name from ``remote "origin"``'s url in the git config of ``top``.

    Follows a ``.git`` file (``gitdir: …``, worktrees and submodules) and a worktree's
    ``commondir``. Name = the url's last path segment (after ``:`` for scp-style urls with
    no ``/``), trailing ``/`` and ``.git`` stripped. None when there is no origin url.
    """
    try:
        gitdir = _gitdir(top)
        if gitdir is None:
            return None
        common = _read_small(os.path.join(gitdir, "commondir"))
        if common and common.strip():
            gitdir = os.path.join(gitdir, common.strip())
        config = _read_small(os.path.join(gitdir, "config"))
        url = _origin_url(config) if config else None
        return name_from_url(url) if url else None
    except (OSError, ValueError):
        return None


def _gitdir(top: str) -> str | None:
    dotgit = os.path.join(top, ".git")
    if os.path.isdir(dotgit):
        return dotgit
    text = _read_small(dotgit)
    if text is None:
        return None
    for line in text.split("\n"):
        if line.startswith("gitdir:"):
            target = line[7:].strip()
            return os.path.normpath(os.path.join(top, target)) if target else None
    return None


def _read_small(path: str, limit: int = 1 << 20) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def _origin_url(config: str) -> str | None:
    """The first ``url`` of ``[remote "origin"]`` (or legacy ``[remote.origin]``)."""
    in_origin = False
    for raw in config.split("\n"):
        line = raw.strip()
        if line.startswith("["):
            close = line.find("]")
            if close < 0:
                in_origin = False
                continue
            in_origin = _is_origin_header(line[1:close])
            line = line[close + 1:].strip()
        if not in_origin or not line or line[0] in "#;":
            continue
        key, eq, value = line.partition("=")
        if eq and key.strip().lower() == "url":
            url = _config_value(value)
            if url:
                return url
    return None


def _is_origin_header(header: str) -> bool:
    header = header.strip()
    section, _, sub = header.partition(" ")
    if sub:
        sub = sub.strip()
        return section.lower() == "remote" and sub == '"origin"'
    return header.lower() == "remote.origin"


def _config_value(value: str) -> str:
    """A git config value: quotes removed, ``\\"``/``\\\\`` unescaped, comments dropped."""
    out: list[str] = []
    quoted = False
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c == "\\" and i + 1 < n:
            nxt = value[i + 1]
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(nxt, nxt))
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


def name_from_url(url: str) -> str | None:
    """A repository's name from one of its URLs: the last path segment (after ``:`` for
    scp-style URLs with no ``/``), trailing ``/`` and ``.git`` stripped; None when empty.
    The rule the exposure lookup applies to ``origin`` and the landing lookup to the URL
    a push goes to."""
    u = url.strip().rstrip("/")
    if "/" in u:
        u = u.rsplit("/", 1)[1]
    elif ":" in u:
        u = u.rsplit(":", 1)[1]
    if u.endswith(".git"):
        u = u[:-4]
    return u or None
