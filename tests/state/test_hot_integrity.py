"""The hot twin's integrity through the real hook: every section a hook reads is checked against
its block checksums, so a flipped bit, a damaged header or sections spliced in from another
catalogue's twin is a deny (the twin derived again from the JSON) or the loud `unreadable`
miss (and a rebuild) — never a silent allow (issue 23 §5: 50 of 72 flips were)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from guard_kit import Repo, hook, text_rule, write_cache

from yupana.state import cache, hot_view

ENDPOINT = "http://127.0.0.1:9"
HOST = r"\b[a-z0-9-]+\.corp\.example\b"
TARGET = "rule_no_internal_hostnames"


def _config() -> str:
    return (f'[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\n'
            'dialect = "quipu"\nprojection_cache_ttl_secs = 7200\nrefresh_interval_secs = 300\n')


def _rules(pattern: str = HOST) -> list[dict]:
    # enough literals that a short edit is looked up in the hash table (the probe), not scanned
    return [text_rule(f"rule_filler_{i:03d}", rf"\bfiller{i:03d}word\b") for i in range(200)] \
        + [text_rule(TARGET, pattern, label="no internal hostnames")]


@pytest.fixture
def repo(tmp_path, env):
    repo = Repo(tmp_path / "repo", env).config(_config())
    write_cache(env, ENDPOINT, text_rules=_rules())
    exposure = env.cache_for(ENDPOINT).parent / "exposure.json"
    exposure.write_text(json.dumps({"version": 1, "entries": {
        f"{ENDPOINT}|widgets": {"exposure": "public", "at": int(time.time())}}}))
    return repo


def _payload(repo):
    return repo.payload(rel="src/net.rs", old_string='let host = "";', new_string='let host = "db1.corp.example";')


def _hot(env) -> Path:
    return Path(cache.hot_path_for(str(env.cache_for(ENDPOINT))))


def _put(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _ranges(data: bytes) -> dict[str, tuple[int, int]]:
    """File offsets of the target rule's slot in the index table, its posting and its record."""
    twin = hot_view.HotFile(data=data)
    rules = hot_view.TextRules(twin)
    target = next(i for i in range(rules.count) if rules.rule(i)["name"] == TARGET)

    def at(name: str) -> int:
        return twin.base + twin.header["sections"][name][0]

    offsets = memoryview(twin.raw(hot_view.RULE_OFFSETS)).cast("I")
    table = memoryview(twin.raw(hot_view.INDEX + "table")).cast("Q")
    postings = memoryview(twin.raw(hot_view.INDEX + "postings")).cast("I")
    slot = next(s for s, v in enumerate(table)
                if v and target in postings[(v & 0xFFFFFFFF) + 1:(v & 0xFFFFFFFF) + 1 + postings[v & 0xFFFFFFFF]])
    start = table[slot] & 0xFFFFFFFF
    return {"slot": (at(hot_view.INDEX + "table") + 8 * slot, at(hot_view.INDEX + "table") + 8 * slot + 8),
            "posting": (at(hot_view.INDEX + "postings") + 4 * start,
                        at(hot_view.INDEX + "postings") + 4 * (start + 1 + postings[start])),
            "record": (at(hot_view.RULES) + offsets[target], at(hot_view.RULES) + offsets[target + 1])}


def _flips(ranges: dict[str, tuple[int, int]], per_part: int = 24) -> list[tuple[str, int]]:
    """``per_part`` bit positions spread over each part (every bit of a part that small)."""
    out = []
    for part, (a, b) in ranges.items():
        bits = (b - a) * 8
        step = max(1, bits // per_part)
        out += [(part, a * 8 + bit) for bit in range(0, bits, step)][:per_part]
    return out


def test_flipped_bits_in_the_triggered_rule_are_denied_or_loud_never_silent(env, repo):
    assert hook(env, _payload(repo)).denied
    hot = _hot(env)
    pristine = hot.read_bytes()
    outcomes: dict[str, list[tuple[str, int]]] = {"deny": [], "loud": [], "silent": []}
    flips = _flips(_ranges(pristine))
    assert len(flips) == 72
    for part, bit in flips:
        data = bytearray(pristine)
        data[bit // 8] ^= 1 << (bit % 8)
        _put(hot, bytes(data))
        env.spool_path.unlink(missing_ok=True)
        result = hook(env, _payload(repo))
        misses = [r for r in env.records("fail_open") if r.get("miss") == "unreadable"]
        if result.denied:
            outcomes["deny"].append((part, bit))
        elif misses and "damaged" in result.stderr:  # the notice itself: once a session
            outcomes["loud"].append((part, bit))
        else:
            outcomes["silent"].append((part, bit))
    assert outcomes["silent"] == []
    assert outcomes["loud"]  # the damage was noticed, not routed around


def test_a_damaged_twin_is_the_loud_miss_then_rebuilt_from_the_json(env, repo):
    assert hook(env, _payload(repo)).denied
    hot = _hot(env)
    data = bytearray(hot.read_bytes())
    a, b = _ranges(bytes(data))["record"]
    data[(a + b) // 2] ^= 0x10
    _put(hot, bytes(data))
    first = hook(env, _payload(repo))
    assert not first.denied and "no servable projection cache" in first.message and "damaged" in first.message
    [miss] = env.records("fail_open")
    assert miss["miss"] == "unreadable" and "fails its checksum" in miss["reason"]
    assert env.records("guard")[-1]["result"] != "deny"
    assert not hot.exists()  # removed: the next hook derives it again
    second = hook(env, _payload(repo))
    assert second.denied and "no internal hostnames" in second.reason
    hot_view.HotFile(data=hot.read_bytes()).verify()  # derived again, whole


def test_a_damaged_header_is_derived_again_and_denies(env, repo):
    hot = _hot(env)
    data = bytearray(hot.read_bytes())
    data[len(hot_view.MAGIC) + 12] ^= 0x01  # inside the marshalled header
    _put(hot, bytes(data))
    assert hook(env, _payload(repo)).denied
    hot_view.HotFile(data=hot.read_bytes()).verify()


def test_sections_spliced_from_another_catalogues_twin_are_refused(env, repo):
    """The header of this JSON's twin (its key matches) over another catalogue's sections — and
    that catalogue's own checksums — is never served: checksums are seeded with the JSON's
    identity, so the other twin's sections are good only under its own header."""
    hot = _hot(env)
    ours = hot.read_bytes()
    other_path = env.base / "other" / "projection.json"
    write_cache(env, ENDPOINT, path=other_path, text_rules=_rules(HOST.replace("example", "exampla")))
    theirs = Path(cache.hot_path_for(str(other_path))).read_bytes()
    mine, other = hot_view.HotFile(data=ours), hot_view.HotFile(data=theirs)
    assert mine.header["sections"] == other.header["sections"]  # the same layout, other rules
    _put(hot, ours[:mine.base] + theirs[other.base:])
    result = hook(env, _payload(repo))
    assert not result.denied and "NOT enforced" in result.message
    assert [r["miss"] for r in env.records("fail_open")] == ["unreadable"]


def test_a_refresh_never_copies_a_damaged_section_of_the_twin_it_replaces(env, tmp_path):
    path = tmp_path / "store" / "projection.json"
    body = write_cache(env, ENDPOINT, path=path, text_rules=_rules())
    hot = Path(cache.hot_path_for(str(path)))
    data = bytearray(hot.read_bytes())
    data[_ranges(bytes(data))["record"][0] + 5] ^= 0x04
    _put(hot, bytes(data))
    with pytest.raises(hot_view.Corrupt):
        hot_view.HotFile(data=bytes(data)).verify()
    body["written_at"] += 1  # the same planes: the refresh would copy them from the prior twin
    assert cache.save(body, str(path)) is None
    twin = hot_view.HotFile(data=hot.read_bytes())
    twin.verify()
    assert [r["pattern"] for r in hot_view.TextRules(twin).all()][-1] == HOST


def test_another_catalogues_twin_given_this_jsons_key_is_not_served(env, repo):
    """A whole twin derived from another catalogue (whose rule does not match) with this JSON's
    key and sha1 in its header — its checksums good — is refused: the head of projection.json
    names another rule-set digest, so the hook derives the twin from the JSON and denies."""
    path = env.cache_for(ENDPOINT)
    body = json.loads(path.read_text())
    hot = _hot(env)
    ours = hot_view.HotFile(data=hot.read_bytes())
    other = dict(body, text_rules=_rules(HOST.replace("example", "exampla")), digest="sha256:" + "1" * 64)
    from yupana.state import hot_derive

    _put(hot, b"".join(hot_derive.image(other, {"key": ours.header["key"], "json_sha1": ours.header["json_sha1"]})))
    assert hot_view.HotFile(data=hot.read_bytes()).header["key"] == ours.header["key"]
    result = hook(env, _payload(repo))
    assert result.denied and "no internal hostnames" in result.reason
    assert hot_view.HotFile(data=hot.read_bytes()).header["meta"]["digest"] == body["digest"]  # derived again


def test_explain_reports_the_damaged_twin_and_leaves_it_in_place(env, repo, yupana):
    hot = _hot(env)
    data = bytearray(hot.read_bytes())
    a, b = _ranges(bytes(data))["record"]
    data[(a + b) // 2] ^= 0x10
    _put(hot, bytes(data))
    done = yupana("explain", stdin=json.dumps(_payload(repo)), cwd=repo.root)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "DECISION    NOTIFY" in out and "is damaged" in out and "fails its checksum" in out
    assert hot.read_bytes() == bytes(data)  # a rehearsal removes nothing
    assert not env.records("fail_open")  # nor records anything


def test_a_twin_of_the_previous_format_is_derived_again_on_upgrade(env, repo):
    """A format-4 twin (no header checksum, no section checksums) left by an older yupana is
    never read as sections: the hook derives the twin again and decides on it."""
    import marshal

    hot = _hot(env)
    twin = hot_view.HotFile(data=hot.read_bytes())
    header = dict(twin.header, format=4)
    header.pop("checks")
    head = marshal.dumps(header)
    body = hot.read_bytes()[twin.base:]
    _put(hot, hot_view.MAGIC + len(head).to_bytes(4, "little") + head + body)
    assert hook(env, _payload(repo)).denied
    assert hot_view.HotFile(data=hot.read_bytes()).header["format"] == hot_view.HOT_FORMAT
