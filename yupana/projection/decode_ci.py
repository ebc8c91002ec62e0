"""CI maps (``aegis:CiMap`` → ``aegis:CiJob`` → ``aegis:LocalCommand``), strictly. Cold path.

docs/vocabulary.md, "CI maps": a map has ``aegis:coverage`` (1, ``complete | partial``) and
``aegis:ciJob`` (1..n); a job ``aegis:name`` (1), ``rdfs:label`` (1) and
``aegis:localCommand`` (1..n); a command ``aegis:command`` (1) and ``aegis:appliesTo``
(1..n globs). Blank values, bad coverage markers, malformed globs and links to missing or
mistyped subjects refuse the projection. No map at all is ``None`` (UNKNOWN), never "nothing
to run". Several maps are merged: their jobs are unioned and the result is complete only
when every map is.
"""

from __future__ import annotations

from typing import Any

from yupana.projection.subject import Subject, glob
from yupana.projection.vocab import CI_COVERAGE, RDFS_LABEL, A

JOB, COMMAND = A("ciJob"), A("localCommand")


def job_links(maps: dict[str, Subject]) -> list[str]:
    """Every job IRI the maps name, sorted (links must be IRIs; each map needs one)."""
    return sorted({iri for m in maps.values() for iri in m.links(JOB, min_count=1)})


def command_links(jobs: dict[str, Subject]) -> list[str]:
    """Every command IRI the jobs name, sorted (links must be IRIs; each job needs one)."""
    return sorted({iri for j in jobs.values() for iri in j.links(COMMAND, min_count=1)})


def decode(maps: dict[str, Subject], jobs: dict[str, Subject], commands: dict[str, Subject]) -> dict[str, Any] | None:
    """The cache's ``ci_map``: ``{"complete": bool, "jobs": [...]}``, or None with no map."""
    if not maps:
        return None
    complete = True
    job_iris: set[str] = set()
    for iri in sorted(maps):
        ci_map = maps[iri]
        complete &= ci_map.enum(A("coverage"), CI_COVERAGE, required=True) == "complete"
        for job in ci_map.links(JOB, min_count=1):
            _target(ci_map, JOB, jobs.get(job), job, A("CiJob"))
            job_iris.add(job)
    return {"complete": complete, "jobs": [decode_job(jobs[j], commands) for j in sorted(job_iris)]}


def decode_job(job: Subject, commands: dict[str, Subject]) -> dict[str, Any]:
    out = []
    for iri in job.links(COMMAND, min_count=1):
        command = _target(job, COMMAND, commands.get(iri), iri, A("LocalCommand"))
        out.append({
            "iri": iri,
            "command": command.string(A("command")),
            "scopes": [glob(command, A("appliesTo"), g) for g in command.strings(A("appliesTo"), min_count=1)],
        })
    return {"iri": job.iri, "job": job.string(A("name")), "label": job.string(RDFS_LABEL), "commands": out}


def _target(source: Subject, link: str, target: Subject | None, iri: str, cls: str) -> Subject:
    if target is None or not target.predicates():
        raise source.error(link, f"names <{iri}>, about which the store holds nothing")
    if not target.is_a(cls):
        raise source.error(link, f"names <{iri}>, which is not typed aegis:{cls.rsplit('/', 1)[-1]}")
    return target
