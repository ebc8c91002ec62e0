"""Reading one shell word for :mod:`yupana.shell.lexer`: quoting, expansions, substitutions.

Standard library only, no :mod:`re` or :mod:`shlex` (every pre-bash hook imports this).
:class:`WordReader` turns the text at the cursor into a :class:`Word` after quote removal:
'…' (literal), "…" (``\\`` escapes ``$ ` " \\`` and newline), ``$'…'`` (ANSI-C escapes),
``$"…"``, backslashes and line continuations; ``$NAME``, ``${…}``, ``$(…)``, ``$((…))``,
backticks, globs and brace expansion make a word ``dynamic``. A command substitution inside
a word emits a ``("mark", "command substitution")`` token before the word.
"""

from __future__ import annotations

_META = " \t\n;&|()<>"
_NAME_START = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
_NAME_CHARS = _NAME_START + "0123456789"
_SPECIAL_PARAMS = "@*#?$!-0123456789"
_WORD_SPECIAL = frozenset(_META + "'\"\\$`*?[")  # characters that end a run of ordinary ones
_DOUBLE_SPECIAL = ('"', "\\", "$", "`")
_MARK = {ord(c): 0 for c in _WORD_SPECIAL}


class Word:
    """One shell word after quote removal.

    ``text`` is the value; parts whose value is unknown (``$VAR``, ``$(…)``) are kept as
    written. ``quoted`` says some part was quoted; ``dynamic`` that the value (or the number
    of words it becomes) depends on expansion; ``assign`` that it is ``NAME=value``.
    """

    __slots__ = ("text", "quoted", "dynamic", "assign")

    def __init__(self, text: str, quoted: bool = False, dynamic: bool = False, assign: bool = False) -> None:
        self.text = text
        self.quoted = quoted
        self.dynamic = dynamic
        self.assign = assign

    def __repr__(self) -> str:
        flags = "".join(f for f, on in (("q", self.quoted), ("d", self.dynamic), ("a", self.assign)) if on)
        return f"Word({self.text!r}{', ' + flags if flags else ''})"


class WordReader:
    """The cursor over a command line, and how to read a word at it.

    Holds the state the lexer shares: ``src``/``n``/``i`` (text, length, cursor), ``tokens``
    (the output, into which a word's substitution mark goes), ``error`` (the syntax error
    that stopped the reading) and ``subst`` (per word: a command or process substitution
    was seen, so a command runs that this reader does not read).
    """

    def __init__(self, src: str) -> None:
        self.src = src
        self.n = len(src)
        self.i = 0
        # ("w", Word) | ("op", str) | ("redir", op: its target word follows) | ("mark", reason)
        self.tokens: list[tuple[str, object]] = []
        # ``src`` with every special character (and NUL itself) replaced by NUL: ``find`` on it
        # jumps over ordinary characters without a Python-level loop.
        self.marked = src.translate(_MARK)
        self.error: str | None = None
        self.subst = False

    def skip_balanced(self, start: int, open_: str, close: str) -> int:
        """Index after the ``close`` matching ``src[start] == open_``, respecting quotes."""
        src, n = self.src, self.n
        depth = 0
        i = start
        while i < n:
            c = src[i]
            if c == "\\":
                i += 2
                continue
            if c == "'":
                end = src.find("'", i + 1)
                if end < 0:
                    break
                i = end + 1
                continue
            if c == '"':
                i = self._skip_double(i + 1)
                continue
            if c == "`":
                self.subst = True
            if c == "$" and src.startswith("$(", i):
                self.subst = True
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        self.error = f"unterminated {open_}…{close}"
        return n

    def _skip_double(self, i: int) -> int:
        src, n = self.src, self.n
        while i < n:
            c = src[i]
            if c == "\\":
                i += 2
            elif c == '"':
                return i + 1
            else:
                if c == "`" or (c == "$" and src.startswith("$(", i)):
                    self.subst = True
                i += 1
        return n

    def read_word(self) -> Word | None:
        """Read one word starting at ``self.i``; None (and ``error``) on a syntax error."""
        src, n = self.src, self.n
        out: list[str] = []
        quoted = dynamic = False
        unquoted: list[str] = []
        self.subst = False
        i = self.i
        assign = False
        j = i
        if j < n and src[j] in _NAME_START:  # NAME=value / NAME+=value: unquoted name, then =
            j += 1
            while j < n and src[j] in _NAME_CHARS:
                j += 1
            eq = 1 if src.startswith("=", j) else 2 if src.startswith("+=", j) else 0
            if eq:
                assign = True
                out.append(src[i:j + eq])
                i = j + eq
        while i < n:
            c = src[i]
            if c not in _WORD_SPECIAL:  # a run of ordinary characters, found at C speed
                j = self.marked.find("\x00", i + 1)
                if j < 0:
                    j = n
                out.append(src[i:j])
                unquoted.append(src[i:j])
                i = j
                continue
            if c in _META:
                break
            if c == "'":
                end = src.find("'", i + 1)
                if end < 0:
                    self.error = "unterminated single quote"
                    self.i = n
                    return None
                out.append(src[i + 1:end])
                quoted = True
                i = end + 1
            elif c == '"':
                i, dyn = self._double(i + 1, out)
                if i < 0:
                    return None
                quoted = True
                dynamic = dynamic or dyn
            elif c == "\\":
                if i + 1 >= n:
                    out.append("\\")
                    i += 1
                elif src[i + 1] == "\n":
                    i += 2
                else:
                    out.append(src[i + 1])
                    quoted = True
                    i += 2
            elif c == "$":
                i, dyn, was_quoted = self._dollar(i, out)
                if i < 0:
                    return None
                dynamic = dynamic or dyn
                quoted = quoted or was_quoted
            elif c == "`":
                end = self._backtick_end(i + 1)
                if end < 0:
                    return None
                out.append(src[i:end])
                self.subst = True
                dynamic = True
                i = end
            else:  # an unquoted glob character
                dynamic = True
                out.append(c)
                unquoted.append(c)
                i += 1
        self.i = i
        un = "".join(unquoted)
        if "{" in un and "}" in un and ("," in un or ".." in un):
            dynamic = True  # brace expansion: one word may become several
        word = Word("".join(out), quoted, dynamic or self.subst, assign)
        if self.subst:
            self.tokens.append(("mark", "command substitution"))
        return word

    def _double(self, i: int, out: list[str]) -> tuple[int, bool]:
        src, n = self.src, self.n
        dynamic = False
        ahead = {c: src.find(c, i) for c in _DOUBLE_SPECIAL}  # next position of each special
        while i < n:
            for c, at in ahead.items():
                if 0 <= at < i:
                    ahead[c] = src.find(c, i)
            nearest = min((at for at in ahead.values() if at >= 0), default=-1)
            if nearest < 0:
                break
            if nearest > i:
                out.append(src[i:nearest])
                i = nearest
            c = src[i]
            if c == '"':
                return i + 1, dynamic
            if c == "\\":
                if i + 1 < n and src[i + 1] in '$`"\\\n':
                    if src[i + 1] != "\n":
                        out.append(src[i + 1])
                else:
                    out.append(src[i:i + 2])
                i += 2
            elif c == "$":
                i, dyn, _ = self._dollar(i, out, in_double=True)
                if i < 0:
                    return -1, dynamic
                dynamic = dynamic or dyn
            else:  # a backtick
                end = self._backtick_end(i + 1)
                if end < 0:
                    return -1, dynamic
                out.append(src[i:end])
                self.subst = True
                dynamic = True
                i = end
        self.error = "unterminated double quote"
        self.i = n
        return -1, dynamic

    def _backtick_end(self, i: int) -> int:
        src, n = self.src, self.n
        while i < n:
            c = src[i]
            if c == "\\":
                i += 2
            elif c == "`":
                return i + 1
            else:
                i += 1
        self.error = "unterminated backtick"
        self.i = n
        return -1

    def _dollar(self, i: int, out: list[str], in_double: bool = False) -> tuple[int, bool, bool]:
        """Read an expansion at ``src[i] == '$'``: (next index, dynamic, quoted)."""
        src, n = self.src, self.n
        nxt = src[i + 1] if i + 1 < n else ""
        if nxt == "'" and not in_double:
            end, text = _ansi_c(src, i + 2)
            if end < 0:
                self.error = "unterminated $'…' quote"
                self.i = n
                return -1, False, True
            out.append(text)
            return end, False, True
        if nxt == '"' and not in_double:
            end, dyn = self._double(i + 2, out)
            return end, dyn, True
        if nxt == "(":
            if src.startswith("$((", i):
                end = self.skip_balanced(i + 1, "(", ")")
            else:
                end = self.skip_balanced(i + 1, "(", ")")
                self.subst = True
            out.append(src[i:end])
            return (end if not self.error else -1), True, False
        if nxt == "{":
            end = self.skip_balanced(i + 1, "{", "}")
            out.append(src[i:end])
            return (end if not self.error else -1), True, False
        if nxt and nxt in _SPECIAL_PARAMS:
            out.append(src[i:i + 2])
            return i + 2, True, False
        if nxt and nxt in _NAME_START:
            j = i + 1
            while j < n and src[j] in _NAME_CHARS:
                j += 1
            out.append(src[i:j])
            return j, True, False
        out.append("$")
        return i + 1, False, False


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
                   "e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _ansi_c(src: str, i: int) -> tuple[int, str]:
    """Decode a ``$'…'`` body starting at ``i``: (index after the closing quote, text)."""
    n = len(src)
    out: list[str] = []
    while i < n:
        c = src[i]
        if c == "'":
            return i + 1, "".join(out)
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = src[i + 1]
        i += 2
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            j = i
            while j < n and j - i < width and src[j] in "0123456789abcdefABCDEF":
                j += 1
            if j == i:
                out.append("\\" + e)
            else:
                out.append(chr(min(int(src[i:j], 16), 0x10FFFF)))
                i = j
        elif e in "01234567":
            j = i
            while j < n and j - i < 2 and src[j] in "01234567":
                j += 1
            out.append(chr(int(e + src[i:j], 8)))
            i = j
        elif e == "c" and i < n:
            out.append(chr(ord(src[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    return -1, ""
