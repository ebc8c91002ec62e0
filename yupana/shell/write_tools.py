"""The write readers of :mod:`yupana.shell.writes`, one per file tool: what ``tee``, ``sed -i``,
``perl -i``, ``cp``/``mv``/``install``/``ln``, ``rm``, ``truncate``, ``chmod``, ``touch``,
``mkdir`` and ``dd`` write (git's are :mod:`yupana.shell.git_writes`). Each takes the command
name, its words after the name, the cwd's :class:`~yupana.shell.write_model.Paths` and the list
to append to; an option it does not know raises :class:`~yupana.shell.write_model.Skip`.
Standard library only.
"""

from __future__ import annotations

import os

from yupana.shell import git_writes
from yupana.shell.write_model import COMMON, Paths, Skip, Write, split, word

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable

    from yupana.shell.lexer import Word

    Tool = Callable[[str, list[Word], Paths, list[Write]], None]


def _operands(flags: str, args: str, long_flags: tuple[str, ...], long_args: tuple[str, ...] = ()) -> Tool:
    """A tool whose every operand is written (``rm``, ``touch``, ``truncate``, ``mkdir``, ``tee``)."""
    def tool(name: str, words: list[Word], paths: Paths, found: list[Write]) -> None:
        operands, options = split(words, flags, args, long_flags + COMMON, long_args)
        whole = name == "rm" and any(k in ("r", "R", "recursive", "d", "dir") for k, _ in options)
        for w in operands:
            paths.add(found, w, name, whole)
    return tool


def _chmod(name: str, words: list[Word], paths: Paths, found: list[Write]) -> None:
    mode_chars = set("rwxXstugoa=+-,01234567")
    kept: list[Word] = []
    for w in words:  # `chmod -x f`: a mode that looks like an option
        if not w.dynamic and w.text.startswith("-") and len(w.text) > 1 and set(w.text[1:]) <= mode_chars \
                and not set(w.text[1:]) <= set("cfvR"):
            kept.append(word("0"))  # stands for the mode operand
        else:
            kept.append(w)
    operands, options = split(kept, "cfvR", "", ("changes", "silent", "quiet", "recursive", "no-preserve-root",
                                                   "preserve-root", "reference") + COMMON)
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


def _destination(name: str, words: list[Word], paths: Paths, found: list[Write]) -> None:
    flags, args, long_args = _DESTINATION[name]
    operands, options = split(words, flags, args, _CP_LONG + COMMON, long_args)
    keys = {k for k, _ in options}
    if name == "install" and keys & {"d", "directory"}:
        for w in operands:
            paths.add(found, w, name)
        return
    target = next((v for k, v in options if k in ("t", "target-directory")), None)
    if target is not None:
        dest, sources, folder = word(target), operands, True
    elif not operands:
        return
    elif len(operands) == 1:
        if name != "ln":
            return
        dest, sources, folder = word("."), operands, True  # `ln -s TARGET`: a link named like it, here
    else:
        dest, sources = operands[-1], operands[:-1]
        folder = len(sources) > 1 and not keys & {"T", "no-target-directory"}
    where = paths.add(found, dest, name)
    hard = (name == "ln" and not keys & {"s", "symbolic"}) or (name == "cp" and bool(keys & {"l", "link"}))
    for w in sources:
        if name == "mv" or hard:  # moved away (with what it holds), or a second name made for it to write through
            paths.add(found, w, name, whole=name == "mv")
        if where is not None and not w.dynamic and (folder or os.path.isdir(where)):
            found.append(Write(os.path.normpath(os.path.join(where, os.path.basename(w.text.rstrip("/")))), name))


def _sed(name: str, words: list[Word], paths: Paths, found: list[Write]) -> None:
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
                             "zero-terminated", "posix", "debug", "sandbox", "follow-symlinks", "binary") + COMMON:
                raise Skip
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
                raise Skip
            k += 1
        i += 1
    if not in_place:
        return
    for w in rest if script_given else rest[1:]:
        paths.add(found, w, "sed -i")


def _perl(name: str, words: list[Word], paths: Paths, found: list[Write]) -> None:
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
                raise Skip
            k += 1
    if not in_place:
        return
    rest = words[i:]
    for w in rest if script_given else rest[1:]:
        paths.add(found, w, "perl -i")


def _dd(name: str, words: list[Word], paths: Paths, found: list[Write]) -> None:
    from yupana.shell.lexer import Word

    for w in words:
        if w.text.startswith("of=") and not w.dynamic:
            paths.add(found, Word(w.text[3:], quoted=w.quoted), "dd")



TOOLS: dict[str, Tool] = {
    "tee": _operands("aip", "", ("append", "ignore-interrupts", "output-error")),
    "rm": _operands("fiIrRdv", "", ("force", "interactive", "recursive", "dir", "one-file-system",
                                     "no-preserve-root", "preserve-root")),
    "truncate": _operands("co", "sr", ("no-create", "io-blocks", "size", "reference"), ("size", "reference")),
    "touch": _operands("acfhm", "dtr", ("no-create", "no-dereference", "date", "reference", "time"),
                       ("date", "reference", "time")),
    "mkdir": _operands("pv", "mZ", ("parents", "mode", "context"), ("mode",)),
    "chmod": _chmod,
    "cp": _destination, "mv": _destination, "install": _destination, "ln": _destination,
    "sed": _sed, "gsed": _sed, "perl": _perl, "dd": _dd, "git": git_writes.git,
}
