"""Batched reads and paged discovery: requests grow with batches and pages, not subjects."""

from __future__ import annotations

import pytest

from yupana.endpoint.base import Deadline, DeadlineError, EndpointError
from yupana.projection.read import Reader
from yupana.projection.vocab import RDFS_COMMENT

from .helpers import AEGIS, TEXT_CLASSES, Recording, capped


def rules(n: int, comments: int = 1) -> str:
    lines = [TEXT_CLASSES]
    for i in range(n):
        extra = " ; ".join(f'rdfs:comment "c{j}"' for j in range(comments))
        lines.append(f'aegis:rule_{i:05d} a aegis:InternalIdentifierPattern ; rdfs:label "r{i}" ; '
                     f'aegis:regex "x{i}" ; aegis:enforcementTier "warn" ; {extra} .')
    return "\n".join(lines)


def _code(query: str) -> str:
    """The query without its comment lines."""
    return "\n".join(line for line in query.splitlines() if not line.lstrip().startswith("#"))


def reader_for(store, body, cls=None, **kw):
    endpoint = store(body, cls) if cls else store(body)
    return endpoint, Reader(endpoint, Deadline(30), **kw)


def test_discovery_pages_past_the_row_cap(store):
    endpoint, reader = reader_for(store, rules(10), cls=capped(5), max_rows=5)
    found = reader.discover("text_rules_discover", "text_rules")
    assert found == sorted(found) and len(found) == 10
    assert reader.requests["text_rules"] == 4  # the whole answer is cut; then pages of 4: 4 + 4 + 2
    sent = [_code(q) for q in endpoint.sent]
    assert "ORDER BY" not in sent[0] and all("ORDER BY STR(?s)" in q for q in sent[1:])


def test_a_full_last_page_costs_one_more_request(store):
    _, reader = reader_for(store, rules(8), cls=capped(5), max_rows=5)
    assert len(reader.discover("text_rules_discover", "text_rules")) == 8
    assert reader.requests["text_rules"] == 4  # cut whole answer, then 4 + 4 + 0


def test_a_store_without_a_cap_is_asked_once_and_never_sorts(store):
    endpoint, reader = reader_for(store, rules(8), max_rows=5)
    found = reader.discover("text_rules_discover", "text_rules")
    assert found == sorted(found) and len(found) == 8
    assert reader.requests["text_rules"] == 1
    assert "ORDER BY" not in _code(endpoint.sent[0]) and "LIMIT" not in _code(endpoint.sent[0])


@pytest.mark.parametrize("n,batch,expected", [(1, 200, 1), (200, 200, 1), (201, 200, 2), (450, 200, 3), (450, 50, 9)])
def test_reads_are_one_request_per_batch(store, n, batch, expected):
    _, reader = reader_for(store, rules(n), batch_size=batch)
    subjects = reader.discover("text_rules_discover", "discovery")
    read = reader.read("text_rules_read", subjects, "text_rules")
    assert reader.requests["text_rules"] == expected
    assert len(read) == n
    assert all(s.string(AEGIS + "regex") for s in read.values())


def test_a_truncated_batch_is_split_and_read_again(store):
    # 40 subjects x 10 triples = 400 rows: too many for one answer under a cap of 100
    _, reader = reader_for(store, rules(40, comments=5), cls=capped(100), batch_size=40)
    subjects = reader.discover("text_rules_discover", "discovery")
    read = reader.read("text_rules_read", subjects, "text_rules")
    assert all(len(s.strings(RDFS_COMMENT)) == 5 for s in read.values())
    assert reader.requests["text_rules"] > 1


def test_a_subject_whose_own_triples_exceed_the_cap_fails(store):
    _, reader = reader_for(store, rules(1, comments=30), cls=capped(10))
    subjects = reader.discover("text_rules_discover", "discovery")
    with pytest.raises(EndpointError) as err:
        reader.read("text_rules_read", subjects, "text_rules")
    assert err.value.kind == "truncated"


def test_triples_are_recorded_once(store):
    _, reader = reader_for(store, rules(3))
    subjects = reader.discover("text_rules_discover", "discovery")
    reader.read("text_rules_read", subjects, "text_rules")
    reader.read("text_rules_read", subjects, "text_rules")
    triples = reader.sorted_triples()
    assert len(triples) == len(set(triples)) == 3 * 5  # type, label, regex, tier, comment


def test_a_request_the_deadline_cannot_wait_for_is_not_sent(store, monkeypatch):
    # Each answer takes 0.4 s (a clock of the test's own): with 1 s, the third batch would be
    # abandoned half-way and the store left answering it, so it is not sent at all.
    import time

    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])

    class Slow(Recording):
        def select(self, query, deadline):
            result = super().select(query, deadline)
            now[0] += 0.4
            return result

    endpoint = store(rules(5), Slow)
    reader = Reader(endpoint, Deadline(1.0), batch_size=1)
    with pytest.raises(DeadlineError) as cut:
        reader.read("text_rules_read", [f"{AEGIS}rule_{i:05d}" for i in range(5)], "text_rules")
    assert len(endpoint.sent) == 2
    assert cut.value.kind == "deadline" and "leaves 0.20s, less than the last text_rules request took (0.40s)" in str(
        cut.value) and "the next one was not sent" in str(cut.value)
