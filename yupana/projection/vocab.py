"""IRIs the projection reads, and the compact names used in errors. Cold path."""

from __future__ import annotations

from yupana.planes import AEGIS as AEGIS  # re-exported

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"

RDF_TYPE = RDF + "type"
RDFS_LABEL = RDFS + "label"
RDFS_COMMENT = RDFS + "comment"
RDFS_SUBCLASS_OF = RDFS + "subClassOf"

_PREFIXES = (("aegis:", AEGIS), ("rdf:", RDF), ("rdfs:", RDFS), ("xsd:", XSD))


def A(local: str) -> str:
    """The full IRI of ``aegis:<local>``."""
    return AEGIS + local


def curie(iri: str) -> str:
    """``aegis:regex`` for ``http://aegis.gastown.local/ontology/regex``; other IRIs as ``<iri>``."""
    for prefix, ns in _PREFIXES:
        if iri.startswith(ns) and len(iri) > len(ns):
            return prefix + iri[len(ns):]
    return f"<{iri}>"


# Closed value sets (interop reference §1.13, docs/vocabulary.md).
EFFECTS = ("allow", "warn", "require-approval", "deny", "escalate", "record", "throttle")
CONSTRAINT_CLASSES = ("hard", "soft", "escalation")
VERIFICATION_POINTS = ("PAG", "ATM", "PAA", "tool_layer", "policy_layer")
HOSTED_AT_LAYERS = ("orchestration", "tool", "policy")
STRUCTURAL_MATCH_TYPES = ("must-match", "must-not-match", "must-exist")
GROUNDED_MATCH_TYPES = ("must-ground", "must-not-ground")
TEXT_TIERS = ("block", "warn")
ROLLOUT_STAGES = ("shadow", "advise", "enforce")  # aegis:rolloutStage, a ceiling under the host's mode
TRIPWIRE_EFFECTS = ("deny", "warn", "throttle")
MEMORY_EFFECTS = ("deny", "warn")
CI_COVERAGE = ("complete", "partial")
EXPOSURES = ("public", "internal")  # aegis:exposure of a repository

#: The calibration basis that makes a Policy a host-memory policy.
MEMORY_BASIS = "MemAvailable GiB"
