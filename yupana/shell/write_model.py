"""The model behind :mod:`yupana.shell.writes`: a :class:`Write`, path words made absolute
(:class:`Paths`), the GNU option grammar the write readers share (:func:`split`) and
:class:`Skip` (a command whose words a grammar cannot read: it abstains). Standard library only.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.shell.lexer import Word

HOOKS_PATH, NO_VERIFY = "hooks_path", "no_verify"
COMMON = ("help", "version", "verbose")  # long flags every GNU tool takes


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


class Skip(Exception):
    """This command's words are not read with certainty by its grammar: it abstains."""




class Paths:
    """Path words made absolute against the command's cwd (None: unknown after a ``cd``)."""

    def __init__(self, base: str | None, home: str | None) -> None:
        self.base, self.home = base, home

    def absolute(self, word: Word) -> str | None:
        text = word.text
        if word.dynamic and not glob_in_name_only(text):
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


def glob_in_name_only(text: str) -> bool:
    """A word whose only expansion is a glob or brace pattern in its last component: the
    directory it names is literal (``.git/hooks/*``), whatever the pattern matches in it."""
    head, _, name = text.rpartition("/")
    return bool(head) and not any(c in text for c in "$`") and not any(c in head for c in "*?[{") \
        and any(c in name for c in "*?[{")


# ── option grammars ────────────────────────────────────────────────────────────────────


def split(words: list[Word], flags: str, args: str, long_flags: tuple[str, ...] = (),
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
                    raise Skip
                options.append((key, words[i + 1].text))
                i += 2
                continue
            if key not in long_flags and key not in long_args:
                raise Skip
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
                        raise Skip
                    options.append((ch, words[i + 1].text))
                    i += 1
                break
            if ch not in flags:
                raise Skip
            options.append((ch, ""))
            k += 1
        i += 1
    return operands, options




def word(text: str) -> Word:
    from yupana.shell.lexer import Word

    return Word(text)
