"""Governed text rules (``aegis:TextRule``) over the text an edit introduces.

Semantics (interop reference §1.2, with combined exemptions per docs/vocabulary.md):

* only the introduced text is searched, never unchanged context, in any file;
* a rule's prefilters (required literals, required run; precomputed on the cold path) are
  checked first, so a regex is compiled, and ``re2`` imported, only when some rule can
  actually match; the hot twin's literal index finds those rules without reading the others;
* the exemption (``exempt_path_regex``, the alternation of the rule's own and its linked
  selectors' regexes) is searched, unanchored, against the path relative to the file's git
  top-level; a match means the rule does not apply. A malformed exemption exempts nothing:
  the rule still applies and the error is reported;
* a malformed pattern yields no violations and an error; the hook turns any error into a
  loud ``projection-rules`` fail-open;
* a rule with required keywords (``keywords``) runs only when the introduced text contains
  one, case-insensitively; a match its content checks allow (entropy below ``min_entropy``,
  an allowlist regex or stopword: :mod:`yupana.evaluate.text_precision`) does not fire;
* one violation per distinct matched substring, in first-seen order;
* the rule's rollout stage (``stage``, ``aegis:rolloutStage``) rides on each finding's
  ``extra["stage"]`` (``shadow`` or ``advise``; None = enforce): the hook shows a shadow
  finding to nobody and lets an advise one only warn (:func:`yupana.evaluate.stage_of`);
* tier × exposure: ``block`` + public blocks; ``block`` + internal is downgraded to a
  warning that says so; ``block`` + unknown warns and says the exposure is unknown;
  ``warn`` always warns. Exposure is asked for (through ``exposure_of``) only when a
  ``block`` rule fired, and at most once per edit (the caller caches the answer).

Errors come back as :class:`Finding` objects with outcome ``unknown`` and
``extra["error"]`` set, so the evaluator keeps the one-signature interface.

Bounded on huge inputs: for an introduced text over 64 KB the deadline is checked between
rules and, inside a rule, between windows — 1 MB windows of the case fold, 256 KB windows of
each literal prefilter search and of the regex scan (:func:`_windowed`, which finds what a
whole scan finds); the rules left over are one UNKNOWN ``text-rules`` finding. A text of at
most :data:`BOUNDED_CHARS` is a check of bounded, small cost (:func:`bounded`): the hook runs
it whole whatever the wall clock says, so CPU contention never cuts it (issue 25 §3).
"""

from __future__ import annotations

import time

from yupana.evaluate import UNKNOWN, Finding
from yupana.evaluate.text_precision import allowed, has_precision, keywords_absent, secret_of
from yupana.regex.prefilter import CHECK_ABOVE_CHARS, SCAN_CHUNK, Admission

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any  # a compiled re2 pattern (google-re2 ships no types)

    from yupana.state.hot_view import TextRules

    Rule = dict[str, Any]
    RuleSet = list[Rule] | TextRules
    ExposureOf = Callable[[], tuple[str, str | None, str]]  # (exposure, why, repo)

MAX_SHOWN = 3  # matched substrings quoted per rule in a message
SCAN_OVERLAP = 64 * 1024  # how far past its chunk a window reads, so a match straddling the boundary is whole

# Introduced text up to this many characters is scanned whole, never cut by the deadline: its
# cost is bounded by the text and the index, not by how long the process waited for a CPU
# (benchmarks/contention.py measures it). Above it the deadline is checked between windows.
BOUNDED_CHARS = CHECK_ABOVE_CHARS

_compiled: dict[str, Any] = {}


def bounded(introduced: str) -> bool:
    """Whether the text-rule pass over ``introduced`` is of bounded, small cost: the hook
    runs it to completion whatever the deadline says."""
    return len(introduced) <= BOUNDED_CHARS


def _compile(pattern: str) -> Any:
    """Compile with RE2 semantics (imports re2 on first use); raises ValueError."""
    found = _compiled.get(pattern)
    if found is not None:
        return found
    from yupana.regex import re2_binding

    try:
        compiled = re2_binding.compile(pattern)  # RE2's own log line would leak to stderr
    except Exception as exc:  # noqa: BLE001 - re2.error, TypeError, …: all mean "does not compile"
        raise ValueError(str(exc) or type(exc).__name__) from None
    _compiled[pattern] = compiled
    return compiled


def candidates(rules: RuleSet, introduced: str, deadline_at: float | None = None) -> tuple[list[Rule], int]:
    """The rules whose prefilters (required literals, required run) admit ``introduced`` —
    no regex work at all — and how many rules were not looked at because ``deadline_at``
    (time.monotonic) passed.

    ``rules`` is a list of cache entries (each tested in turn), or an indexed set with its
    own ``candidates`` (the hot twin's :class:`yupana.state.hot_view.TextRules`: only the
    rules the literal index returns are read at all). On a text over
    :data:`CHECK_ABOVE_CHARS` with a deadline, the case fold and each literal search go
    window by window (:class:`yupana.regex.prefilter.Admission`)."""
    if not introduced or not rules:
        return [], 0
    if not isinstance(rules, list):
        return rules.candidates(introduced, deadline_at)
    return Admission(introduced, deadline_at).select(rules, len(rules))


def evaluate(rules: RuleSet, introduced: str, path_rel: str, exposure_of: ExposureOf,
             deadline_at: float | None = None, notes: dict[str, Any] | None = None) -> list[Finding]:
    """Violations (and compile errors) of ``rules`` in ``introduced``.

    ``path_rel`` is the edited file relative to its project root (absolute outside it); ``exposure_of()``
    returns ``(exposure, reason, repo)``: exposure ``public|internal|unknown``, why it is
    unknown (when known: where it came from), and the repository's name for messages.
    When ``deadline_at`` passes (checked per rule, for large texts), the rules not
    evaluated are one UNKNOWN finding ``text-rules`` with ``extra["deadline"]`` = how many.

    ``notes`` (``yupana explain`` only) receives ``admitted`` — the names the literal
    prefilter let through — and ``exemptions``: for each admitted rule with an exemption,
    ``{rule, iri, regex, path, exempted}`` and, when exempted, what the pattern would have
    matched (``would_match``).
    """
    out: list[Finding] = []
    admitted, skipped = candidates(rules, introduced, deadline_at)
    if notes is not None:
        notes["admitted"] = [str(r.get("name") or r.get("iri") or "?") for r in admitted]
        notes["exemptions"] = []
    check = deadline_at is not None and len(introduced) > CHECK_ABOVE_CHARS
    folded: list[str] = []

    def fold() -> str:  # the introduced text case-folded, once per edit and only if a rule has keywords
        if not folded:
            folded.append(introduced.casefold())
        return folded[0]

    for n, rule in enumerate(admitted):
        if check and deadline_at is not None and time.monotonic() > deadline_at:
            skipped += len(admitted) - n
            break
        name = str(rule.get("name") or rule.get("iri") or "?")
        source = rule.get("iri") or name
        if keywords_absent(rule, fold):
            if notes is not None:
                notes.setdefault("no_keyword", []).append(name)
            continue
        exempt = rule.get("exempt_path_regex")
        if exempt:
            try:
                hit = _compile(exempt).search(path_rel)
                if notes is not None:
                    notes["exemptions"].append(_exemption_note(rule, name, exempt, path_rel, introduced, hit))
                if hit:
                    continue
            except ValueError as exc:
                out.append(_error(name, source, path_rel,
                                  f"text rule `{name}`: exemption regex {exempt!r} does not compile ({exc}); "
                                  "the rule still applies everywhere"))
        pattern = rule.get("pattern") or ""
        try:
            regex = _compile(pattern)
        except ValueError as exc:
            out.append(_error(name, source, path_rel, f"text rule `{name}`: pattern {pattern!r} does not compile ({exc})"))
            continue
        keep = None
        if has_precision(rule):
            keep, broken = _content_gate(rule, name, notes)
            if broken:
                out.append(_error(name, source, path_rel, broken))
        found, complete = _matches(regex, introduced, deadline_at if check else None, keep)
        if not complete:
            skipped += len(admitted) - n
            break
        if not found:
            continue
        blocking, verdict = _severity(rule.get("tier"), exposure_of)
        stage = rule.get("stage")
        if stage == "advise" and blocking:
            verdict += "; rollout stage advise, so only a warning"
        label = rule.get("label") or name
        rationale = rule.get("rationale")
        tail = f", which text rule `{label}` forbids ({verdict})" + (f": {str(rationale).rstrip(' .')}" if rationale else "")
        for text in found:
            out.append(Finding(name, "text", f"introduces `{_clip(text)}`{tail}", blocking=blocking, source=source,
                               rel=path_rel, extra={"match": text, "tail": tail, "tier": rule.get("tier"),
                                                    "identifier_class": rule.get("class"),
                                                    "stage": stage if stage in ("shadow", "advise") else None}))
    if skipped:
        out.append(Finding("text-rules", "text", f"{skipped} text rule(s) not evaluated before the deadline",
                           outcome=UNKNOWN, rel=path_rel, extra={"deadline": skipped}))
    return out


def _matches(regex: Any, text: str, deadline_at: float | None,
             keep: Callable[[Any], bool] | None = None) -> tuple[list[str], bool]:
    """Distinct matched substrings of ``regex`` in ``text`` (first-seen order) that ``keep``
    (the rule's content checks, when it has any) keeps, and whether the scan finished: without
    a deadline, or on a text of one window, one whole ``finditer``; else window by window."""
    found: list[str] = []
    # a text of one window is one finditer (RE2's wrapper encodes the whole text and converts
    # offsets on every search call: a search per match would pay that per match)
    matches = regex.finditer(text) if deadline_at is None or len(text) <= SCAN_CHUNK \
        else _windowed(regex, text, deadline_at)
    for match in matches:
        if match is None:
            return found, False
        if match.group(0) and match.group(0) not in found and (keep is None or keep(match)):
            found.append(match.group(0))
    return found, True


def _content_gate(rule: Rule, name: str, notes: dict[str, Any] | None) -> tuple[Callable[[Any], bool], str | None]:
    """``keep(match)`` for a rule with precision properties (entropy, allowlists), and the
    error when its allowlist regex does not compile (then only its other checks apply)."""
    broken: str | None = None
    allow = rule.get("allow_match_regex")
    if allow:
        try:
            _compile(allow)
        except ValueError as exc:
            broken = (f"text rule `{name}`: allowlist regex {allow!r} does not compile ({exc}); "
                      "it allows nothing")
            rule = dict(rule, allow_match_regex=None)

    def keep(match: Any) -> bool:
        why = allowed(rule, match, _compile)
        if why is not None and notes is not None:
            notes.setdefault("allowed", []).append({"rule": name, "match": match.group(0), "why": why,
                                                    "secret": secret_of(rule, match)})
        return why is None

    return keep, broken


def _windowed(regex: Any, text: str, deadline_at: float) -> Iterator[Any]:
    """The matches a whole ``regex.finditer(text)`` yields, found ``SCAN_CHUNK`` characters at
    a time so the deadline is checked between windows; yields None when it runs out.

    Each search sees the whole string as context (RE2's ``pos``/``endpos`` keep ``^``, ``$``
    and ``\\b`` true to the full text) but stops at ``endpos``: a chunk plus ``SCAN_OVERLAP``.
    A match is taken only if it starts inside the chunk; one that reaches the window's end
    may have been cut short by it, so the window grows and the search is repeated from the
    same place (leftmost-first: a longer window may reveal an earlier, longer match). The
    one thing a window cannot see is a match longer than the overlap none of whose prefixes
    matches — a pattern matching more than 64 KB of introduced text at once.
    """
    n = len(text)
    at = 0
    while at <= n:
        if time.monotonic() > deadline_at:
            yield None
            return
        end = min(at + SCAN_CHUNK, n)
        stop = min(end + SCAN_OVERLAP, n)
        match = regex.search(text, at, stop)
        while match is not None and match.end() == stop < n:  # maybe cut short by the window
            if time.monotonic() > deadline_at:
                yield None
                return
            stop = min(n, stop + max(SCAN_OVERLAP, stop - at))
            match = regex.search(text, at, stop)
        if match is None or (match.start() >= end and end < n):
            at = end if end < n else n + 1  # nothing starts in this chunk: the next one
            continue
        yield match
        at = match.end() if match.end() > match.start() else match.start() + 1


def _exemption_note(rule: Rule, name: str, regex: str, path_rel: str, introduced: str, hit: Any) -> dict[str, Any]:
    note = {"rule": name, "iri": rule.get("iri"), "regex": regex, "path": path_rel, "exempted": bool(hit)}
    if hit:
        note["exempted_by"] = hit.group(0)
        try:
            note["would_match"] = list(dict.fromkeys(m.group(0) for m in _compile(rule.get("pattern") or "")
                                                     .finditer(introduced)))[:MAX_SHOWN]
        except ValueError as exc:
            note["would_match_error"] = str(exc)
    return note


def _severity(tier: str | None, exposure_of: ExposureOf) -> tuple[bool, str]:
    if tier != "block":
        return False, "tier warn: advisory"
    # Where the exposure came from, or why no source knows it, is the operator's (the governed
    # record's exposure_source / exposure_reason, the operator's advisory): never the model's.
    exposure, _reason, repo = exposure_of()
    if exposure == "public":
        return True, f"tier block; repo `{repo}` is public"
    if exposure == "internal":
        return False, f"tier block, downgraded to a warning because repo `{repo}` is internal"
    return False, f"tier block, only a warning because the exposure of repo `{repo}` is unknown"


def _error(name: str, source: str, rel: str, message: str) -> Finding:
    return Finding(name, "text", message, outcome=UNKNOWN, source=source, rel=rel, extra={"error": message})


def _clip(text: str, limit: int = 80) -> str:
    text = text.replace("\n", "\\n").replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summarize(findings: list[Finding]) -> list[str]:
    """One message line per rule (several matches of one rule share a line)."""
    by_rule: dict[str, list[Finding]] = {}
    for f in findings:
        if f.outcome != UNKNOWN:
            by_rule.setdefault(f.id, []).append(f)
    lines = []
    for group in by_rule.values():
        first = group[0]
        if len(group) == 1:
            lines.append(first.message)
            continue
        shown = ", ".join(f"`{_clip(f.extra['match'])}`" for f in group[:MAX_SHOWN])
        more = f" and {len(group) - MAX_SHOWN} more" if len(group) > MAX_SHOWN else ""
        lines.append(f"introduces {shown}{more}{first.extra['tail']}")
    return lines
