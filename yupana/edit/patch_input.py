"""An apply_patch tool call read into FileEdits (:mod:`payload`). Loaded for Codex calls only.

:func:`read` finds the patch text in ``tool_input`` (``command``, tolerating ``input`` /
``patch``, a bare string and Codex's argv forms), reads it with :mod:`apply_patch`, and
turns each file section into a FileEdit: Add and Update carry their introduced lines and
chunks, a ``cd DIR &&`` wrapper moves the base directory, and a move adds a second edit
for the destination that shares the source's rebuild. Every tolerance is noted in
``inv.problems``. Hot path: standard library ``os`` and our own modules.
"""

from __future__ import annotations

import os

from yupana.edit.model import ADD, MOVE, PATCH_TOOLS, UPDATE, Invocation, new_edit, normpath


def read(tool_input: object, inv: Invocation) -> None:
    """Read an apply_patch call's ``tool_input`` into ``inv.patch`` and ``inv.edits`` (problems noted)."""
    text = _patch_text(tool_input, inv)
    if text is None:
        return
    from yupana.edit import apply_patch  # only a readable patch text pays for the grammar

    patch = apply_patch.parse(text)
    inv.patch = patch
    inv.problems += patch.problems
    base = inv.cwd
    if patch.workdir:
        base = normpath(os.path.join(inv.cwd, patch.workdir))
    for op in patch.ops:
        if not op.path or "\x00" in op.path:
            inv.problems.append(f"apply_patch: line {op.line}: unusable path {op.path!r}")
            continue
        edit = new_edit(op.op, op.path, inv, base)
        if op.op == ADD:
            edit.new_content = op.content
            edit.introduced = edit.new_content or ""
        elif op.op == UPDATE:
            edit.chunks = op.chunks
            edit.replacements = [("\n".join(c.old_lines), "\n".join(c.new_lines)) for c in op.chunks]
            edit.introduced = "\n".join(op.added)
        inv.edits.append(edit)
        if op.op == UPDATE and op.move_to is not None:
            if "\x00" in op.move_to:
                inv.problems.append(f"apply_patch: line {op.line}: unusable Move to path")
                continue
            dest = new_edit(MOVE, op.move_to, inv, base)
            edit.move_to = dest.path
            dest.move_from = edit.path
            dest._source = edit
            dest.chunks = edit.chunks
            dest.replacements = edit.replacements
            # The added text lands at the destination: path-gated rules must see it there.
            dest.introduced = edit.introduced
            inv.edits.append(dest)


def _patch_text(tool_input: object, inv: Invocation) -> str | None:
    """The patch text of an apply_patch call: ``tool_input.command`` (tolerating variants)."""
    if isinstance(tool_input, str):
        inv.problems.append("payload: apply_patch tool_input is a bare string; read as the patch")
        return tool_input
    if not isinstance(tool_input, dict):
        inv.problems.append(f"payload: apply_patch without a readable tool_input ({type(tool_input).__name__})")
        return None
    for key in ("command", "input", "patch"):
        value = tool_input.get(key)
        if value is None:
            continue
        if key != "command":
            inv.problems.append(f"payload: apply_patch patch read from tool_input.{key} instead of command")
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return _patch_from_argv(value, key, inv)
        inv.problems.append(f"payload: apply_patch tool_input.{key} is not text ({type(value).__name__})")
        return None
    inv.problems.append("payload: apply_patch without tool_input.command; nothing to evaluate")
    return None


def _patch_from_argv(argv: list[str], key: str, inv: Invocation) -> str | None:
    """``["apply_patch", PATCH]`` or ``[shell, "-c"|"-lc", SCRIPT]``, as Codex's shell tool passes them."""
    inv.problems.append(f"payload: apply_patch tool_input.{key} is an argv list; read as a command")
    if len(argv) == 2 and argv[0] in PATCH_TOOLS:
        return argv[1]
    if len(argv) == 3 and argv[1] in ("-c", "-lc") and os.path.basename(argv[0]) in ("bash", "sh", "zsh"):
        return argv[2]
    if len(argv) == 1:
        return argv[0]
    inv.problems.append(f"payload: apply_patch argv form {argv[0][:40]!r} … is not supported")
    return None
