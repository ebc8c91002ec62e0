"""Pure filters: pipeline members that cannot hide an action. Standard library only.

A *pure filter* reads its standard input or the files it names, writes its standard output
or the files it names, and runs no command — whatever its arguments are. A pipeline whose
other members are all pure filters (``ssh a.example.com 2>&1 | tee ssh.log``) is read as
its one remaining member would be read alone (:mod:`yupana.shell`); any other pipeline
keeps abstaining. The set is deliberately small (docs/pre-bash.md says why each is in it
and why ``awk``, ``xargs``, ``less``, ``rg``, ``find`` and friends are not):

* no option of ``tee``, ``cat``, ``grep``/``egrep``/``fgrep``, ``head``, ``tail``, ``wc``,
  ``uniq``, ``cut``, ``tr``, ``nl`` or ``jq`` runs a command, so any literal or expanded
  arguments are fine;
* ``sort`` runs ``--compress-program``: only literal words, and no long option that could
  abbreviate it;
* ``sed`` runs commands with its ``e`` command and the ``e`` flag of ``s``, and writes
  files with ``w``: only literal scripts given inline (never ``-f``, never ``-i``), made of
  ``s``/``y`` commands without ``e`` or ``w`` flags and the plain one-letter commands
  (``p``, ``d``, ``q``, ``=``, …), with numeric, ``$`` or ``/regex/`` addresses.

A member is a pure filter only as a plain command: not a shell payload (``sh -c 'tee x'``),
with no uncertainty, a literal name, and no ``VAR=`` prefix other than the locale
(``LD_PRELOAD=… cat`` runs foreign code).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:  # what a filter needs of a command, structurally: no import of the reader, which imports this
    from typing import Protocol

    from yupana.shell.words import Word

    class Command(Protocol):
        """The parts of a :class:`yupana.shell.reader.Command` a filter reads."""

        argv: list[Word]
        assigns: list[str]
        wrappers: list[str]
        uncertain: list[str]

        @property
        def name(self) -> str: ...

_ANY_ARGUMENTS = frozenset(("tee", "cat", "grep", "egrep", "fgrep", "head", "tail", "wc", "uniq", "cut", "tr",
                            "nl", "jq"))
_SAFE_ASSIGNS = ("LC_", "LANG", "LANGUAGE", "TZ", "POSIXLY_CORRECT")
_SORT_FLAGS = "bdfgiMhnRrVcCmsuz"
_SORT_VALUES = "ktoST"
_SED_FLAGS = "nEruzs"
_SED_LONG_FLAGS = ("quiet", "silent", "regexp-extended", "unbuffered", "null-data", "separate", "posix", "debug",
                   "sandbox", "follow-symlinks")
_SED_PLAIN = "pdDPqQ=nNgGhHxlz"  # one-letter commands that neither run a command nor write a file
_S_FLAGS = "gpiImM0123456789"


def pure_filter(cmd: Command) -> bool:
    """True when ``cmd`` (a :class:`yupana.shell.Command`) is a pure filter (module doc)."""
    if not cmd.argv or cmd.uncertain or cmd.argv[0].dynamic:
        return False
    if any(w == "eval" or w.endswith(" -c") for w in cmd.wrappers):
        return False
    if any(not name.startswith(_SAFE_ASSIGNS) for name in cmd.assigns):
        return False
    name = cmd.name
    if name in _ANY_ARGUMENTS:
        return True
    args = cmd.argv[1:]
    if any(w.dynamic for w in args):
        return False
    texts = [w.text for w in args]
    if name == "sort":
        return _sort(texts)
    if name == "sed":
        return _sed(texts)
    return False


def _sort(args: list[str]) -> bool:
    i = 0
    while i < len(args):
        text = args[i]
        if text == "--":
            return True
        if text.startswith("--"):
            key = text[2:].partition("=")[0]
            if len(key) >= 2 and "compress-program".startswith(key):
                return False
        elif text.startswith("-") and text != "-":
            for k, ch in enumerate(text[1:], 1):
                if ch in _SORT_VALUES:
                    if k == len(text) - 1:
                        i += 1  # the value is the next word
                    break
                if ch not in _SORT_FLAGS:
                    return False
        i += 1
    return True


def _sed(args: list[str]) -> bool:
    scripts: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        text = args[i]
        if text == "--":
            operands += args[i + 1:]
            break
        if text.startswith("--"):
            key, eq, value = text[2:].partition("=")
            if key == "expression":
                if not eq:
                    i += 1
                    if i >= len(args):
                        return False
                    value = args[i]
                scripts.append(value)
            elif key == "line-length" and eq:
                pass
            elif key not in _SED_LONG_FLAGS:
                return False  # --in-place, --file, and anything unknown
        elif text.startswith("-") and text != "-":
            k = 1
            while k < len(text):
                ch = text[k]
                if ch in "el":
                    value = text[k + 1:]
                    if not value:
                        i += 1
                        if i >= len(args):
                            return False
                        value = args[i]
                    if ch == "e":
                        scripts.append(value)
                    break
                if ch not in _SED_FLAGS:
                    return False  # -i, -f, and anything unknown
                k += 1
        else:
            operands.append(text)
        i += 1
    if not scripts:
        if not operands:
            return False
        scripts.append(operands[0])
    return all(_sed_script(s) for s in scripts)


def _sed_script(script: str) -> bool:
    """True when every command of ``script`` is one this module reads as pure."""
    s = script
    n = len(s)
    i = 0
    while i < n:
        while i < n and s[i] in " \t\n;{}":
            i += 1
        if i >= n:
            return True
        i = _address(s, i)
        if i < 0:
            return False
        if i < n and s[i] == ",":
            i = _address(s, i + 1)
            if i < 0:
                return False
        while i < n and s[i] in " \t!":
            i += 1
        if i >= n:
            return False
        ch = s[i]
        if ch in "sy":
            i = _delimited(s, i + 1, 2)
            if i < 0:
                return False
            if ch == "s":
                while i < n and s[i] in _S_FLAGS:
                    i += 1
        elif ch in _SED_PLAIN:
            i += 1
            while i < n and s[i].isdigit() and ch in "qQl":
                i += 1
        else:
            return False  # e, w, W, r, R, a, i, c, b, t, :label, #… — not read here
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] not in ";\n}":
            return False  # a flag or argument this reader does not know (the e and w flags)
    return True


def _address(s: str, i: int) -> int:
    """Index after an optional address at ``s[i]`` (a number, ``first~step``, ``$``, ``/re/``), or -1."""
    n = len(s)
    if i < n and s[i] == "$":
        return i + 1
    if i < n and s[i].isdigit():
        while i < n and (s[i].isdigit() or s[i] == "~"):
            i += 1
        return i
    if i < n and s[i] == "/":
        i = _delimited(s, i, 1)
        while 0 <= i < n and s[i] in "IM":
            i += 1
        return i
    return i


def _delimited(s: str, i: int, parts: int) -> int:
    """Index after ``parts`` fields delimited by ``s[i]`` (backslash escapes it), or -1."""
    n = len(s)
    if i >= n or s[i] in "\\\n":
        return -1
    delim = s[i]
    i += 1
    for _ in range(parts):
        while i < n and s[i] != delim:
            if s[i] == "\\":
                i += 1
            elif s[i] == "\n" and parts == 1:
                return -1
            i += 1
        if i >= n:
            return -1
        i += 1
    return i
