"""The tokeniser behind :mod:`yupana.shell`: a command line to words, operators and redirections.

Standard library only, no :mod:`re` or :mod:`shlex`. :func:`lex` returns tokens:

* ``("w", Word)`` — a word after quote removal (see :class:`Word`; words are read by
  :mod:`yupana.shell.words`);
* ``("op", text)`` — ``&&``, ``||``, ``;``, ``;;``, ``;&``, ``;;&``, ``|``, ``|&``, ``&``,
  ``(``, ``)`` or a newline;
* ``("redir", op)`` — a redirection (with its fd prefix, e.g. ``2>&``); its target word
  follows as the next ``"w"`` token. Heredoc bodies (``<<``, ``<<-``) are skipped at the
  next newline: they are data and never become tokens;
* ``("mark", reason)`` — ``command substitution`` or ``process substitution``: the word that
  follows runs a command this reader does not read; also ``command substitution in a
  heredoc body`` (an unquoted delimiter and ``$(`` or a backtick in the body: the shell
  expands it), placed before the newline that ends the heredoc's command.

This module reads what lies between words: blanks, line continuations, ``#`` comments at a
word start, operators, redirections and heredoc bodies.
"""

from __future__ import annotations

from yupana.shell.words import Word, WordReader

__all__ = ["Word", "lex"]

_SPACE = " \t"


def lex(src: str) -> tuple[list[tuple[str, object]], str | None]:
    """Tokens of ``src`` and the syntax error that stopped the reading (None when it did not)."""
    lexer = _Lexer(src)
    lexer.run()
    return lexer.tokens, lexer.error


class _Lexer(WordReader):
    """Turns a command line into words, operators and redirections."""

    def __init__(self, src: str) -> None:
        super().__init__(src)
        # (delimiter, strip tabs, body expanded: the delimiter was unquoted) awaiting a newline
        self.heredocs: list[tuple[str, bool, bool]] = []

    def run(self) -> None:
        src, n = self.src, self.n
        while self.i < n and not self.error:
            c = src[self.i]
            if c in _SPACE:
                self.i += 1
            elif c == "\\" and self.i + 1 < n and src[self.i + 1] == "\n":
                self.i += 2
            elif c == "\n":
                self.tokens.append(("op", "\n"))
                self.i += 1
                if self.heredocs:
                    self._heredoc_bodies()
            elif c == "#":
                end = src.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c in ";&|()":
                self._operator(c)
            elif c in "<>":
                self._redirect("")
            else:
                start = self.i
                word = self.read_word()
                if (
                    word is not None
                    and self.i < n
                    and src[self.i] in "<>"
                    and not word.quoted
                    and src[start:self.i].isdigit()
                ):
                    self._redirect(src[start:self.i])
                elif word is not None:
                    self.tokens.append(("w", word))
        if self.heredocs and not self.error:
            self.heredocs.clear()  # bash: a heredoc ended by end-of-input; its body is data anyway

    def _operator(self, c: str) -> None:
        src, i = self.src, self.i
        if c == "&" and src.startswith("&>", i):
            self._redirect("")
            return
        for op in (";;&", ";;", ";&", "&&", "||", "|&"):
            if src.startswith(op, i):
                self.tokens.append(("op", op))
                self.i = i + len(op)
                return
        self.tokens.append(("op", c))
        self.i = i + 1

    def _redirect(self, fd: str) -> None:
        src, i = self.src, self.i
        for op in ("<<<", "<<-", "<<", "<&", "<>", "<(", ">>", ">&", ">|", ">(", "&>>", "&>", "<", ">"):
            if src.startswith(op, i):
                break
        self.i = i + len(op)
        if op in ("<(", ">("):
            self.i = self.skip_balanced(i + 1, "(", ")")
            self.tokens.append(("mark", "process substitution"))
            self.tokens.append(("w", Word(src[i:self.i], dynamic=True)))
            return
        self.tokens.append(("redir", fd + op))
        while self.i < self.n and src[self.i] in _SPACE:
            self.i += 1
        if self.i >= self.n or src[self.i] in "\n;&|()<>":
            self.error = f"redirection {op} without a target"
            return
        target = self.read_word()
        if target is None:
            return
        if op in ("<<", "<<-"):
            self.heredocs.append((target.text, op == "<<-", not target.quoted))
        self.tokens.append(("w", target))

    def _heredoc_bodies(self) -> None:
        """Skip the bodies of pending heredocs (they start after the current newline)."""
        src = self.src
        substituted = False
        for delim, strip_tabs, expanded in self.heredocs:
            while True:
                if self.i >= self.n:
                    break
                end = src.find("\n", self.i)
                line = src[self.i:] if end < 0 else src[self.i:end]
                self.i = self.n if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delim:
                    break
                substituted = substituted or (expanded and ("$(" in line or "`" in line))
        self.heredocs.clear()
        if substituted:  # the mark belongs to the command before the newline just read
            self.tokens.insert(len(self.tokens) - 1, ("mark", "command substitution in a heredoc body"))
