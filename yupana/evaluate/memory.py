"""Governed host-memory policies: hold memory-heavy commands while the host is short of memory.

A policy (cache ``memory_policies``, docs/vocabulary.md "Host-memory policies") carries an
RE2 ``command_regex`` and a floor ``threshold_gib`` in MemAvailable GiB. The regex is
searched in the **argv of each simple command** the shell would run (wrappers and
``VAR=`` prefixes removed, ``sh -c`` payloads read recursively; see :mod:`yupana.shell`) —
the Selector's evidence is ``argv`` — so heredoc bodies and the data of other commands are
never matched. When the line cannot be read at all (a syntax error), the raw line is the
evidence and a match can only advise, never deny: an uncertain reading must not block.

A matching command is checked against MemAvailable and MemTotal from ``/proc/meminfo``
(``$YUPANA_MEMINFO_PATH`` overrides the path, for tests). MemFree is never substituted:
a missing field is an unreadable signal. Outcomes, as :class:`~yupana.evaluate.Finding`:

* ``unsatisfied`` — available below the floor; ``blocking`` follows the policy's class
  (then effect), and the hook applies the mode as a ceiling;
* ``satisfied`` — at or above the floor;
* ``unknown`` with ``extra["error"]`` and ``extra["fail"]`` (``memory-regex``,
  ``memory-signal``, ``memory-threshold``) — the check could not run: the hook fails open
  loudly. A floor above MemTotal can never be met on this host, so it is a
  misconfiguration, not a verdict.

Standard library only; ``re2`` is imported only when a policy's regex must run.
"""

from __future__ import annotations

import os

from yupana.regex import prefilter as regex_prefilter
from yupana.evaluate import SATISFIED, UNKNOWN, UNSATISFIED, Finding, policy_blocks

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

MEMINFO = "/proc/meminfo"
GIB_KB = 1024 * 1024
_compiled: dict[str, object] = {}


def meminfo_path() -> str:
    """``$YUPANA_MEMINFO_PATH`` or /proc/meminfo."""
    return os.environ.get("YUPANA_MEMINFO_PATH") or MEMINFO


def read_meminfo(path: str | None = None) -> tuple[int, int] | str:
    """(MemAvailable kB, MemTotal kB), or why the signal is unreadable."""
    target = path or meminfo_path()
    try:
        with open(target, "rb") as fh:
            text = fh.read(1 << 16).decode("ascii", "replace")
    except OSError as exc:
        return f"cannot read {target}: {exc.strerror or exc}"
    found: dict[str, int] = {}
    for line in text.split("\n"):
        name, colon, rest = line.partition(":")
        if not colon or name not in ("MemAvailable", "MemTotal"):
            continue
        parts = rest.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1] == "kB":
            found[name] = int(parts[0])
        else:
            return f"{target}: unreadable {name} line {line.strip()!r}"
    for name in ("MemAvailable", "MemTotal"):
        if name not in found:
            return f"{target} has no {name} (MemFree is not a substitute)"
    if found["MemTotal"] <= 0:
        return f"{target} reports MemTotal 0"
    return found["MemAvailable"], found["MemTotal"]


def evaluate(policies: list[dict[str, Any]], evidence: list[str], *, certain: bool = True,
             meminfo: str | None = None) -> list[Finding]:
    """Findings for every policy whose regex matches ``evidence`` (one string per command).

    Policies that match nothing produce no finding. ``certain=False`` (the line was not
    read) keeps any violation non-blocking.
    """
    matched: list[dict[str, Any]] = []
    out: list[Finding] = []
    folded: list[str] | None = None
    for pol in policies:
        name = str(pol.get("name") or pol.get("iri") or "memory-policy")
        pattern = pol.get("command_regex")
        if not isinstance(pattern, str) or not pattern:
            out.append(_unknown(pol, name, "memory-regex", f"policy `{name}` has no command regex"))
            continue
        pf = pol.get("_prefilter")  # literal prefilter from the hot cache twin, when present
        if pf is not None:
            if pf[1] and folded is None:
                folded = [t.casefold() for t in evidence]
            if not any(regex_prefilter.may_match(pf, t, folded[k] if pf[1] and folded else None)
                       for k, t in enumerate(evidence)):
                continue
        rx = _compile(pattern)
        if isinstance(rx, str):
            out.append(_unknown(pol, name, "memory-regex", f"policy `{name}`: its command regex does not compile ({rx})"))
            continue
        if any(rx.search(t) for t in evidence):  # type: ignore[attr-defined]
            matched.append(pol)
    if not matched:
        return out
    signal = read_meminfo(meminfo)
    for pol in matched:
        name = str(pol.get("name") or pol.get("iri"))
        if isinstance(signal, str):
            out.append(_unknown(pol, name, "memory-signal", f"host memory is unreadable ({signal})"))
            continue
        avail_kb, total_kb = signal
        out.append(_judge(pol, name, avail_kb, total_kb, certain))
    return out


def _judge(pol: dict[str, Any], name: str, avail_kb: int, total_kb: int, certain: bool) -> Finding:
    avail, total = avail_kb / GIB_KB, total_kb / GIB_KB
    try:
        floor = float(pol.get("threshold_gib"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return _unknown(pol, name, "memory-threshold", f"policy `{name}` has no numeric threshold")
    measured = {"available_gib": round(avail, 2), "total_gib": round(total, 2), "threshold_gib": round(floor, 2)}
    if floor > total:
        return _unknown(pol, name, "memory-threshold",
                        f"policy `{name}` sets a floor of {floor:.2f} GiB MemAvailable, above this host's "
                        f"MemTotal of {total:.2f} GiB; it can never be met here", measured)
    if avail >= floor:
        return Finding(name, "memory", "", outcome=SATISFIED, class_=pol.get("class"),
                       verification_point=pol.get("verification_point"), source=pol.get("iri"), extra=measured)
    message = (f"host-memory policy `{name}`: MemAvailable is {avail:.2f} GiB of {total:.2f} GiB total, below the "
               f"governed floor of {floor:.2f} GiB for this command")
    if pol.get("message"):
        message += f" ({pol['message']})"
    message += (". Wait for memory to free up (or stop other memory-heavy work) before running it, or run a lighter "
                "command")
    if not certain:
        message += " [the command line could not be read with certainty, so this does not block]"
    blocking = certain and policy_blocks(pol.get("class"), pol.get("effect"))
    return Finding(name, "memory", message, blocking=blocking, outcome=UNSATISFIED, class_=pol.get("class"),
                   verification_point=pol.get("verification_point"), source=pol.get("iri"), extra=measured)


def _unknown(pol: dict[str, Any], name: str, fail: str, error: str, measured: dict[str, Any] | None = None) -> Finding:
    extra = {"error": error, "fail": fail, **(measured or {})}
    return Finding(name, "memory", error, outcome=UNKNOWN, class_=pol.get("class"),
                   verification_point=pol.get("verification_point"), source=pol.get("iri"), extra=extra)


def _compile(pattern: str) -> object:
    """The compiled RE2 regex, or the error text."""
    rx = _compiled.get(pattern)
    if rx is None:
        try:
            from yupana.regex import re2_binding

            rx = re2_binding.compile(pattern)
        except Exception as exc:  # noqa: BLE001 - re2.error or anything the binding raises
            rx = f"{type(exc).__name__}: {exc}"
        _compiled[pattern] = rx
    return rx
