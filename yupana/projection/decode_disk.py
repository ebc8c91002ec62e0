"""Disk-impact history: the last 100 samples per ``signature|filesystem`` key. Cold path.

Observations (docs/vocabulary.md, "Disk-impact observations") are written by yupana's
pre-bash hook and read back here. For each key the most recent 100 samples (by
``aegis:observedAt``) give ``n``, the nearest-rank p90 of their signed ``aegis:deltaBytes``
and ``latest`` (the newest sample's ``aegis:observedAt``, unix seconds).

Reading: the distinct keys first, then observations newest first, page by page, until
every key has its 100 or the observations run out — so a long history costs pages, never a
truncated answer. Paging newest first means an observation written during the read only
repeats a row (de-duplicated), it never hides one.

This plane is non-fatal: a failed read or a malformed observation (the error names its
IRI and property) makes the whole history ``None`` (UNKNOWN) with a notice; the governed
planes are unaffected. ``{}`` means the store holds no observations.
"""

from __future__ import annotations

from typing import Any

from yupana.endpoint.base import Term
from yupana.projection.errors import ProjectionError
from yupana.projection.read import Reader

SAMPLES = 100


def fetch_disk_history(reader: Reader) -> dict[str, dict[str, Any]]:
    """``{"<signature>|<fs>": {"n", "p90", "latest"}}`` for every key with samples."""
    keys = {(r["sig"].value, r["fs"].value) for r in reader.rows("disk_keys", "disk_history") if "sig" in r and "fs" in r}
    if not keys:
        return {}
    seen: dict[str, tuple[Any, ...]] = {}
    samples: dict[tuple[str, str], list[tuple[int, int]]] = {k: [] for k in keys}
    full: set[tuple[str, str]] = set()

    def take(page: list[dict[str, Term]]) -> bool:
        for row in page:
            if not all(v in row for v in ("o", "sig", "fs", "delta", "at")):
                continue
            obs = row["o"].value
            sample = (row["sig"].value, row["fs"].value, _integer(obs, "deltaBytes", row["delta"]),
                      _integer(obs, "observedAt", row["at"], signed=False))
            if obs in seen:
                if seen[obs] != sample:
                    raise ProjectionError(obs, "aegis:deltaBytes", "the observation has two different values for "
                                          "a single-valued property (signature, filesystem, delta or time)")
                continue
            seen[obs] = sample
            key = sample[:2]
            bucket = samples.setdefault(key, [])
            if len(bucket) < SAMPLES:
                bucket.append((sample[3], sample[2]))
                if len(bucket) == SAMPLES:
                    full.add(key)
        return len(full) >= len(samples)

    reader.rows("disk_history", "disk_history", stop=take)
    out: dict[str, dict[str, Any]] = {}
    for (sig, fs), bucket in sorted(samples.items()):
        if bucket:
            out[f"{sig}|{fs}"] = {"n": len(bucket), "p90": p90([d for _, d in bucket]),
                                  "latest": max(at for at, _ in bucket)}
    return out


def p90(values: list[int]) -> int:
    """Nearest-rank 90th percentile: the ceil(0.9 n)-th smallest value."""
    if not values:
        raise ValueError("p90 of no values")
    ordered = sorted(values)
    rank = -(-9 * len(ordered) // 10)
    return ordered[rank - 1]


def _integer(obs: str, prop: str, term: Term, signed: bool = True) -> int:
    text = term.value.strip()
    digits = text[1:] if signed and text[:1] in "+-" else text
    if not term.is_literal or not digits.isascii() or not digits.isdigit():
        raise ProjectionError(obs, f"aegis:{prop}", f"{term.value!r} is not {'an' if signed else 'a non-negative'} integer")
    return int(text)
