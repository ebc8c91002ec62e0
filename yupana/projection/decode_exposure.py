"""Repository exposure statements (``aegis:repo_<name> aegis:exposure "public"``), strictly. Cold path.

docs/vocabulary.md, "Repository exposure": a subject of ``aegis:exposure`` is a repository,
named the way the exposure lookup names one (interop reference §1.11): its IRI is
``aegis:repo_<name>``, ``<name>`` the last path segment of the repository's ``origin`` URL
with ``.git`` stripped. It carries exactly one ``aegis:exposure``, ``public`` or
``internal``; ``rdfs:comment`` (optional) says who decided and why. Anything else — two
values, a blank or unknown value, an IRI where the word belongs, an exposure stated on a
subject that is not a repository IRI — refuses the projection naming the subject and the
property: a typo must never turn a public repository's block-tier rules into warnings.
"""

from __future__ import annotations

from typing import Any

from yupana.projection.subject import Subject, merged
from yupana.projection.vocab import AEGIS, EXPOSURES, RDFS_COMMENT, A

EXPOSURE = A("exposure")
REPO_PREFIX = AEGIS + "repo_"
_NOT_IN_NAME = "/#?"


def repo_name(subject: Subject, prop: str = EXPOSURE, what: str = "exposure") -> str:
    """The repository name ``subject``'s IRI spells (``aegis:repo_<name>``), or ProjectionError
    naming ``prop`` (the statement that made it a repository: ``aegis:exposure`` by default)."""
    iri = subject.iri
    name = iri[len(REPO_PREFIX):] if iri.startswith(REPO_PREFIX) else ""
    if not name or any(c in name for c in _NOT_IN_NAME):
        raise subject.error(prop, f"is stated on a subject that is not a repository IRI: {what} belongs to "
                                  "aegis:repo_<name>, <name> being the last path segment of the repository's "
                                  "origin URL without .git (for example aegis:repo_widgets)")
    return name


def decode(subjects: dict[str, Subject]) -> list[dict[str, Any]]:
    """The cache's ``repo_exposure``: ``[{"iri", "repo", "exposure", "comment"}]`` sorted by IRI."""
    out = []
    for iri in sorted(subjects):
        subject = subjects[iri]
        exposure = subject.enum(EXPOSURE, EXPOSURES, required=True)
        out.append({"iri": iri, "repo": repo_name(subject), "exposure": exposure,
                    "comment": merged(subject.strings(RDFS_COMMENT))})
    return out
