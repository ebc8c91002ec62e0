"""Landing policies (``aegis:landingPolicy`` on a repository, else on its
``aegis:repositoryType``), strictly. Cold path.

docs/vocabulary.md, "Landing policies": the lookup for ``aegis:repo_<name>`` starts from the
repository's own ``aegis:landingPolicy`` and only then checks its repository type's (the
contract: "Repository landing lookup starts from landingPolicy before checking the
repository type"). A policy has ``rdfs:label`` (1) and ``aegis:requires`` (1..n, ∈
:data:`REQUIREMENTS`). A link to a missing or mistyped subject, a blank label or an unknown
requirement refuses the projection. No policy for a repository is ``None``: UNKNOWN, which a
landing certification never certifies. :func:`decode_all` builds the cache's
``landing_policies`` plane from what the refresh read (``queries/landing_discover.rq``, then
``landing_read.rq`` for the holders, the types they name and the policies).
"""

from __future__ import annotations

from typing import Any

from yupana.projection.decode_exposure import repo_name
from yupana.projection.subject import Subject
from yupana.projection.vocab import RDFS_LABEL, A

LANDING_POLICY, REPOSITORY_TYPE = A("landingPolicy"), A("repositoryType")
REPOSITORY_TYPE_CLASS, LANDING_POLICY_CLASS = A("RepositoryType"), A("LandingPolicy")
REQUIREMENTS = ("ci-selection-complete", "local-commands-pass")


def type_links(holders: dict[str, Subject]) -> list[str]:
    """Every repository-type IRI the holders name, sorted (links must be IRIs, at most one each)."""
    return sorted({iri for h in holders.values() for iri in h.links(REPOSITORY_TYPE, max_count=1)})


def policy_links(holders: dict[str, Subject]) -> list[str]:
    """Every landing-policy IRI the holders (repositories and types) name, sorted."""
    return sorted({iri for h in holders.values() for iri in h.links(LANDING_POLICY, max_count=1)})


def decode_all(holders: dict[str, Subject], policies: dict[str, Subject]) -> list[dict[str, Any]]:
    """The cache's ``landing_policies``: one entry per repository that has a policy, sorted by IRI.

    ``holders`` are the subjects discovery found (subjects of ``aegis:landingPolicy`` or
    ``aegis:repositoryType``) and the repository types they name; ``policies`` the policies
    any of them names. A holder typed ``aegis:RepositoryType`` is a type (its policy link is
    checked even when no repository uses it); any other holder is a repository and must be
    ``aegis:repo_<name>``. Entry: ``{"iri", "repo", "policy", "label", "requires", "source",
    "repository_type"}`` — ``repository_type`` is the type the policy came from (null when it
    is the repository's own). A repository without a policy has no entry (UNKNOWN).
    """
    types = {iri: s for iri, s in holders.items() if s.is_a(REPOSITORY_TYPE_CLASS)}
    for each in types.values():
        decode(None, each, policies)  # a broken link on a type refuses even when no repository uses it
    out = []
    for iri in sorted(holders):
        repo = holders[iri]
        if iri in types:
            continue
        prop = LANDING_POLICY if repo.has(LANDING_POLICY) else REPOSITORY_TYPE
        name = repo_name(repo, prop, "a landing policy lookup")
        kind_iri = type_link(repo)
        kind: Subject | None = None
        if kind_iri is not None:
            kind = holders.get(kind_iri)
            if kind is None or not kind.predicates():
                raise repo.error(REPOSITORY_TYPE, f"names <{kind_iri}>, about which the store holds nothing")
            if kind_iri not in types:
                raise repo.error(REPOSITORY_TYPE, f"names <{kind_iri}>, which is not an aegis:RepositoryType")
        found = decode(repo, kind, policies)
        if found is None:
            continue
        out.append({"iri": iri, "repo": name, "policy": found["iri"], "label": found["label"],
                    "requires": found["requires"], "source": found["source"],
                    "repository_type": kind_iri if found["source"] == "repository-type" else None})
    return out


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
    if not policy.is_a(LANDING_POLICY_CLASS):
        raise holder.error(LANDING_POLICY, f"names <{iri}>, which is not an aegis:LandingPolicy")
    requires = policy.strings(A("requires"), min_count=1)
    for word in requires:
        if word not in REQUIREMENTS:
            raise policy.error(A("requires"), f"{word!r} is not one of {', '.join(REQUIREMENTS)}")
    return {"iri": iri, "label": policy.string(RDFS_LABEL), "requires": sorted(set(requires)), "source": source}
