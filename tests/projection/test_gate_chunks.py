"""The refresh's gate validates in self-contained chunks and gives the whole graph's results."""

from __future__ import annotations

import pytest

from yupana.endpoint.base import Deadline, EndpointError
from yupana.projection import gate, gate_chunks

from .helpers import AEGIS, CI, EXPOSURE, MEMORY, OTHERS, SELECTOR, TEXT_CLASSES, grounded, structural, wire


def catalogue(n: int) -> str:
    """``n`` text rules, every third linking the shared selector; policies with info results."""
    rules = []
    for i in range(n):
        link = " ; aegis:exemptionSelector aegis:sel_fixtures" if i % 3 == 0 else ""
        rules.append(f'aegis:rule_{i:04d} a aegis:InternalIdentifierPattern ; rdfs:label "r{i}" ; '
                     f'aegis:regex "x{i}" ; aegis:enforcementTier "warn"{link} .')
    return (TEXT_CLASSES + "\n".join(rules) + SELECTOR + structural() + wire() + MEMORY + OTHERS + grounded() + CI
            + EXPOSURE)


@pytest.mark.parametrize("size", [50, 400, 10**6])
def test_chunks_give_the_results_of_the_whole_graph(projected, size):
    proj = projected(catalogue(120))
    whole = gate.validate(proj.triples)
    chunked = gate_chunks.validate(proj.subjects, chunk_triples=size)
    assert whole.results and [r.severity for r in whole.results] == ["info"] * len(whole.results)
    assert chunked.results == whole.results and chunked.conforms == whole.conforms
    assert chunked.triples == len(proj.triples)
    assert (chunked.chunks > 5) if size == 50 else (chunked.chunks == 1 if size == 10**6 else chunked.chunks > 1)


def test_a_violation_found_in_any_chunk_refuses(projected):
    proj = projected(catalogue(60))
    proj.subjects[AEGIS + "sel_fixtures"].add(AEGIS + "name", proj.subjects[AEGIS + "rule_0005"].terms(
        "http://www.w3.org/2000/01/rdf-schema#label")[0])  # a selector with two names
    whole = gate.validate(proj.triples)
    chunked = gate_chunks.validate(proj.subjects, chunk_triples=50)
    assert not whole.conforms and chunked.results == whole.results


def test_every_chunk_holds_what_its_subjects_link_to(projected):
    proj = projected(catalogue(90))
    chunks = list(gate_chunks.chunks(proj.subjects, 60))
    for chunk in chunks:
        held = {s for s, _, _ in chunk}
        for _, _, o in chunk:
            if o.kind == "uri" and o.value in proj.subjects:
                # the linked atom, selector or class (the subClassOf chain rides along), whole
                assert o.value in held
                assert set(proj.subjects[o.value].triples()) <= set(chunk)
    with_rules = [c for c in chunks if any(s.startswith(AEGIS + "rule_") for s, _, _ in c)]
    assert len(with_rules) > 3 and all(any(s == AEGIS + "InternalIdentifierPattern" for s, _, _ in c) for c in with_rules)
    shared = (AEGIS + "InternalIdentifierPattern", AEGIS + "sel_")  # in every chunk that links them
    own = [t for c in chunks for t in c if not t[0].startswith(shared)]
    assert len(own) == len(set(own)) and set(own) == {t for t in proj.triples if not t[0].startswith(shared)}


def test_the_deadline_is_checked_before_each_chunk(projected):
    proj = projected(catalogue(30))
    with pytest.raises(EndpointError) as err:
        gate_chunks.validate(proj.subjects, deadline=Deadline(0))
    assert err.value.kind == "deadline" and "before the SHACL gate (chunk 1; 0 of " in str(err.value)
    assert "raise [yupana.quipu] refresh_deadline_secs" in str(err.value)


def test_the_same_triples_take_the_last_results_without_validating(projected):
    proj = projected(catalogue(30))
    first = gate_chunks.validate(proj.subjects)
    again = gate_chunks.validate(proj.subjects, same=first.results, shapes_dir="/nonexistent")
    assert again.results == first.results and again.chunks == 0
    assert gate_chunks.triples_digest(proj.subjects) == gate_chunks.triples_digest(projected(catalogue(30)).subjects)
    assert gate_chunks.triples_digest(proj.subjects) != gate_chunks.triples_digest(projected(catalogue(31)).subjects)
