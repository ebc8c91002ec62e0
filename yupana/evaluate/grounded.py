"""Grounded predicates: references in introduced text must (not) resolve to known work items.

Semantics (interop reference §1.4):

* tokens are the maximal runs of ``[A-Za-z0-9_-]`` in the introduced text;
* a token *grounds* when the grounding id set holds it exactly (case-sensitive);
* a token is *unresolvable* (a fabricated reference) when it does not ground but has a
  ``-``, a non-empty suffix after its last ``-``, and a prefix (before that ``-``) in the
  prefix set derived from the ids;
* ``must-not-ground``: a grounded token is a violation (id = rule name); an unresolvable
  one is a separate violation ``<name>#fabricated-reference``;
* ``must-ground``: an unresolvable token is the fabricated violation; no reference at all
  is a violation;
* a missing set (``None``) leaves every grounded rule UNKNOWN, with one "not evaluated"
  line naming them; an empty set is a real answer;
* blocking ignores exposure: tier ``block`` blocks under enforce, ``warn`` never does.

Standard library only, and no regex: tokenising is ``str.translate`` + ``split``. Bounded
on huge inputs (:func:`scan`): 64 KB windows, the deadline checked between them; a cut
leaves every grounded rule of the edit UNKNOWN.
"""

from __future__ import annotations

import time

from yupana.evaluate import UNKNOWN, Finding

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# Every ASCII character that is not a token character becomes a space.
_SEPARATE = {c: " " for c in range(128) if chr(c) not in _TOKEN_CHARS}
MAX_SHOWN = 5
WINDOW = 64 * 1024  # characters tokenised and classified between deadline checks (~1 ms)


def tokens(text: str) -> list[str]:
    """Distinct maximal ``[A-Za-z0-9_-]`` runs of ``text``, in first-seen order."""
    seen: dict[str, None] = {}
    _collect(text.translate(_SEPARATE), seen)
    return list(seen)


def _collect(separated: str, seen: dict[str, Any]) -> list[str]:
    """Add the tokens of ``separated`` (already translated) to ``seen``; return the new ones."""
    new = []
    for piece in separated.split():
        if piece.isascii():
            if piece not in seen:
                seen[piece] = None
                new.append(piece)
            continue
        run: list[str] = []
        for ch in piece + " ":
            if ch in _TOKEN_CHARS:
                run.append(ch)
            elif run:
                tok = "".join(run)
                if tok not in seen:
                    seen[tok] = None
                    new.append(tok)
                run = []
    return new


def classify(toks: list[str], ids: set[str], prefixes: set[str]) -> tuple[list[str], list[str]]:
    """(grounded, unresolvable) tokens, each in text order."""
    grounded, unresolvable = [], []
    for tok in toks:
        if tok in ids:
            grounded.append(tok)
            continue
        head, dash, tail = tok.rpartition("-")
        if dash and tail and head in prefixes:
            unresolvable.append(tok)
    return grounded, unresolvable


def scan(text: str, ids: set[str], prefixes: set[str],
         deadline_at: float | None = None) -> tuple[list[str], list[str]] | None:
    """``classify(tokens(text), ids, prefixes)``; with ``deadline_at``, a text over
    :data:`WINDOW` characters is tokenised and classified a window at a time (each window
    ends at an ASCII separator, so no token is split) with the deadline checked between
    windows — None once it has passed."""
    if deadline_at is None or len(text) <= WINDOW:
        return classify(tokens(text), ids, prefixes)
    seen: dict[str, None] = {}
    grounded, unresolvable = [], []
    at, n = 0, len(text)
    size = WINDOW
    while at < n:
        if time.monotonic() > deadline_at:
            return None
        end = min(at + size, n)
        separated = text[at:end].translate(_SEPARATE)
        if end < n:
            cut = separated.rfind(" ")
            if cut < 0:  # one token longer than the window (or no ASCII separator): read on
                size *= 2
                continue
            separated, end = separated[:cut], at + cut + 1
        found = classify(_collect(separated, seen), ids, prefixes)
        grounded += found[0]
        unresolvable += found[1]
        at, size = end, WINDOW
    return grounded, unresolvable


def may_reference(text: str, needles: list[str]) -> bool:
    """False only when no token of ``text`` can ground or be unresolvable: a grounding token is
    an id, so it holds its prefix and dash (or is a dashless id, a needle itself); an
    unresolvable one holds a known prefix and a dash. ``needles`` are derived on the cold path
    (:func:`yupana.state.hot_derive.grounding_needles`); a few C searches instead of tokenising
    a 200 KB edit."""
    return any(n in text for n in needles)


def evaluate(rules: list[dict[str, Any]], grounding: dict[str, Any] | None, introduced: str, rel: str | None = None,
             deadline_at: float | None = None) -> list[Finding]:
    """Findings of the grounded ``rules`` on ``introduced`` against ``grounding``; when
    ``deadline_at`` (time.monotonic) passes mid-scan, every rule is UNKNOWN with
    ``extra["deadline"]`` (a partial scan proves nothing either way)."""
    if not rules or not introduced:
        return []
    if grounding is None:
        names = ", ".join(f"`{r.get('name')}`" for r in rules)
        message = (f"grounded rules not evaluated ({names}): the work-item id set is unknown "
                   "(the last refresh could not read it); these references are unchecked")
        return [Finding(str(r.get("name")), "grounded", message, outcome=UNKNOWN, source=r.get("iri"), rel=rel)
                for r in rules]
    needles = grounding.get("_needles")
    if needles is not None and not may_reference(introduced, needles):
        found: tuple[list[str], list[str]] | None = ([], [])  # no token can ground or be unresolvable
    else:
        found = scan(introduced, set(grounding.get("ids") or ()), set(grounding.get("prefixes") or ()), deadline_at)
    if found is None:
        return [Finding(str(r.get("name")), "grounded", f"grounded rule `{r.get('name')}` not evaluated before the "
                        "deadline", outcome=UNKNOWN, source=r.get("iri"), rel=rel, extra={"deadline": True})
                for r in rules]
    grounded, unresolvable = found
    out: list[Finding] = []
    for rule in rules:
        name = str(rule.get("name"))
        blocking = rule.get("tier") == "block"
        tier = "tier block" if blocking else "advisory"
        label = rule.get("label") or name
        why = f": {str(rule['rationale']).rstrip(' .')}" if rule.get("rationale") else ""
        source = rule.get("iri")
        if unresolvable:
            out.append(Finding(f"{name}#fabricated-reference", "grounded",
                               f"references {_show(unresolvable)}, which name no known work item — "
                               f"fabricated references under grounded rule `{label}` ({tier}){why}. "
                               "Use an id that exists, or drop the reference",
                               blocking=blocking, source=source, rel=rel, extra={"tokens": unresolvable}))
        if rule.get("match_type") == "must-not-ground" and grounded:
            out.append(Finding(name, "grounded",
                               f"references {_show(grounded)}, which grounded rule `{label}` forbids here "
                               f"({tier}){why}. Remove the work-item reference",
                               blocking=blocking, source=source, rel=rel, extra={"tokens": grounded}))
        elif rule.get("match_type") == "must-ground" and not grounded and not unresolvable:
            out.append(Finding(name, "grounded",
                               f"references no known work item, which grounded rule `{label}` requires "
                               f"({tier}){why}. Cite the id of the work item this change implements",
                               blocking=blocking, source=source, rel=rel))
    return out


def _show(toks: list[str]) -> str:
    shown = ", ".join(f"`{t}`" for t in toks[:MAX_SHOWN])
    return shown + (f" and {len(toks) - MAX_SHOWN} more" if len(toks) > MAX_SHOWN else "")
