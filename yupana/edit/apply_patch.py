"""Codex ``apply_patch`` envelopes read into file operations, for the guard.

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

This module reads everything around the chunks: the wrappers, the Begin/End envelope and
the file sections. The ``@@`` chunks themselves and the exact-context rebuild of an
updated file (:func:`apply_chunks`, re-exported here) are in :mod:`patch_chunks`. Neither
module imports anything else, and only patch calls (the clients whose rows map a tool to the
patch kind) load them.
"""

from __future__ import annotations

# Chunk, apply_chunks and EOF_MARKER are part of this module's API (callers import them from here).
from yupana.edit.patch_chunks import EOF_MARKER, WS, Chunk, apply_chunks, clip, parse_chunks, run_end  # noqa: F401

ADD, DELETE, UPDATE = "add", "delete", "update"

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD_MARKER = "*** Add File: "
DELETE_MARKER = "*** Delete File: "
UPDATE_MARKER = "*** Update File: "
MOVE_MARKER = "*** Move to: "

_LENIENT_HEREDOC = ("<<EOF", "<<'EOF'", '<<"EOF"')
_COMMANDS = ("apply_patch", "applypatch")
_COMMAND_STARTS = ("apply_patch", "applypatch", "cd ", "cd\t")


class FileOp:
    """One file section of a patch. ``path``/``move_to`` are as written (maybe relative)."""

    __slots__ = ("op", "path", "move_to", "chunks", "line", "_content")

    def __init__(self, op: str, path: str, line: int) -> None:
        self.op = op
        self.path = path
        self.move_to: str | None = None
        self.chunks: list[Chunk] = []  # Update File
        self.line = line
        self._content = ""  # Add File: the new file, built from its "+" lines in one pass

    def take_added(self, lines: list[str], start: int, end: int) -> None:
        """An Add File section's ``+`` lines ``lines[start:end]``, kept as the file they make.

        Joined and unmarked by string operations rather than a loop per line: a 10 MB Add
        File is read in milliseconds (the hook's deadline counts from its start).
        """
        if end > start:
            self._content = "\n".join(lines[start:end])[1:].replace("\n+", "\n") + "\n"

    @property
    def lines(self) -> list[str]:
        """Add File: the added lines, each without its ``+``."""
        return self._content.split("\n")[:-1] if self._content else []

    @property
    def added(self) -> list[str]:
        """Every line this section adds (Add: the whole file; Update: the ``+`` lines)."""
        if self.op == ADD:
            return self.lines
        return [text for chunk in self.chunks for text in chunk.added]

    @property
    def content(self) -> str | None:
        """The new file of an Add File section (each line newline-terminated, as Codex writes it)."""
        return self._content if self.op == ADD else None

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
    body = text.strip(WS)
    if not body:
        patch.problems.append("apply_patch: empty patch text")
        return patch
    first = body.split("\n", 1)[0].rstrip("\r")
    if first.strip(WS) != BEGIN and first not in _LENIENT_HEREDOC and first.startswith(_COMMAND_STARTS):
        unwrapped = _unwrap_command(body, patch)
        if unwrapped is None:
            return patch
        body = unwrapped.strip(WS)
    lines = body.split("\n")
    if "\r" in body:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    hunk_lines = _boundaries(lines, patch)
    if hunk_lines is None:
        return patch
    _parse_hunks(hunk_lines, patch)
    if not patch.ops and not patch.problems:
        patch.problems.append("apply_patch: empty patch: no file operations (the apply_patch tool rejects it)")
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
    if not lines or lines[0].strip(WS) != BEGIN:
        return "the first line of the patch must be '*** Begin Patch'"
    if len(lines) < 2 or lines[-1].strip(WS) != END:
        return "the last line of the patch must be '*** End Patch' (the apply_patch tool does not apply a patch without it)"
    return None


def _unwrap_command(body: str, patch: Patch) -> str | None:
    """The heredoc body of ``[cd DIR &&] apply_patch <<'WORD'``…``WORD``, or None (problem noted)."""
    head, _, rest = body.partition("\n")
    head = head.rstrip("\r")
    words = _words(head)
    if words is None:
        patch.problems.append(f"apply_patch: cannot read the command line {clip(head)!r}")
        return None
    workdir = None
    if len(words) >= 3 and words[0] == "cd" and words[2] == "&&":
        workdir = words[1]
        words = words[3:]
    if not words or words[0] not in _COMMANDS:
        patch.problems.append(
            "apply_patch: the first line of the patch must be '*** Begin Patch' "
            f"(got the command {clip(head)!r})")
        return None
    if len(words) != 2 or not words[1].startswith("<<"):
        patch.problems.append(
            f"apply_patch: unsupported invocation {clip(head)!r}: the apply_patch tool applies only "
            "'[cd DIR &&] apply_patch <<'EOF'' with the patch as the heredoc body")
        return None
    delimiter = words[1][2:]
    if delimiter.startswith("-"):
        patch.problems.append("apply_patch: unsupported heredoc '<<-' (tab stripping)")
        return None
    if len(delimiter) >= 2 and delimiter[0] == delimiter[-1] and delimiter[0] in "'\"":
        delimiter = delimiter[1:-1]
    if not delimiter or "'" in delimiter or '"' in delimiter:
        patch.problems.append(f"apply_patch: unreadable heredoc delimiter in {clip(head)!r}")
        return None
    lines = rest.split("\n")
    for i, line in enumerate(lines):
        if line.rstrip("\r") == delimiter:
            trailing = "\n".join(lines[i + 1:])
            if trailing.strip(WS):
                patch.problems.append(
                    "apply_patch: commands after the heredoc (the apply_patch tool applies only a lone "
                    f"apply_patch invocation): {clip(trailing.strip(WS))!r}")
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
        header = lines[i].strip(WS)
        if header.startswith(ADD_MARKER):
            op = FileOp(ADD, header[len(ADD_MARKER):], number)
            end = run_end(lines, i + 1, "+")
            op.take_added(lines, i + 1, end)
            i = end
            patch.ops.append(op)
        elif header.startswith(DELETE_MARKER):
            patch.ops.append(FileOp(DELETE, header[len(DELETE_MARKER):], number))
            i += 1
        elif header.startswith(UPDATE_MARKER):
            op = FileOp(UPDATE, header[len(UPDATE_MARKER):], number)
            i += 1
            if i < n and lines[i].startswith(MOVE_MARKER):
                op.move_to = lines[i][len(MOVE_MARKER):]
                if not op.move_to.strip(WS):
                    patch.problems.append(f"apply_patch: line {i + 2}: '*** Move to:' without a path")
                    return
                i += 1
            i = parse_chunks(lines, i, op.chunks, patch.problems)
            if i < 0:
                return
            if not op.chunks:
                patch.problems.append(
                    f"apply_patch: line {number}: update of {op.path!r} has no changes (the apply_patch tool rejects it)")
                return
            patch.ops.append(op)
        else:
            patch.problems.append(
                f"apply_patch: line {number}: {clip(header)!r} is not a valid section header "
                "(expected '*** Add File: ', '*** Delete File: ' or '*** Update File: ')")
            return
