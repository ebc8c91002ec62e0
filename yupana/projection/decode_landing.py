"""Landing policies (``aegis:landingPolicy`` on a repository, else on its
``aegis:repositoryType``), strictly. Cold path.

docs/vocabulary.md, "Landing policies": the lookup for ``aegis:repo_<name>`` starts from the
repository's own ``aegis:landingPolicy`` and only then checks its repository type's (the
contract: "Repository landing lookup starts from landingPolicy before checking the
repository type"). A policy has ``rdfs:label`` (1) and ``aegis:requires`` (1..n, ∈
:data:`REQUIREMENTS`). A link to a missing or mistyped subject, a blank label or an unknown
requirement refuses the projection. No policy for a repository is ``None``: UNKNOWN, which a
landing certification never certifies.
"""

from __future__ import annotations

from typing import Any

from yupana.projection.subject import Subject
from yupana.projection.vocab import RDFS_LABEL, A

LANDING_POLICY, REPOSITORY_TYPE = A("landingPolicy"), A("repositoryType")
REQUIREMENTS = ("ci-selection-complete", "local-commands-pass")


def policy_link(repo: Subject | None, repo_type: Subject | None) -> tuple[str, str] | None:
    """(policy IRI, where it came from: ``repository`` | ``repository-type``), or None."""
    if repo is not None:
        own = repo.links(LANDING_POLICY, max_count=1)
        if own:
            return own[0], "repository"
    if repo_type is not None:
        inherited = repo_type.links(LANDING_POLICY, max_count=1)
        if inherited:
            return inherited[0], "repository-type"
    return None


def type_link(repo: Subject | None) -> str | None:
    """The repository's ``aegis:repositoryType`` IRI (None when it states none)."""
    if repo is None:
        return None
    found = repo.links(REPOSITORY_TYPE, max_count=1)
    return found[0] if found else None


def decode(repo: Subject | None, repo_type: Subject | None, policies: dict[str, Subject]) -> dict[str, Any] | None:
    """The landing policy of one repository: ``{"iri", "label", "requires", "source"}``, or None."""
    found = policy_link(repo, repo_type)
    if found is None:
        return None
    iri, source = found
    holder = repo if source == "repository" else repo_type
    assert holder is not None  # policy_link found the link on it
    policy = policies.get(iri)
    if policy is None or not policy.predicates():
        raise holder.error(LANDING_POLICY, f"names <{iri}>, about which the store holds nothing")
    if not policy.is_a(A("LandingPolicy")):
        raise holder.error(LANDING_POLICY, f"names <{iri}>, which is not an aegis:LandingPolicy")
    requires = policy.strings(A("requires"), min_count=1)
    for word in requires:
        if word not in REQUIREMENTS:
            raise policy.error(A("requires"), f"{word!r} is not one of {', '.join(REQUIREMENTS)}")
    return {"iri": iri, "label": policy.string(RDFS_LABEL), "requires": sorted(set(requires)), "source": source}
