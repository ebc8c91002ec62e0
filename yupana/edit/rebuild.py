"""The file as an edit would leave it (the proposed buffer), rebuilt exactly or not at all.

Asked for through :func:`payload.proposed_buffer` by the pre-edit anchor check and by the
checks that read whole files (codegraph verification, blast radius). Edit and MultiEdit
replacements are applied as the tools apply them, Write and Add File give their content,
apply_patch updates go through :func:`patch_chunks.apply_chunks`. Whenever the buffer
cannot be known exactly the answer is None and the reason is in ``edit.problems``.
Hot path: ``os`` only; loaded the first time a buffer is asked for.
"""

from __future__ import annotations

import os

from yupana.edit.model import ADD, DELETE, EDIT, MOVE, MULTI_EDIT, UNSET, UPDATE, WRITE, FileEdit


def proposed_buffer(edit: FileEdit) -> str | None:
    """The file as it would read after ``edit``; None when that cannot be known exactly.

    Edit/MultiEdit apply their replacements to the file on disk as the tools do: each
    ``old_string`` must occur exactly once unless ``replace_all`` (an empty ``old_string``
    creates a missing or empty file); a missing or ambiguous anchor gives None. Write and
    Add File give their content, Delete File "". Patch updates (and the destination of a
    move) are rebuilt with exact context only (see :func:`patch_chunks.apply_chunks`).
    Whenever the answer is None, the reason is appended to ``edit.problems``. The result
    is cached on the edit.
    """
    if edit._buffer is UNSET and edit._source is not None:
        edit._buffer = proposed_buffer(edit._source)  # a move destination: the source's rebuild
        if edit._buffer is None:
            edit.problems += [p for p in edit._source.problems if p not in edit.problems]
    if edit._buffer is UNSET:
        buffer, why = _build(edit)
        if buffer is None:
            why = why or "the file after the edit cannot be reconstructed"
            if why not in edit.problems:
                edit.problems.append(why)
        edit._buffer = buffer
    return edit._buffer  # type: ignore[return-value]


def _build(edit: FileEdit) -> tuple[str | None, str | None]:
    if edit._buffer_error:
        return None, edit._buffer_error
    op = edit.op
    if op in (WRITE, ADD):
        return edit.new_content, None
    if op == DELETE:
        if os.path.isdir(edit.path):
            return None, f"delete of {edit.rel}: it is a directory (apply_patch deletes files only; the patch will fail)"
        if not os.path.isfile(edit.path):
            return None, f"delete of {edit.rel}: no such file (the patch will fail)"
        return "", None
    if op in (UPDATE, MOVE):
        source = edit.move_from or edit.path
        text, unread = _read_text(source)
        if text is None:
            return None, f"update of {_shown(edit, source)}: {unread} (the patch will fail)"
        from yupana.edit.patch_chunks import apply_chunks  # only patch updates pay for it

        buffer, why = apply_chunks(text, edit.chunks)
        return buffer, (f"update of {_shown(edit, source)}: {why}" if why else None)
    if op in (EDIT, MULTI_EDIT):
        return _apply_replacements(edit)
    return None, f"no reconstruction for {op} edits"


def _shown(edit: FileEdit, source: str) -> str:
    return edit.rel if source == edit.path else source


def _apply_replacements(edit: FileEdit) -> tuple[str | None, str | None]:
    pairs = edit.replacements
    text, why = _read_text(edit.path)
    if text is None:
        if not (pairs and pairs[0][0] == "" and why == "no such file"):
            return None, f"{edit.rel}: {why}"
        text = ""  # an empty old_string creates the file
    applied: list[str] = []
    for n, (old, new) in enumerate(pairs):
        label = f"{edit.rel}: old_string" if len(pairs) == 1 else f"{edit.rel}: edits[{n}].old_string"
        if old == new:
            return None, f"{label} equals new_string (the tool rejects the edit)"
        if old == "":
            if text:
                return None, f"{label} is empty but the file is not (the tool rejects the edit)"
            text = new
            applied.append(new)
            continue
        if any(old in previous for previous in applied):
            return None, f"{label} is part of an earlier edit's new_string (the tool rejects the edit)"
        count = text.count(old)
        if count == 0:
            if "\r\n" in text and "\r" not in old and old.replace("\n", "\r\n") in text:
                return None, f"{label} matches only with CRLF line endings (not reconstructed)"
            return None, f"anchor missing: {label} not found"
        if count > 1 and not edit.replace_all[n]:
            return None, f"anchor ambiguous: {label} occurs {count} times and replace_all is false"
        text = text.replace(old, new) if edit.replace_all[n] else text.replace(old, new, 1)
        applied.append(new)
    return text, None


def _read_text(path: str) -> tuple[str | None, str]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None, "no such file"
    except IsADirectoryError:
        return None, "is a directory"
    except (OSError, ValueError) as exc:
        return None, f"unreadable ({type(exc).__name__})"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
