"""What a Bash command writes, from syntax alone: the files and directories it would change,
and the git runs that route around the repository's hooks. Standard library only.

Read with certainty only (:mod:`yupana.shell.reader`): a simple command with any uncertainty
(command substitution, a subshell, ``xargs``, a syntax error…) is skipped — an abstention,
never a guess. What is read:

* redirections that write (``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``<>``, ``N>``…; not
  ``<``, heredocs or ``N>&M``);
* ``tee`` (its files), ``sed -i`` / ``perl -i`` (the files after the script), ``cp``, ``mv``,
  ``install``, ``ln`` (the destination, and ``DIR/<name>`` of each source when it is a
  directory; ``mv`` also its sources, which it removes), ``rm``, ``truncate``, ``chmod``,
  ``touch``, ``mkdir`` (their operands), ``dd of=``;
* ``git rm``, ``git mv``, ``git restore`` (their paths) and ``git checkout … -- PATHS``;
* ``git config … core.hooksPath VALUE`` (also ``--unset``/``--add``/``set``/``unset``),
  ``git -c core.hooksPath=…`` and ``--config-env=core.hooksPath=…`` (:data:`HOOKS_PATH`),
  ``git push|commit|merge --no-verify`` (``-n`` for commit) (:data:`NO_VERIFY`).

An option a tool's grammar here does not know makes that command abstain. A path word that
is an expansion is not judged (its value is unknown), unless its only expansion is a glob
in its last component (``rm .git/hooks/*``: the directory is literal); ``~`` and ``~/…`` (unquoted) are
``$HOME``. Relative paths are taken from the cwd, followed through literal ``cd DIR`` in the
line (an unknown ``cd`` stops relative paths being judged).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable

    from yupana import shell
    from yupana.shell.lexer import Word

    Tool = Callable[[str, list[Word], "_Paths", list["Write"]], None]

HOOKS_PATH, NO_VERIFY = "hooks_path", "no_verify"


class Write:
    """One thing a command would change: ``path`` (absolute, normalised) written by ``route``
    (``redirect``, ``tee``, ``sed -i``, …); ``whole`` when the route takes a directory's
    contents with it (``rm -r``, ``mv``'s source); or a git ``route`` (:data:`HOOKS_PATH`,
    :data:`NO_VERIFY`) with ``path`` the directory git runs in."""

    __slots__ = ("path", "route", "whole", "git")

    def __init__(self, path: str, route: str, whole: bool = False, git: str | None = None) -> None:
        self.path, self.route, self.whole, self.git = path, route, whole, git

    def __repr__(self) -> str:
        return f"Write({self.path!r}, {self.route!r}{', whole' if self.whole else ''}{', ' + self.git if self.git else ''})"


class _Skip(Exception):
    """This command's words are not read with certainty by its grammar: it abstains."""


def writes(reading: shell.Reading, cwd: str, home: str | None = None) -> list[Write]:
    """Everything ``reading`` would write (see the module doc), in order."""
    found: list[Write] = []
    base: str | None = cwd
    for cmd in reading.commands:
        if cmd.uncertain:
            continue
        paths = _Paths(base, home)
        for op, word in cmd.redirects:
            if _writes(op, word):
                paths.add(found, word, "redirect")
        argv = cmd.argv
        if not argv or argv[0].dynamic:
            continue
        name = cmd.name
        if name in ("cd", "pushd"):
            base = _cd(argv, base, home)
            continue
        tool = _TOOLS.get(name)
        if tool is None:
            continue
        try:
            tool(name, argv[1:], paths, found)
        except _Skip:
            continue
    return found


def _writes(op: str, word: Word) -> bool:
    op = op.lstrip("0123456789")
    if op in (">&", "<&"):
        return not (word.text.isdigit() or word.text == "-" or word.text.endswith("-"))  # fd duplication
    return op in (">", ">>", ">|", "&>", "&>>", "<>")


def _cd(argv: list[Word], base: str | None, home: str | None) -> str | None:
    rest = [w for w in argv[1:] if w.text not in ("-L", "-P", "-e", "-@")]
    if not rest:
        return home
    if len(rest) > 1 or rest[0].dynamic or rest[0].text == "-" or base is None:
        return None
    return _Paths(base, home).absolute(rest[0])


class _Paths:
    """Path words made absolute against the command's cwd (None: unknown after a ``cd``)."""

    def __init__(self, base: str | None, home: str | None) -> None:
        self.base, self.home = base, home

    def absolute(self, word: Word) -> str | None:
        text = word.text
        if word.dynamic and not _glob_in_name_only(text):
            return None
        if text == "~" or text.startswith("~/"):
            if word.quoted or not self.home:
                return None
            text = self.home + text[1:]
        if not text:
            return None
        if not text.startswith("/"):
            if self.base is None:
                return None
            text = os.path.join(self.base, text)
        path = os.path.normpath(text)
        return "/" + path.lstrip("/") if path.startswith("//") else path

    def add(self, found: list[Write], word: Word, route: str, whole: bool = False) -> str | None:
        path = self.absolute(word)
        if path is not None:
            found.append(Write(path, route, whole))
        return path


def _glob_in_name_only(text: str) -> bool:
    """A word whose only expansion is a glob or brace pattern in its last component: the
    directory it names is literal (``.git/hooks/*``), whatever the pattern matches in it."""
    head, _, name = text.rpartition("/")
    return bool(head) and not any(c in text for c in "$`") and not any(c in head for c in "*?[{") \
        and any(c in name for c in "*?[{")


# ── option grammars ────────────────────────────────────────────────────────────────────


def _split(words: list[Word], flags: str, args: str, long_flags: tuple[str, ...] = (),
           long_args: tuple[str, ...] = ()) -> tuple[list[Word], list[tuple[str, str]]]:
    """(operands, options) of GNU-style words; an unknown option or a dynamic option word skips."""
    operands: list[Word] = []
    options: list[tuple[str, str]] = []
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        text = w.text
        if text == "--":
            operands += words[i + 1:]
            break
        if w.dynamic or not text.startswith("-") or text == "-":
            operands.append(w)
            i += 1
            continue
        if text.startswith("--"):
            key, eq, value = text[2:].partition("=")
            if key in long_args and not eq:
                if i + 1 >= n or words[i + 1].dynamic:
                    raise _Skip
                options.append((key, words[i + 1].text))
                i += 2
                continue
            if key not in long_flags and key not in long_args:
                raise _Skip
            options.append((key, value))
            i += 1
            continue
        k = 1
        while k < len(text):
            ch = text[k]
            if ch in args:
                if k + 1 < len(text):
                    options.append((ch, text[k + 1:]))
                else:
                    if i + 1 >= n or words[i + 1].dynamic:
                        raise _Skip
                    options.append((ch, words[i + 1].text))
                    i += 1
                break
            if ch not in flags:
                raise _Skip
            options.append((ch, ""))
            k += 1
        i += 1
    return operands, options


# ── the tools ──────────────────────────────────────────────────────────────────────────

_COMMON = ("help", "version", "verbose")


def _operands(flags: str, args: str, long_flags: tuple[str, ...], long_args: tuple[str, ...] = ()) -> Tool:
    """A tool whose every operand is written (``rm``, ``touch``, ``truncate``, ``mkdir``, ``tee``)."""
    def tool(name: str, words: list[Word], paths: _Paths, found: list[Write]) -> None:
        operands, options = _split(words, flags, args, long_flags + _COMMON, long_args)
        whole = name == "rm" and any(k in ("r", "R", "recursive", "d", "dir") for k, _ in options)
        for w in operands:
            paths.add(found, w, name, whole)
    return tool


def _chmod(name: str, words: list[Word], paths: _Paths, found: list[Write]) -> None:
    mode_chars = set("rwxXstugoa=+-,01234567")
    kept: list[Word] = []
    for w in words:  # `chmod -x f`: a mode that looks like an option
        if not w.dynamic and w.text.startswith("-") and len(w.text) > 1 and set(w.text[1:]) <= mode_chars \
                and not set(w.text[1:]) <= set("cfvR"):
            kept.append(_word("0"))  # stands for the mode operand
        else:
            kept.append(w)
    operands, options = _split(kept, "cfvR", "", ("changes", "silent", "quiet", "recursive", "no-preserve-root",
                                                   "preserve-root", "reference") + _COMMON)
    if not any(k == "reference" for k, _ in options):
        operands = operands[1:]  # the mode
    whole = any(k in ("R", "recursive") for k, _ in options)
    for w in operands:
        paths.add(found, w, name, whole)


_CP_LONG = ("archive", "attributes-only", "backup", "copy-contents", "debug", "force", "interactive", "link",
            "dereference", "no-clobber", "no-dereference", "preserve", "no-preserve", "parents", "recursive",
            "reflink", "remove-destination", "sparse", "strip-trailing-slashes", "symbolic-link",
            "no-target-directory", "update", "one-file-system", "context", "keep-directory-symlink", "exchange",
            "compare", "directory", "strip", "strip-program", "preserve-context", "mode", "owner", "group",
            "logical", "physical", "relative", "no-copy")
_DESTINATION = {  # name -> (short flags, short options with a value, long options with a value)
    "cp": ("abdfHilLnPpRrsTuvxZ", "St", ("target-directory", "suffix")),
    "mv": ("bfinTuvZ", "St", ("target-directory", "suffix")),
    "install": ("bCcDdpsvTZ", "gmoSt", ("target-directory", "suffix", "mode", "owner", "group", "strip-program")),
    "ln": ("bdFfiLnPrsTv", "St", ("target-directory", "suffix")),
}


def _destination(name: str, words: list[Word], paths: _Paths, found: list[Write]) -> None:
    flags, args, long_args = _DESTINATION[name]
    operands, options = _split(words, flags, args, _CP_LONG + _COMMON, long_args)
    keys = {k for k, _ in options}
    if name == "install" and keys & {"d", "directory"}:
        for w in operands:
            paths.add(found, w, name)
        return
    target = next((v for k, v in options if k in ("t", "target-directory")), None)
    if target is not None:
        dest, sources, folder = _word(target), operands, True
    elif not operands:
        return
    elif len(operands) == 1:
        if name != "ln":
            return
        dest, sources, folder = _word("."), operands, True  # `ln -s TARGET`: a link named like it, here
    else:
        dest, sources = operands[-1], operands[:-1]
        folder = len(sources) > 1 and not keys & {"T", "no-target-directory"}
    where = paths.add(found, dest, name)
    for w in sources:
        if name == "mv":
            paths.add(found, w, name, whole=True)  # moved away: it and what it holds are gone from there
        if where is not None and not w.dynamic and (folder or os.path.isdir(where)):
            found.append(Write(os.path.normpath(os.path.join(where, os.path.basename(w.text.rstrip("/")))), name))


def _word(text: str) -> Word:
    from yupana.shell.lexer import Word

    return Word(text)


def _sed(name: str, words: list[Word], paths: _Paths, found: list[Write]) -> None:
    in_place = False
    script_given = False
    rest: list[Word] = []
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        text = w.text
        if text == "--":
            rest += words[i + 1:]
            break
        if w.dynamic or not text.startswith("-") or text == "-":
            rest.append(w)
            i += 1
            continue
        if text.startswith("--"):
            key, eq, _ = text[2:].partition("=")
            if key == "in-place":
                in_place = True
            elif key in ("expression", "file"):
                script_given = True
                i += 0 if eq else 1
            elif key == "line-length":
                i += 0 if eq else 1
            elif key not in ("quiet", "silent", "regexp-extended", "separate", "unbuffered", "null-data",
                             "zero-terminated", "posix", "debug", "sandbox", "follow-symlinks", "binary") + _COMMON:
                raise _Skip
            i += 1
            continue
        k = 1
        while k < len(text):
            ch = text[k]
            if ch == "i":
                in_place = True
                break  # GNU: the rest of the cluster is the backup suffix
            if ch in "efl":
                script_given = script_given or ch in "ef"
                if k + 1 == len(text):
                    i += 1
                break
            if ch not in "nrEsuzb":
                raise _Skip
            k += 1
        i += 1
    if not in_place:
        return
    for w in rest if script_given else rest[1:]:
        paths.add(found, w, "sed -i")


def _perl(name: str, words: list[Word], paths: _Paths, found: list[Write]) -> None:
    in_place = False
    script_given = False
    i, n = 0, len(words)
    while i < n:
        w = words[i]
        text = w.text
        if w.dynamic or not text.startswith("-") or text == "-":
            break
        i += 1
        if text == "--":
            break
        k = 1
        while k < len(text):
            ch = text[k]
            if ch == "i":
                in_place = True
                break  # the rest of the switch is the backup extension
            if ch in "eE":
                script_given = True
                if k + 1 == len(text):
                    i += 1  # the code is the next word
                break
            if ch in "MmIFlCdDx0V":
                break  # the rest of the switch is its value
            if ch not in "acnpsStTuUwWX":
                raise _Skip
            k += 1
    if not in_place:
        return
    rest = words[i:]
    for w in rest if script_given else rest[1:]:
        paths.add(found, w, "perl -i")


def _dd(name: str, words: list[Word], paths: _Paths, found: list[Write]) -> None:
    from yupana.shell.lexer import Word

    for w in words:
        if w.text.startswith("of=") and not w.dynamic:
            paths.add(found, Word(w.text[3:], quoted=w.quoted), "dd")


# ── git ──────────────────────────────────────────────────────────────────────────────

_GIT_VALUED = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path",
               "--super-prefix", "--list-cmds", "--attr-source")


def _git(name: str, words: list[Word], paths: _Paths, found: list[Write]) -> None:
    where: str | None = paths.base
    i, n = 0, len(words)
    while i < n and words[i].text.startswith("-"):
        w = words[i]
        key, eq, value = w.text.partition("=")
        if key in _GIT_VALUED and not eq:
            if i + 1 >= n:
                raise _Skip
            value = words[i + 1].text
            dynamic = words[i + 1].dynamic
            i += 2
        else:
            dynamic = w.dynamic
            i += 1
        if key == "-C":
            where = None if dynamic or where is None else _Paths(where, paths.home).absolute(words[i - 1])
        elif key in ("-c", "--config-env") and value.split("=", 1)[0].lower() == "core.hookspath":
            found.append(Write(where or "", name, git=HOOKS_PATH))
    if i >= n or words[i].dynamic:
        return
    sub, rest = words[i].text, words[i + 1:]
    if sub in ("rm", "mv", "restore") or (sub == "checkout" and any(w.text == "--" for w in rest)):
        if sub == "rm" and any(w.text == "--cached" for w in rest):
            return  # the index only: no file changes
        git_paths = _Paths(where, paths.home)
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


_TOOLS = {
    "tee": _operands("aip", "", ("append", "ignore-interrupts", "output-error")),
    "rm": _operands("fiIrRdv", "", ("force", "interactive", "recursive", "dir", "one-file-system",
                                     "no-preserve-root", "preserve-root")),
    "truncate": _operands("co", "sr", ("no-create", "io-blocks", "size", "reference"), ("size", "reference")),
    "touch": _operands("acfhm", "dtr", ("no-create", "no-dereference", "date", "reference", "time"),
                       ("date", "reference", "time")),
    "mkdir": _operands("pv", "mZ", ("parents", "mode", "context"), ("mode",)),
    "chmod": _chmod,
    "cp": _destination, "mv": _destination, "install": _destination, "ln": _destination,
    "sed": _sed, "gsed": _sed, "perl": _perl, "dd": _dd, "git": _git,
}
