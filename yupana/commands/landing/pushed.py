"""What a push carries, read from git: the ref updates, each one's outgoing change, and whether
the working tree is the commit being pushed. Cold path (``yupana hook pre-push``).

Git runs a pre-push hook with the remote's name and URL as arguments and one line per ref on
stdin, ``<local ref> SP <local sha> SP <remote ref> SP <remote sha>`` (a deletion has the
all-zero local sha, a new remote ref the all-zero remote sha). pre-commit instead consumes
that stdin itself and passes the *first* ref that lands in ``PRE_COMMIT_*`` variables
(:func:`from_pre_commit`).

The outgoing change of one ref update, as repository-relative paths:

* an update of an existing remote ref — ``git diff --name-only <remote sha> <local sha>``:
  every path whose content the ref's tree changes (a forced push that drops commits counts
  the paths they touched);
* a new remote ref — every path the commits not yet on that remote change
  (``git log -m --name-only <local sha> --not --remotes=<remote>``, each commit against
  each of its parents, so a merge counts what it brings in: more checks, never fewer). A
  push to a URL rather than a named remote has no remote-tracking refs, so that is the
  whole history.

Renames are not detected: a moved file counts at both paths. A remote sha this repository
does not hold (the remote moved on; fetch first) is a :class:`GitError`: the change cannot
be computed, and the certification is UNKNOWN.
"""

from __future__ import annotations

import os

from yupana.commands.ci_select.changes import GitError, git_output, run_git

PRE_COMMIT_VARS = ("PRE_COMMIT_TO_REF", "PRE_COMMIT_FROM_REF", "PRE_COMMIT_LOCAL_BRANCH", "PRE_COMMIT_REMOTE_BRANCH",
                   "PRE_COMMIT_REMOTE_NAME", "PRE_COMMIT_REMOTE_URL")


class PushInputError(ValueError):
    """The hook's input is not what git sends; the message says what was read."""


class Update:
    """One ref a push updates (git's stdin line). ``remote_sha`` None: the remote ref is new."""

    __slots__ = ("local_ref", "local_sha", "remote_ref", "remote_sha")

    def __init__(self, local_ref: str, local_sha: str, remote_ref: str, remote_sha: str | None) -> None:
        self.local_ref = local_ref
        self.local_sha = local_sha
        self.remote_ref = remote_ref
        self.remote_sha = remote_sha

    @property
    def deletion(self) -> bool:
        return _zero(self.local_sha)

    def __repr__(self) -> str:
        return f"Update({self.local_ref!r} {self.local_sha[:12]} -> {self.remote_ref!r} {(self.remote_sha or 'new')[:12]})"


def _zero(sha: str) -> bool:
    return bool(sha) and set(sha) == {"0"}


def _sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def read_updates(raw: bytes) -> list[Update]:
    """The ref updates in git's pre-push stdin; PushInputError on a line that is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PushInputError("stdin is not UTF-8 text: not the ref lines git sends a pre-push hook") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.rsplit(" ", 3)
        if len(parts) != 4 or not _sha(parts[1]) or not _sha(parts[3]):
            raise PushInputError(f"stdin line {n} is not `<local ref> <local sha> <remote ref> <remote sha>`: "
                                 f"{line[:120]!r}")
        local_ref, local_sha, remote_ref, remote_sha = parts
        out.append(Update(local_ref, local_sha, remote_ref, None if _zero(remote_sha) else remote_sha))
    return out


def from_pre_commit(env: dict[str, str], top: str) -> list[Update] | None:
    """The one ref update pre-commit describes in ``PRE_COMMIT_*`` (None: not run by pre-commit).

    ``PRE_COMMIT_FROM_REF`` is the remote's tip, or the parent of the first commit the remote
    lacks: the change is measured from it. Without it (pre-commit's whole-history case) the
    local branch is pushed as a new ref.
    """
    if not any(env.get(v) for v in PRE_COMMIT_VARS):
        return None
    local_ref = env.get("PRE_COMMIT_LOCAL_BRANCH") or ""
    to_ref = env.get("PRE_COMMIT_TO_REF") or local_ref
    if not to_ref:
        raise PushInputError("pre-commit named no ref being pushed (PRE_COMMIT_TO_REF and PRE_COMMIT_LOCAL_BRANCH "
                             "are empty)")
    sha = commit_of(top, to_ref)
    base = env.get("PRE_COMMIT_FROM_REF") or None
    return [Update(local_ref or to_ref, sha, env.get("PRE_COMMIT_REMOTE_BRANCH") or "", base and commit_of(top, base))]


def commit_of(top: str, ref: str) -> str:
    """The commit ``ref`` names; GitError when it names none."""
    if not ref or ref.startswith("-"):
        raise GitError(f"{ref!r} is not a ref")
    out = git_output(top, ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], f"{ref!r} names no commit in {top}")
    return out.decode("ascii", "replace").strip()


def changed_paths(top: str, update: Update, remote: str | None) -> list[str]:
    """The outgoing change of ``update`` (see the module docstring), repository-relative, in git's
    order without repeats; GitError when it cannot be computed."""
    if update.remote_sha is not None:
        if run_git(top, ["cat-file", "-e", f"{update.remote_sha}^{{commit}}"]).returncode != 0:
            raise GitError(f"the remote's {update.remote_ref or 'ref'} is at {update.remote_sha[:12]}, a commit this "
                           "repository does not hold (the remote moved on: fetch, then push again)")
        blob = git_output(top, ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", update.remote_sha,
                                update.local_sha, "--"],
                          f"git cannot diff {update.remote_sha[:12]}..{update.local_sha[:12]} in {top}")
    else:
        exclude = [f"--remotes={remote}"] if remote and not _url_like(remote) else []
        blob = git_output(top, ["log", "-m", "--format=", "--name-only", "-z", "--no-renames", "--no-ext-diff",
                                update.local_sha, "--not", *exclude, "--"],
                          f"git cannot list the commits of {update.local_ref or update.local_sha[:12]} in {top}")
    paths: list[str] = []
    seen: set[str] = set()
    for raw in blob.replace(b"\n", b"\0").split(b"\0"):
        path = raw.decode("utf-8", "surrogateescape")
        if path and path not in seen:
            seen.add(path)
            paths.append(path)
    return paths


def remote_url(top: str, remote: str) -> str | None:
    """The URL git pushes to for the remote named ``remote`` (None when it names none)."""
    done = run_git(top, ["remote", "get-url", "--push", remote])
    url = done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else ""
    return url or None


def _url_like(remote: str) -> bool:
    return "/" in remote or ":" in remote or remote.endswith(".git") or os.path.isabs(remote)


def attribution(top: str, sha: str) -> str | None:
    """Why results of commands run in the working tree would not be results for ``sha`` (None:
    HEAD is ``sha`` and nothing is modified, staged or untracked-and-not-ignored)."""
    done = run_git(top, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
    head = done.stdout.decode("ascii", "replace").strip() if done.returncode == 0 else ""
    peeled = run_git(top, ["rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}"])  # an annotated tag: its commit
    if peeled.returncode == 0:
        sha = peeled.stdout.decode("ascii", "replace").strip() or sha
    if head != sha:
        return (f"the working tree is at {head[:12] or 'no commit'}, not the pushed commit {sha[:12]} (check the "
                "pushed branch out, then push again)")
    status = git_output(top, ["status", "--porcelain", "-z", "--untracked-files=normal"],
                        f"git cannot read the working tree's status in {top}")
    dirty = [entry[3:].decode("utf-8", "surrogateescape") for entry in status.split(b"\0") if len(entry) > 3]
    if dirty:
        shown = ", ".join(dirty[:3]) + (f" and {len(dirty) - 3} more" if len(dirty) > 3 else "")
        return (f"the working tree differs from the pushed commit {sha[:12]} ({shown}): commit, stash or ignore "
                "them, then push again")
    return None
