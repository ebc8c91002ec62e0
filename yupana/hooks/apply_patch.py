"""Codex ``apply_patch`` envelopes read into file operations, for the guard. No imports.

The guard needs three things from a patch: which files it adds, deletes, updates or moves
(source and destination), which lines it adds (the only text a rule may see as
"introduced"), and enough of each update chunk to rebuild the file exactly.

Grammar (Codex ``codex-rs/apply-patch``)::

    *** Begin Patch
    *** Add File: <path>           then lines "+<text>"
    *** Delete File: <path>
    *** Update File: <path>
    *** Move to: <path>            optional, directly after Update
    @@ [<context line>]            one or more, stacked; the first chunk may omit it
     <context>  -<removed>  +<added>  (an empty line is an empty context line)
    *** End of File                optional, ends a chunk anchored at the end of the file
    *** End Patch

Leniency — exactly where Codex is lenient, strict elsewhere:

* The whole text is trimmed; Begin/End and section headers (Add/Delete/Update) may carry
  surrounding whitespace; a line's trailing ``\\r`` is dropped (Rust ``str::lines``).
* ``*** Move to:``, ``@@`` and ``*** End of File`` must sit at the start of their line,
  as Codex requires; blank lines between chunks are skipped.
* ``*** End Patch`` is required (Codex's marker-optional mode is for progress display
  only, and a patch without it is never applied).
* Wrappers: Codex's lenient heredoc (first line exactly ``<<EOF``, ``<<'EOF'`` or
  ``<<"EOF"``, last line ending in ``EOF``), and the shell form
  ``[cd <dir> &&] apply_patch <<'WORD'`` … ``WORD`` (also ``applypatch``, any delimiter,
  quoted or not, nothing after the delimiter line); ``cd`` sets :attr:`Patch.workdir`.
  ``<<-`` (tab-stripping) is reported as unsupported: Codex keeps the tabs, a shell would not.
* Stacked ``@@`` headers are accepted (current Codex parses them; older releases rejected
  the patch, in which case our reading errs on the side of evaluating an edit that fails).

Anything else is a problem, reported in :attr:`Patch.problems`; parsing never raises.
Codex applies nothing when its parser fails, but the sections read before the error stay
in :attr:`Patch.ops`: they are what the model meant to do, and evaluating them can only
add caution. The hook turns any problem into an UNKNOWN metric and a fail-open advisory.
"""

from __future__ import annotations

ADD, DELETE, UPDATE = "add", "delete", "update"

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD_MARKER = "*** Add File: "
DELETE_MARKER = "*** Delete File: "
UPDATE_MARKER = "*** Update File: "
MOVE_MARKER = "*** Move to: "
EOF_MARKER = "*** End of File"

# Rust's char::is_whitespace (Unicode White_Space), which Codex's trim() strips. Python's
# str.strip() would also strip U+001C..U+001F.
_WS = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
       "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_LENIENT_HEREDOC = ("<<EOF", "<<'EOF'", '<<"EOF"')
_COMMANDS = ("apply_patch", "applypatch")
_COMMAND_STARTS = ("apply_patch", "applypatch", "cd ", "cd\t")


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


class FileOp:
    """One file section of a patch. ``path``/``move_to`` are as written (maybe relative)."""

    __slots__ = ("op", "path", "move_to", "lines", "chunks", "line")

    def __init__(self, op: str, path: str, line: int) -> None:
        self.op = op
        self.path = path
        self.move_to: str | None = None
        self.lines: list[str] = []  # Add File: the "+" lines
        self.chunks: list[Chunk] = []  # Update File
        self.line = line

    @property
    def added(self) -> list[str]:
        """Every line this section adds (Add: the whole file; Update: the ``+`` lines)."""
        if self.op == ADD:
            return self.lines
        return [text for chunk in self.chunks for text in chunk.added]

    @property
    def content(self) -> str | None:
        """The new file of an Add File section (each line newline-terminated, as Codex writes it)."""
        if self.op != ADD:
            return None
        return "".join(text + "\n" for text in self.lines)

    def __repr__(self) -> str:
        return f"FileOp({self.op!r}, {self.path!r}, move_to={self.move_to!r})"


class Patch:
    """The reading of one patch: its operations and everything that kept it from being clean."""

    __slots__ = ("ops", "problems", "workdir", "wrapper")

    def __init__(self) -> None:
        self.ops: list[FileOp] = []
        self.problems: list[str] = []
        self.workdir: str | None = None  # from "cd <dir> && apply_patch <<…"
        self.wrapper: str | None = None  # None | "heredoc" | "command"


def parse(text: str) -> Patch:
    """Read a patch, a heredoc-wrapped patch or an ``apply_patch <<EOF`` command. Never raises."""
    patch = Patch()
    if not isinstance(text, str):
        patch.problems.append(f"apply_patch: the patch is not text ({type(text).__name__})")
        return patch
    body = text.strip(_WS)
    if not body:
        patch.problems.append("apply_patch: empty patch text")
        return patch
    first = body.split("\n", 1)[0].rstrip("\r")
    if first.strip(_WS) != BEGIN and first not in _LENIENT_HEREDOC and first.startswith(_COMMAND_STARTS):
        unwrapped = _unwrap_command(body, patch)
        if unwrapped is None:
            return patch
        body = unwrapped.strip(_WS)
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in body.split("\n")]
    hunk_lines = _boundaries(lines, patch)
    if hunk_lines is None:
        return patch
    _parse_hunks(hunk_lines, patch)
    if not patch.ops and not patch.problems:
        patch.problems.append("apply_patch: empty patch: no file operations (Codex rejects it)")
    return patch


def _boundaries(lines: list[str], patch: Patch) -> list[str] | None:
    """The lines between Begin and End, after Codex's lenient heredoc unwrapping."""
    error = _check_envelope(lines)
    if error is None:
        return lines[1:-1]
    if len(lines) >= 4 and lines[0] in _LENIENT_HEREDOC and lines[-1].endswith("EOF"):
        inner = lines[1:-1]
        inner_error = _check_envelope(inner)
        if inner_error is None:
            patch.wrapper = "heredoc"
            return inner[1:-1]
        error = inner_error
    patch.problems.append(f"apply_patch: {error}")
    return None


def _check_envelope(lines: list[str]) -> str | None:
    if not lines or lines[0].strip(_WS) != BEGIN:
        return "the first line of the patch must be '*** Begin Patch'"
    if len(lines) < 2 or lines[-1].strip(_WS) != END:
        return "the last line of the patch must be '*** End Patch' (Codex does not apply a patch without it)"
    return None


def _unwrap_command(body: str, patch: Patch) -> str | None:
    """The heredoc body of ``[cd DIR &&] apply_patch <<'WORD'``…``WORD``, or None (problem noted)."""
    head, _, rest = body.partition("\n")
    head = head.rstrip("\r")
    words = _words(head)
    if words is None:
        patch.problems.append(f"apply_patch: cannot read the command line {_clip(head)!r}")
        return None
    workdir = None
    if len(words) >= 3 and words[0] == "cd" and words[2] == "&&":
        workdir = words[1]
        words = words[3:]
    if not words or words[0] not in _COMMANDS:
        patch.problems.append(
            "apply_patch: the first line of the patch must be '*** Begin Patch' "
            f"(got the command {_clip(head)!r})")
        return None
    if len(words) != 2 or not words[1].startswith("<<"):
        patch.problems.append(
            f"apply_patch: unsupported invocation {_clip(head)!r}: Codex applies only "
            "'[cd DIR &&] apply_patch <<'EOF'' with the patch as the heredoc body")
        return None
    delimiter = words[1][2:]
    if delimiter.startswith("-"):
        patch.problems.append("apply_patch: unsupported heredoc '<<-' (tab stripping)")
        return None
    if len(delimiter) >= 2 and delimiter[0] == delimiter[-1] and delimiter[0] in "'\"":
        delimiter = delimiter[1:-1]
    if not delimiter or "'" in delimiter or '"' in delimiter:
        patch.problems.append(f"apply_patch: unreadable heredoc delimiter in {_clip(head)!r}")
        return None
    lines = rest.split("\n")
    for i, line in enumerate(lines):
        if line.rstrip("\r") == delimiter:
            trailing = "\n".join(lines[i + 1:])
            if trailing.strip(_WS):
                patch.problems.append(
                    "apply_patch: commands after the heredoc (Codex applies only a lone "
                    f"apply_patch invocation): {_clip(trailing.strip(_WS))!r}")
                return None
            patch.wrapper = "command"
            patch.workdir = workdir
            return "\n".join(lines[:i])
    patch.problems.append(f"apply_patch: heredoc is not closed by a line {delimiter!r}")
    return None


def _words(line: str) -> list[str] | None:
    """Split a shell command line into words: bare, 'single' or "double" quoted; && as a word.

    Heredoc operators keep their (quoted) delimiter attached: ``<<'EOF'`` is one word.
    Returns None for an unterminated quote. Enough for the forms Codex accepts, no more.
    """
    words: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in " \t":
            i += 1
            continue
        if line.startswith("&&", i):
            words.append("&&")
            i += 2
            continue
        if line.startswith("<<", i):
            j = i + 2
            while j < n and line[j] in " \t":
                j += 1
            end = j
            if end < n and line[end] in "'\"":
                close = line.find(line[end], end + 1)
                if close < 0:
                    return None
                end = close + 1
            else:
                while end < n and line[end] not in " \t;&|":
                    end += 1
            words.append("<<" + line[j:end])
            i = end
            continue
        word = []
        while i < n and line[i] not in " \t" and not line.startswith("&&", i) and not line.startswith("<<", i):
            c = line[i]
            if c in "'\"":
                close = line.find(c, i + 1)
                if close < 0:
                    return None
                word.append(line[i + 1:close])
                i = close + 1
            else:
                word.append(c)
                i += 1
        words.append("".join(word))
    return words


def _parse_hunks(lines: list[str], patch: Patch) -> None:
    i, n = 0, len(lines)
    while i < n:
        number = i + 2  # 1-based, after the Begin line
        header = lines[i].strip(_WS)
        if header.startswith(ADD_MARKER):
            op = FileOp(ADD, header[len(ADD_MARKER):], number)
            i += 1
            while i < n and lines[i].startswith("+"):
                op.lines.append(lines[i][1:])
                i += 1
            patch.ops.append(op)
        elif header.startswith(DELETE_MARKER):
            patch.ops.append(FileOp(DELETE, header[len(DELETE_MARKER):], number))
            i += 1
        elif header.startswith(UPDATE_MARKER):
            op = FileOp(UPDATE, header[len(UPDATE_MARKER):], number)
            i += 1
            if i < n and lines[i].startswith(MOVE_MARKER):
                op.move_to = lines[i][len(MOVE_MARKER):]
                if not op.move_to.strip(_WS):
                    patch.problems.append(f"apply_patch: line {i + 2}: '*** Move to:' without a path")
                    return
                i += 1
            i = _parse_chunks(lines, i, op, patch)
            if i < 0:
                return
            if not op.chunks:
                patch.problems.append(
                    f"apply_patch: line {number}: update of {op.path!r} has no changes (Codex rejects it)")
                return
            patch.ops.append(op)
        else:
            patch.problems.append(
                f"apply_patch: line {number}: {_clip(header)!r} is not a valid section header "
                "(expected '*** Add File: ', '*** Delete File: ' or '*** Update File: ')")
            return


def _parse_chunks(lines: list[str], i: int, op: FileOp, patch: Patch) -> int:
    """Read the chunks of an Update section from ``i``; the next index, or -1 on a problem."""
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line.strip(_WS):
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
        if not saw_marker and op.chunks:
            patch.problems.append(
                f"apply_patch: line {chunk.line}: expected a '@@' chunk header, got {_clip(line)!r}")
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
            elif first == " ":
                chunk.old_lines.append(line[1:])
                chunk.new_lines.append(line[1:])
            elif first == "+":
                chunk.new_lines.append(line[1:])
                chunk.added.append(line[1:])
            elif first == "-":
                chunk.old_lines.append(line[1:])
            else:
                if body == 0:
                    patch.problems.append(
                        f"apply_patch: line {i + 2}: unexpected line {_clip(line)!r} in an update "
                        "chunk (every line starts with ' ', '+' or '-')")
                    return -1
                break  # the start of the next chunk or section
            body += 1
            i += 1
        if body == 0:
            patch.problems.append(f"apply_patch: line {chunk.line}: update chunk has no lines")
            return -1
        op.chunks.append(chunk)
    return i


def _clip(text: str, limit: int = 80) -> str:
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
        what = f"lines {_clip(chr(10).join(pattern), 120)!r}"
        found, why = _seek(lines, pattern, start, chunk.eof, what)
        if found is None and why.startswith("anchor missing") and pattern[-1] == "":
            pattern = pattern[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            if pattern:
                found, why = _seek(lines, pattern, start, chunk.eof, what)
            else:
                found, why = start, None
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
    return text.strip(_WS).translate(_PUNCT).strip(_WS)
