"""What ``yupana landing verify --sha/--ref/--repo [--require certified]`` asks of a record.

A certification is evidence for one commit, pushed to one ref of one repository. Offered for
another — commit A's certification for commit B, a refused push as if it were certified —
it proves nothing, so verify checks the record's ``sha`` (the commit a tag names counts as
that commit), ``ref`` / ``remote_ref`` (``main`` is ``refs/heads/main``), ``repo`` and kind.
"""

from __future__ import annotations

from typing import Any

import subprocess

CERTIFIED = "landing-certified"


class Want:
    """The commit, ref and repository a record must be for, and the kind it must have."""

    def __init__(self, sha: str | None, ref: str | None, repo: str | None, require: str, root: str) -> None:
        self.sha = sha
        self.ref = ref
        self.repo = repo
        self.require = require
        self.root = root

    @property
    def selects(self) -> bool:
        return bool(self.sha or self.ref or self.repo)

    def describe(self) -> str:
        parts = [f"commit {self.sha[:12]}" if self.sha else "", f"ref {self.ref}" if self.ref else "",
                 f"repo `{self.repo}`" if self.repo else ""]
        return ", ".join(p for p in parts if p) or "any record"

    def mismatch(self, record: dict[str, Any]) -> str | None:
        """Why ``record`` is not a certification of what is wanted (None: it is for it)."""
        if self.repo and record.get("repo") != self.repo:
            return f"it certifies repo `{record.get('repo')}`, not `{self.repo}`"
        if self.ref and not _same_ref(self.ref, record):
            return f"it certifies ref {record.get('remote_ref') or record.get('ref')}, not {self.ref}"
        if self.sha:
            have = str(record.get("sha") or "")
            if have != self.sha and commit_of(self.root, have) != self.sha:
                return f"it certifies commit {have[:12] or '(none)'}, not {self.sha[:12]}"
        return None

    def unmet_kind(self, record: dict[str, Any]) -> str | None:
        if self.require == "certified" and record.get("kind") != CERTIFIED:
            outcome = str(record.get("kind") or "?").removeprefix("landing-")
            return f"the push was {outcome}, not certified (--require certified)"
        return None


def _same_ref(want: str, record: dict[str, Any]) -> bool:
    names = {str(record.get("remote_ref") or ""), str(record.get("ref") or "")} - {""}
    if want in names:
        return True
    return not want.startswith("refs/") and bool({f"refs/heads/{want}", f"refs/tags/{want}"} & names)


def commit_of(root: str, rev: str) -> str | None:
    """The commit ``rev`` names in the repository at ``root`` (None: git names none)."""
    if not rev or rev.startswith("-"):
        return None
    try:
        done = subprocess.run(["git", "-C", root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                              capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def resolve_sha(root: str, given: str) -> str:
    """``--sha``: a full commit id as given, else what git names it in ``root``; ValueError when neither."""
    text = given.strip().lower()
    if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text):
        return commit_of(root, text) or text
    found = commit_of(root, given)
    if not found:
        raise ValueError(f"--sha {given}: not a full commit id, and git names no commit by it in {root}")
    return found
