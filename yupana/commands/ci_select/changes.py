"""The outgoing change of a repository, as repository-relative paths. Cold path (``yupana ci-select``).

The change a push would carry, plus what is not committed yet (a check run before pushing
runs against the working tree, and what is uncommitted now is usually committed next):

* ``git diff --name-only <base>...HEAD`` — every path changed on this branch since it
  left ``base`` (the merge base, so commits that landed on ``base`` since are not counted);
* ``git diff --name-only HEAD`` — staged and unstaged changes to tracked files;
* ``git ls-files --others --exclude-standard`` — untracked files git does not ignore.

Renames are not detected (``--no-renames``): a moved file counts at both its old and its
new path, so a file leaving a command's scope still selects that command. Paths come back
NUL-separated (no quoting), relative to the repository's top, in git's order, without
repeats. Every failure is a :class:`GitError` whose message says what to do next.
"""

from __future__ import annotations

import os
import posixpath
import subprocess

GIT_TIMEOUT_SECS = 60.0


class GitError(Exception):
    """git could not answer (not a repository, an unknown base, git missing); the message says why."""


def repo_top(cwd: str) -> str:
    """The top of the work tree containing ``cwd``."""
    out = git_output(cwd, ["rev-parse", "--show-toplevel"], f"{cwd} is not inside a git work tree "
               "(run yupana ci-select from the repository whose change you want checked)")
    top = out.decode("utf-8", "surrogateescape").strip()
    if not top:
        raise GitError(f"{cwd} is not inside a git work tree")
    return top


def commit_of(top: str, ref: str) -> str:
    """The commit ``ref`` names; GitError when it names none."""
    if not ref or ref.startswith("-"):
        raise GitError(f"{ref!r} is not a ref (pass --base REF, or set [yupana] base_ref)")
    out = git_output(top, ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
               f"the base {ref!r} names no commit in {top} (fetch it, pass --base REF, or set [yupana] base_ref)")
    return out.decode("ascii", "replace").strip()


def outgoing(top: str, base: str) -> list[str]:
    """Paths changed since ``base`` on this branch, plus uncommitted and untracked ones."""
    if run_git(top, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).returncode != 0:
        raise GitError(f"{top} has no commit yet (HEAD is unborn): there is no outgoing change to select checks for")
    base_sha = commit_of(top, base)
    committed = git_output(top, ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", f"{base_sha}...HEAD", "--"],
                     f"git cannot diff {base!r}...HEAD in {top} (do the branches share history? pass --base REF)")
    uncommitted = git_output(top, ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "HEAD", "--"],
                       f"git cannot list the uncommitted changes in {top}")
    untracked = git_output(top, ["ls-files", "--others", "--exclude-standard", "-z", "--full-name"],
                     f"git cannot list the untracked files in {top}")
    paths: list[str] = []
    seen: set[str] = set()
    for blob in (committed, uncommitted, untracked):
        for raw in blob.split(b"\0"):
            path = raw.decode("utf-8", "surrogateescape")
            if path and path not in seen:
                seen.add(path)
                paths.append(path)
    return paths


def relative_paths(top: str, given: list[str]) -> list[str]:
    """``--paths`` as repository-relative paths: absolute ones made relative to ``top``.

    Relative ones are taken as already relative to the top (the form the map's globs
    match). GitError (a usage error) for a path outside the repository.
    """
    out: list[str] = []
    real_top = os.path.realpath(top)
    for path in given:
        if not path.strip():
            raise GitError("--paths got an empty path")
        if os.path.isabs(path):
            rel = os.path.relpath(os.path.realpath(path), real_top)
        else:
            rel = posixpath.normpath(path.replace(os.sep, "/"))
        if rel == "." or rel == ".." or rel.startswith("../") or os.path.isabs(rel):
            raise GitError(f"--paths {path!r} is not a path inside {top}")
        if rel not in out:
            out.append(rel)
    return out


def git_output(cwd: str, args: list[str], problem: str) -> bytes:
    """git's stdout for ``args`` in ``cwd``; GitError(``problem`` + git's last stderr line) when it fails."""
    done = run_git(cwd, args)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(problem + (f": {detail[-1]}" if detail else ""))
    return bytes(done.stdout)


def run_git(cwd: str, args: list[str]) -> subprocess.CompletedProcess[bytes]:
    """``git -C cwd args`` with output captured and stdin closed; GitError when git cannot run."""
    try:
        return subprocess.run(["git", "-C", cwd, *args], capture_output=True, stdin=subprocess.DEVNULL,
                              timeout=GIT_TIMEOUT_SECS)
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {GIT_TIMEOUT_SECS:g}s in {cwd}") from None
    except OSError as exc:
        raise GitError(f"cannot run git in {cwd}: {exc.strerror or exc}") from None
