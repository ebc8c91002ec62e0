"""The ``@@`` chunks of an apply_patch Update: reading them, and rebuilding a file from them.

A chunk is the unit Codex anchors: optional stacked ``@@ <context>`` headers, then body
lines `` <context>``, ``-<removed>``, ``+<added>`` (an empty line is an empty context line),
optionally closed by ``*** End of File``. :func:`parse_chunks` reads the chunks of one
Update section (the section headers, envelope and wrappers are :mod:`apply_patch`'s);
:func:`apply_chunks` rebuilds the updated file with exact context only, naming every
anchor Codex would find only by its lenient matching. No imports: only Codex calls load it.
"""

from __future__ import annotations

from itertools import compress, count, islice, repeat  # built into the interpreter: no import cost

EOF_MARKER = "*** End of File"

# Rust's char::is_whitespace (Unicode White_Space), which Codex's trim() strips. Python's
# str.strip() would also strip U+001C..U+001F.
WS = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
      "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


class Chunk:
    """One ``@@`` chunk of an Update: where it anchors and what it changes.

    ``old_lines`` (context + removed, in order) is what must be found in the file;
    ``new_lines`` (context + added) replaces it. ``added`` are the ``+`` lines alone.
    """

    __slots__ = ("contexts", "old_lines", "new_lines", "added", "eof", "line")

    def __init__(self, line: int) -> None:
        self.contexts: list[str] = []  # the text after each stacked "@@ "
        self.old_lines: list[str] = []
        self.new_lines: list[str] = []
        self.added: list[str] = []
        self.eof = False  # "*** End of File": old_lines must end the file
        self.line = line  # 1-based line of the chunk in the patch

    def __repr__(self) -> str:
        return f"Chunk(contexts={self.contexts!r}, old={self.old_lines!r}, new={self.new_lines!r}, eof={self.eof})"


def parse_chunks(lines: list[str], i: int, chunks: list[Chunk], problems: list[str]) -> int:
    """Read the chunks of an Update section from ``i`` into ``chunks``; the next index, or -1.

    ``lines`` are the patch lines between Begin and End (so ``lines[i]`` is patch line
    ``i + 2``). Reading stops at the next ``***`` section header; -1 means a problem was
    appended to ``problems`` and the section is unreadable.
    """
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line.strip(WS):
            i += 1  # blank lines between chunks
            continue
        if line.startswith("***"):
            break  # the next section
        chunk = Chunk(i + 2)
        saw_marker = False
        while i < n:
            if lines[i] == "@@":
                saw_marker = True
            elif lines[i].startswith("@@ "):
                saw_marker = True
                chunk.contexts.append(lines[i][3:])
            else:
                break
            i += 1
        if not saw_marker and chunks:
            problems.append(
                f"apply_patch: line {chunk.line}: expected a '@@' chunk header, got {clip(line)!r}")
            return -1
        body = 0
        while i < n:
            line = lines[i]
            if line == EOF_MARKER:
                if body == 0:
                    break
                chunk.eof = True
                i += 1
                break
            first = line[:1]
            if first == "":
                chunk.old_lines.append("")
                chunk.new_lines.append("")
                body += 1
                i += 1
                continue
            if first not in " +-":
                if body == 0:
                    problems.append(
                        f"apply_patch: line {i + 2}: unexpected line {clip(line)!r} in an update "
                        "chunk (every line starts with ' ', '+' or '-')")
                    return -1
                break  # the start of the next chunk or section
            # A run of lines with the same mark, taken whole: no loop per line in Python.
            end = run_end(lines, i, first)
            run = [text[1:] for text in lines[i:end]]
            if first != "+":
                chunk.old_lines += run
            if first != "-":
                chunk.new_lines += run
            if first == "+":
                chunk.added += run
            body += end - i
            i = end
        if body == 0:
            problems.append(f"apply_patch: line {chunk.line}: update chunk has no lines")
            return -1
        chunks.append(chunk)
    return i


def run_end(lines: list[str], i: int, mark: str) -> int:
    """The first index from ``i`` whose line does not start with ``mark`` (else ``len(lines)``).

    The scan runs in C (``map``/``compress`` over the list), about ten times faster than a
    Python loop per line: it is what keeps a 10 MB patch inside the hook's deadline.
    """
    for k in compress(count(i), map(False.__eq__, map(str.startswith, islice(lines, i, None), repeat(mark)))):
        return k
    return len(lines)


def clip(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut), for messages."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------- exact reconstruction


def apply_chunks(original: str, chunks: list[Chunk]) -> tuple[str | None, str | None]:
    """Rebuild the file ``original`` after ``chunks``, exactly; ``(text, None)`` or ``(None, why)``.

    Same algorithm as Codex (chunks in order, each searched from where the previous one
    ended, ``@@`` contexts narrowing the start, pure additions appended at the end, a
    trailing empty old line retried without it, a final newline ensured), except that
    every anchor must match **exactly and uniquely**: Codex takes the first match and
    falls back to whitespace- and punctuation-insensitive matching (``seek_sequence``);
    we say why instead ("anchor missing", "anchor ambiguous", "anchor fuzzy").
    """
    lines = original.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    replacements: list[tuple[int, int, list[str]]] = []
    start = 0
    for chunk in chunks:
        for context in chunk.contexts:
            found, why = _seek(lines, [context], start, False, f"context line {context!r}")
            if found is None:
                return None, why
            start = found + 1
        if not chunk.old_lines:
            at = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            replacements.append((at, 0, chunk.new_lines))
            continue
        pattern, new = chunk.old_lines, chunk.new_lines
        what = f"lines {clip(chr(10).join(pattern), 120)!r}"
        found, why = _seek(lines, pattern, start, chunk.eof, what)
        if found is None and why.startswith("anchor missing") and pattern[-1] == "":
            pattern = pattern[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            if pattern:
                found, why = _seek(lines, pattern, start, chunk.eof, what)
            else:
                found, why = start, ""
        if found is None:
            return None, why
        replacements.append((found, len(pattern), new))
        start = found + len(pattern)
    replacements.sort(key=lambda r: r[0])
    for at, length, new in reversed(replacements):
        lines[at:at + length] = new
    if not lines or lines[-1] != "":
        lines.append("")
    return "\n".join(lines), None


def _seek(lines: list[str], pattern: list[str], start: int, eof: bool, what: str) -> tuple[int | None, str]:
    """The unique exact position of ``pattern`` at or after ``start`` (at the very end if ``eof``)."""
    n, m = len(lines), len(pattern)
    if m > n:
        return None, f"anchor missing: {what} not found (the file has {n} lines)"
    if eof:
        at = n - m
        if lines[at:] == pattern:
            return at, ""
        if _fuzzy(lines, pattern, at, at):
            return None, f"anchor fuzzy: {what} match the end of the file only ignoring whitespace or punctuation"
        return None, f"anchor missing: {what} are not at the end of the file"
    hits = []
    first = pattern[0]
    last = n - m
    i = start
    while i <= last:
        try:
            i = lines.index(first, i, last + 1)
        except ValueError:
            break
        if lines[i:i + m] == pattern:
            hits.append(i)
            if len(hits) > 1:
                return None, f"anchor ambiguous: {what} occur more than once (from line {start + 1})"
        i += 1
    if hits:
        return hits[0], ""
    if _fuzzy(lines, pattern, start, last):
        return None, f"anchor fuzzy: {what} match only ignoring whitespace or punctuation"
    return None, f"anchor missing: {what} not found (from line {start + 1})"


_PUNCT = str.maketrans({
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ",
    "\u2007": " ", "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ", "\u3000": " ",
})


def _fuzzy(lines: list[str], pattern: list[str], lo: int, hi: int) -> bool:
    """Would Codex's lenient passes (rstrip, strip, typographic punctuation) match in lo..hi?"""
    lo = max(lo, 0)
    if hi < lo:
        return False
    m = len(pattern)
    want = [_norm(p) for p in pattern]
    have = [_norm(s) for s in lines[lo:hi + m]]
    for i in range(hi - lo + 1):
        if have[i:i + m] == want:
            return True
    return False


def _norm(text: str) -> str:
    return text.strip(WS).translate(_PUNCT).strip(WS)
