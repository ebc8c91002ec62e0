"""The triples yupana itself writes to the store. Cold path.

A disk-impact observation is ``aegis:diskobs_<id>`` (the random id given when the sample was
queued, so a retried batch rewrites the same triples instead of duplicating them) with exactly
the four properties of ``aegis:CommandDiskImpactObservationShape``, in the syntax Turtle and
SPARQL's ``INSERT DATA`` share (the ``aegis:`` prefix declared by the transport).
"""

from __future__ import annotations


def disk_observation_triples(batch: list[dict[str, object]]) -> str:
    """A batch of observations as triples (exactly the shape's four properties). The samples
    were checked when read from the queue: string id, signature and fs, integer delta and at."""
    out = []
    for s in batch:
        delta, at = s["delta"], s["at"]
        assert isinstance(delta, int) and isinstance(at, int)
        out.append(f"aegis:diskobs_{s['id']} a aegis:CommandDiskImpactObservation ;\n"
                   f"    aegis:commandSignature {_literal(str(s['signature']))} ;\n"
                   f"    aegis:filesystemIdentity {_literal(str(s['fs']))} ;\n"
                   f"    aegis:deltaBytes {delta} ;\n"
                   f"    aegis:observedAt {at} .")
    return "\n".join(out) + "\n"


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'
