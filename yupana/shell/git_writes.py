"""What a git command changes of the guard's controls, from its words (for :mod:`yupana.shell.writes`):
``core.hooksPath`` set or overridden (:data:`~yupana.shell.write_model.HOOKS_PATH`), hooks skipped
with ``--no-verify`` (:data:`~yupana.shell.write_model.NO_VERIFY`), and the paths ``git rm``,
``git mv``, ``git restore`` and ``git checkout … --`` change. Standard library only.
"""

from __future__ import annotations

from yupana.shell.write_model import HOOKS_PATH, NO_VERIFY, Paths, Skip, Write

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.shell.lexer import Word


_GIT_VALUED = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path",
               "--super-prefix", "--list-cmds", "--attr-source")


def git(name: str, words: list[Word], paths: Paths, found: list[Write]) -> None:
    where: str | None = paths.base
    i, n = 0, len(words)
    while i < n and words[i].text.startswith("-"):
        w = words[i]
        key, eq, value = w.text.partition("=")
        if key in _GIT_VALUED and not eq:
            if i + 1 >= n:
                raise Skip
            value = words[i + 1].text
            dynamic = words[i + 1].dynamic
            i += 2
        else:
            dynamic = w.dynamic
            i += 1
        if key == "-C":
            where = None if dynamic or where is None else Paths(where, paths.home).absolute(words[i - 1])
        elif key in ("-c", "--config-env") and value.split("=", 1)[0].lower() == "core.hookspath":
            found.append(Write(where or "", name, git=HOOKS_PATH))
    if i >= n or words[i].dynamic:
        return
    sub, rest = words[i].text, words[i + 1:]
    if sub in ("rm", "mv", "restore") or (sub == "checkout" and any(w.text == "--" for w in rest)):
        if sub == "rm" and any(w.text == "--cached" for w in rest):
            return  # the index only: no file changes
        git_paths = Paths(where, paths.home)
        after = valued = False
        for w in rest:  # the pathspecs (options, their values and, for checkout, what precedes -- are not paths)
            if valued:
                valued = False
            elif w.text == "--" and not after:
                after = True
            elif not after and w.text.startswith("-"):
                valued = w.text in ("-s", "--source", "--pathspec-from-file")
            elif after or sub != "checkout":
                git_paths.add(found, w, f"git {sub}", whole=sub in ("rm", "mv"))
        return
    if sub == "config":
        if _sets_hooks_path(rest):
            found.append(Write(where or "", name, git=HOOKS_PATH))
    elif sub in ("push", "commit", "merge") and _no_verify(sub, rest) and where is not None:
        found.append(Write(where, f"git {sub}", git=NO_VERIFY))


_CONFIG_VALUED = ("-f", "--file", "--blob", "--type", "--default", "--comment", "--value")
_CONFIG_WRITES = ("--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section")
_CONFIG_READS = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l",
                 "--list")


def _sets_hooks_path(words: list[Word]) -> bool:
    operands: list[str] = []
    flags: set[str] = set()
    i = 0
    while i < len(words):
        text = words[i].text
        if text.startswith("-") and len(text) > 1:
            key = text.split("=", 1)[0]
            flags.add(key)
            i += 2 if key in _CONFIG_VALUED and "=" not in text else 1
            continue
        operands.append(text)
        i += 1
    if operands[:1] in (["set"], ["unset"]):
        return any(o.lower() == "core.hookspath" for o in operands[1:2])
    if not any(o.lower() == "core.hookspath" for o in operands[:1]) or flags & set(_CONFIG_READS):
        return False
    return len(operands) >= 2 or bool(flags & set(_CONFIG_WRITES))


_COMMIT_VALUED = ("--message", "--file", "--author", "--date", "--reuse-message", "--reedit-message", "--template",
                  "--cleanup", "--fixup", "--squash", "--trailer", "--strategy", "--strategy-option", "--into-name",
                  "--push-option", "--receive-pack", "--repo", "--exec")


def _no_verify(sub: str, words: list[Word]) -> bool:
    """``--no-verify`` (the last of it and ``--verify`` wins), or ``-n`` for commit, among the options."""
    skip = False
    i, n = 0, len(words)
    while i < n:
        text = words[i].text
        i += 1
        if text == "--":
            break
        if text in ("--no-verify", "--verify"):
            skip = text == "--no-verify"
        elif text in _COMMIT_VALUED:
            i += 1  # its value is not an option
        elif text.startswith("-") and not text.startswith("--"):
            for k, ch in enumerate(text[1:], 1):
                if sub == "commit" and ch == "n":
                    skip = True
                if ch in "mFCctSsXo":  # takes a value: the rest of the word, else the next word
                    i += 1 if k == len(text) - 1 else 0
                    break
    return skip
