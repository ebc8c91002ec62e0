"""The denied-edit recurrence advisory: is this edit near one the guard denied before?

Hot path, standard library only. The embedding is a deterministic feature-hashing one:
the introduced text's identifier tokens and the character trigrams of each token are
hashed (CRC-32, stable across processes — ``hash()`` is salted) into :data:`DIMS`
buckets with a sign bit, weighted (a token 1.0, a trigram 0.5), and L2-normalised into a
sparse ``{bucket: weight}`` dict. Cosine similarity is the dot product of two such dicts.
No model file, no dependency, a few microseconds per hundred tokens; exact for identical
text, robust to small renames and reformatting, blind to meaning (see docs/recurrence.md).

:data:`MODEL_ID` names the features. It is derived from :data:`FEATURES` (the version and
every parameter that shapes a vector), so changing one changes the id, and a corpus entry
embedded under another id is never compared (its vector means something else).

Similarity never denies: :func:`nearest` only finds the closest prior denial; the hook
shows it as context.
"""

from __future__ import annotations

from itertools import repeat
from operator import mul
from zlib import crc32

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from yupana.edit.model import FileEdit
    from yupana.evaluate import Finding

VERSION = 1
DIMS = 1 << 12
NGRAM = 3
TOKEN_WEIGHT = 1.0
NGRAM_WEIGHT = 0.5
MIN_TOKEN = 2  # shorter tokens (``a``, ``=``) carry no signal
MIN_TOKENS = 6  # an edit of fewer tokens is too small to be "near" anything: never embedded
FEATURES = (VERSION, DIMS, NGRAM, TOKEN_WEIGHT, NGRAM_WEIGHT, MIN_TOKEN, MIN_TOKENS, "crc32", "alnum_")


def model_id(features: tuple[object, ...]) -> str:
    """The id of the embedding that ``features`` (:data:`FEATURES`' shape) define."""
    return f"yupana-fhash-v{features[0]}-" + format(crc32(repr(features).encode()), "08x")


MODEL_ID = model_id(FEATURES)
THRESHOLD = 0.85
KEEP = 128  # features a corpus entry keeps
MAX_TEXT = 16 * 1024  # only the first 16 KiB of the introduced text is embedded (bounded cost)

_SEP = bytes(c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c == 95 or c >= 128) else 32
             for c in range(256))


def tokens(text: str) -> list[str]:
    """Identifier-like tokens (letters, digits, ``_``; non-ASCII kept), lower-cased."""
    raw = text[:MAX_TEXT].encode("utf-8", "replace").translate(_SEP).lower()
    return [t.decode("utf-8", "replace") for t in raw.split() if len(t) >= MIN_TOKEN]


def embed(text: str) -> dict[int, float]:
    """The L2-normalised sparse feature-hashing vector of ``text`` (empty for no tokens)."""
    vec: dict[int, float] = {}
    found = tokens(text)
    if len(found) < MIN_TOKENS:
        return vec
    for tok in found:
        _add(vec, "t:" + tok, TOKEN_WEIGHT)
        padded = f"^{tok}$"
        for i in range(len(padded) - NGRAM + 1):
            _add(vec, "g:" + padded[i:i + NGRAM], NGRAM_WEIGHT)
    norm = sum(w * w for w in vec.values()) ** 0.5
    if not norm:
        return {}
    return {k: round(w / norm, 5) for k, w in vec.items() if w}


def _add(vec: dict[int, float], feature: str, weight: float) -> None:
    h = crc32(feature.encode("utf-8"))
    bucket = h % DIMS
    vec[bucket] = vec.get(bucket, 0.0) + (weight if h & 0x80000000 else -weight)


def stored(vec: dict[int, float], keep: int = KEEP) -> dict[int, float]:
    """The ``keep`` heaviest features of ``vec``, renormalised (what the corpus stores: bounded lines)."""
    if len(vec) <= keep:
        return vec
    kept = dict(sorted(vec.items(), key=lambda kv: -abs(kv[1]))[:keep])
    norm = sum(w * w for w in kept.values()) ** 0.5  # renormalised: a kept vector is still a unit one
    return {k: w / norm for k, w in kept.items()}


def packed(vec: dict[int, float]) -> dict[str, str]:
    """``vec``'s stored features as the corpus keeps them: ``{"k": "buckets", "w": "weights × 10⁴"}``
    (two space-separated strings: one split and one C-level ``map`` each to score)."""
    kept = stored(vec)
    return {"k": " ".join(map(str, kept)), "w": " ".join(str(round(w * 10000)) for w in kept.values())}


def packed_cosine(vec: dict[int, float], entry: dict[str, Any], *, query: "Query | None" = None,
                  floor: float = 0.0) -> float:
    """The cosine of ``vec`` with a packed corpus entry (its weights are stored × 10⁴).

    With ``floor``, an entry that cannot reach it is skipped cheaply (returns 0.0): by
    Cauchy–Schwarz the cosine is at most the norm of ``vec`` over the buckets the two
    share (the entry is a unit vector), found with one set intersection."""
    q = query or Query(vec)
    keys = entry["k"].split()
    if floor > 0.0:
        shared = q.keys.intersection(keys)
        if sum(map(q.squares.__getitem__, shared)) < floor * floor:
            return 0.0
    dot: float = sum(map(mul, map(q.by_str.get, keys, repeat(0.0)), map(int, entry["w"].split())))
    return dot / 10000.0


class Query:
    """``vec`` keyed as the corpus stores buckets (strings), with its squared weights."""

    __slots__ = ("by_str", "squares", "keys")

    def __init__(self, vec: dict[int, float]) -> None:
        self.by_str = {str(k): w for k, w in vec.items()}
        self.squares = {k: w * w for k, w in self.by_str.items()}
        self.keys = set(self.by_str)


def cosine(a: dict[int, float], b: dict[int, float]) -> float:
    """Cosine similarity of two normalised sparse vectors."""
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(k, 0.0) for k, w in a.items())


class Match:
    """The nearest prior denial at or above the threshold."""

    __slots__ = ("entry", "score")

    def __init__(self, entry: dict[str, Any], score: float) -> None:
        self.entry = entry
        self.score = score


def nearest(vec: dict[int, float], entries: list[dict[str, Any]], threshold: float = THRESHOLD) -> Match | None:
    """The packed corpus entry (embedded under :data:`MODEL_ID`) most similar to ``vec``, if ≥ ``threshold``."""
    if not vec:
        return None
    best: Match | None = None
    query = Query(vec)
    for entry in entries:
        if entry.get("model") != MODEL_ID or not isinstance(entry.get("k"), str) or not isinstance(entry.get("w"), str):
            continue
        try:
            score = packed_cosine(vec, entry, query=query, floor=best.score if best else threshold)
        except ValueError:  # a hand-edited line: skipped
            continue
        if score >= threshold and (best is None or score > best.score):
            best = Match(entry, score)
    return best


def advisory_text(match: Match, threshold: float = THRESHOLD, *, own: bool = False, paths: bool = False) -> str:
    """The model-facing context for a match (the prior verdict, never a verdict of its own).

    ``own``: the prior denial was this session's, whose (masked) refusal is quoted; another
    session's is named by its rule only. ``paths``: ``record_paths`` allows naming its file."""
    e = match.entry
    where = f" to {e['path']}" if paths and isinstance(e.get("path"), str) and e["path"] else ""
    said = f": {str(e.get('reason') or '')[:300]}" if own else " in another session"
    return (f"yupana: this edit is near (cosine {match.score:.2f} ≥ {threshold}) an edit{where} denied before by "
            f"`{e.get('rule') or '?'}`{said} — similarity is context only, it decides nothing.")


MASK = "***"
MIN_MASKED = 3  # shorter quotations are not hunted for (they would mangle the refusal)
HEAD = 16  # a quotation is found by its first characters and masked as far as it runs (clipped ones too)


def masked_reason(reason: str, matched: list[str], introduced: str, paths: list[str]) -> str:
    """``reason`` as the corpus keeps it: every quotation of ``matched`` (the texts the rules
    caught, in every form a message quotes them: raw, escaped, clipped) and every backquoted
    span of ``introduced`` masked as ``***``; each of ``paths`` (when ``record_paths`` keeps
    none) as ``<path>``; URL credentials redacted."""
    from yupana import redact

    out = reason
    forms: set[str] = set()
    for text in matched:
        escaped = text.replace("\n", "\\n")
        forms.update((text, escaped, escaped.replace("`", "'"), repr(text)[1:-1]))
    for form in sorted((f for f in forms if len(f) >= MIN_MASKED), key=len, reverse=True):
        out = _mask_runs(out, form)
    out = _mask_quoted(out, introduced)
    for path in sorted((p for p in paths if p), key=len, reverse=True):
        out = out.replace(path, "<path>")
    return redact.redact_text(out)


def matched_texts(findings: list[Finding]) -> list[str]:
    """The texts violated rules caught (a text rule's match, a structural rule's captures, a
    grounded rule's references): what a refusal may quote and the corpus must not keep."""
    out: list[str] = []
    for f in findings:
        extra = f.extra or {}
        found = [extra.get("match"), *(v.get("text") for v in extra.get("violations") or () if isinstance(v, dict)),
                 *(extra.get("tokens") or ())]
        out += [t for t in found if isinstance(t, str) and t]
    return out


def edit_paths(edits: list[FileEdit]) -> list[str]:
    """Every path the files of a call go by (as given, real, relative, a move's other end)."""
    return [p for e in edits for p in (e.path, e.real_path, e.rel, e.real_rel, e.move_to, e.move_from) if p]


def _mask_runs(text: str, form: str) -> str:
    """``text`` with every run that starts like ``form`` masked as far as it follows ``form``."""
    head = form[:HEAD]
    at = text.find(head)
    if at < 0:
        return text
    out, last = [], 0
    while at >= 0:
        end = at + len(head)
        while end < len(text) and end - at < len(form) and text[end] == form[end - at]:
            end += 1
        out += [text[last:at], MASK]
        last = end
        at = text.find(head, end)
    out.append(text[last:])
    return "".join(out)


def _mask_quoted(text: str, introduced: str) -> str:
    """``text`` with each backquoted span that the edit's own text holds masked (a rule that
    quoted what it caught in a way :func:`masked_reason` was not told of)."""
    parts = text.split("`")
    for i in range(1, len(parts) - 1, 2):
        span = parts[i].rstrip("…")
        if len(span) >= MIN_MASKED and (span in introduced or span.replace("\\n", "\n") in introduced):
            parts[i] = MASK
    return "`".join(parts)


class Advice:
    """What the advisory found: its record (``sealed``), the model-facing ``message`` and the
    corpus ``entry`` to keep — each None when there is none. Nothing here is a decision."""

    __slots__ = ("sealed", "message", "entry")

    def __init__(self, sealed: dict[str, Any] | None = None, message: str | None = None,
                 entry: dict[str, Any] | None = None) -> None:
        self.sealed = sealed
        self.message = message
        self.entry = entry


def consult(decision: str, reasons: list[str], texts: list[str], *, corpus: str | None, now: int, denied_by: str,
            record_paths: str, paths: list[str], rel: str, path: str, project: str, session: str | None,
            matched: list[str]) -> Advice:
    """The hook's stage: the nearest prior denial of this ``project`` (the message to show,
    before a refusal's own text or as a plain notice on an allow), and, when the edit is
    denied (``decision``), the corpus entry to keep.

    This function reads and returns; it changes no outcome and writes nothing — the hook
    applies the message and writes the record and the entry through its effects, so
    nothing the advisory does (or fails to do) can change the decision. ``paths`` are every
    path the call's files go by (scrubbed from the kept refusal unless ``record_paths``
    keeps paths); ``matched`` the texts the rules caught (masked in it).
    """
    from yupana.digests import sha1_hex
    from yupana.state import denials

    text = "\n".join(t for t in texts if t)
    vec = embed(text)
    if not vec or not corpus:
        return Advice()
    sid = sha1_hex(session)[:16] if session else None
    entries, mark = denials.load(corpus, now, project)
    match = nearest(vec, entries)
    advice = Advice()
    keeps_paths = record_paths in ("relative", "absolute")
    if match is not None:
        sealed = {"cosine": round(match.score, 4), "threshold": THRESHOLD, "model": MODEL_ID, "corpus": mark,
                  "prior_at": match.entry.get("at"), "prior_rule": match.entry.get("rule"),
                  "decision": decision, "session": session}
        if keeps_paths and match.entry.get("path"):
            sealed["prior_path"] = match.entry["path"]
        advice.sealed = sealed
        advice.message = advisory_text(match, own=sid is not None and match.entry.get("sid") == sid, paths=keeps_paths)
    if decision != "deny":
        return advice
    reason = masked_reason(" ".join(reasons), matched, text, [] if keeps_paths else paths)
    entry = {"at": now, "project": project, "sid": sid, "rule": denied_by or "?", "reason": reason, "model": MODEL_ID,
             **packed(vec)}
    if keeps_paths:
        entry["path"] = rel if record_paths == "relative" else path
    advice.entry = entry
    return advice
