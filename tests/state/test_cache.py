"""The projection cache: every named miss, the serving boundaries, the hot twin, failed saves.

What a user would notice: a cache that must not be served is refused with the right
label (absent, unreadable, version, endpoint, future-dated, expired); a write that fails —
for any reason, a full disk included — leaves the cache that was serving exactly as it was.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import textwrap
import uuid

import pytest

from yupana.state import cache, dataset
from yupana.regex import prefilter as regex_prefilter

NOW = 1_800_000_000
EP = "http://quipu.example:3030"


def ds(endpoint: str = EP) -> str:
    """The dataset identity of ``endpoint`` configured with nothing else (yupana/state/dataset.py)."""
    return dataset.identity({"endpoint": endpoint})


def body(written_at: int = NOW, endpoint: str = EP, **extra) -> dict:
    out = {
        "version": 1, "written_at": written_at, "endpoint": endpoint, "dataset": ds(endpoint), "dialect": "quipu", "digest": "sha256:x",
        "counts": {"text_rules": 1}, "policies": [], "exemption_selectors": [], "grounded_rules": [],
        "text_rules": [{"name": "r1", "pattern": r"\bACME-[0-9]+\b", "tier": "block"}],
        "grounding": None, "work_item_scopes": None, "work_item_parents": None,
        "tripwires": [{"name": "w", "paths": ["src/**"], "effect": "warn"}], "memory_policies": [],
        "ci_map": None, "disk_history": None, "unprojected": [], "notices": [],
    }
    out.update(extra)
    return out


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "state" / "projection.json")


def write_raw(path: str, data: bytes | str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data.encode() if isinstance(data, str) else data)


# ── misses ───────────────────────────────────────────────────────────────────────────


def test_absent(path):
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert found is None and miss.label == "absent" and "yupana project" in miss.reason


def test_absent_when_no_path_can_be_resolved():
    found, miss = cache.load_servable(None, EP, 3600, NOW, dataset=ds(EP))
    assert found is None and miss.label == "absent" and "YUPANA_PROJECTION_CACHE_PATH" in miss.reason


@pytest.mark.parametrize("data", [
    "not json at all",
    "",
    "[1, 2, 3]",
    '"a string"',
    json.dumps(body())[:-40],  # truncated mid-write (by something other than us)
    json.dumps(body(written_at="yesterday")),
    json.dumps(body(endpoint=None)),
    json.dumps(body(text_rules={"r1": {}})),
    json.dumps(body(policies=["not an object"])),
    json.dumps(body(grounding=["a", "list"])),
    json.dumps(body(written_at=True)),
    b"\xff\xfe\x00garbage",
])
def test_unreadable(path, data):
    write_raw(path, data)
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert found is None and miss.label == "unreadable"


def test_unreadable_even_with_a_stale_hot_twin_beside_it(path):
    assert cache.save(body(), path) is None
    write_raw(path, "{ torn")
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert found is None and miss.label == "unreadable"


@pytest.mark.parametrize("version", [0, 2, "1", None])
def test_version(path, version):
    data = body()
    data["version"] = version
    write_raw(path, json.dumps(data))
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert found is None and miss.label == "version"


def test_another_endpoint_is_refused(path):
    assert cache.save(body(endpoint="http://other.example:3030"), path) is None
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert found is None and miss.label == "endpoint" and "other.example" in miss.reason


@pytest.mark.parametrize(("written", "asked"), [(EP + "/", EP), (EP, EP + "/"), (EP + "//", EP + "/")])
def test_trailing_slashes_do_not_make_another_endpoint(path, written, asked):
    write_raw(path, json.dumps(body(endpoint=written)))
    found, miss = cache.load_servable(path, asked, 3600, NOW, dataset=ds(asked))
    assert miss is None and found["text_rules"][0]["name"] == "r1"


def test_future_dated(path):
    assert cache.save(body(written_at=NOW + 5), path) is None
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert found is None and miss.label == "future-dated" and "5s" in miss.reason


def test_expired_past_the_ttl(path):
    assert cache.save(body(written_at=NOW - 3601), path) is None
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert found is None and miss.label == "expired" and "3601s" in miss.reason


def test_age_equal_to_the_ttl_is_still_served(path):
    assert cache.save(body(written_at=NOW - 3600), path) is None
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert miss is None and found["written_at"] == NOW - 3600


def test_ttl_zero_disables_serving_even_a_cache_written_this_second(path):
    assert cache.save(body(written_at=NOW), path) is None
    found, miss = cache.load_servable(path, EP, 0, NOW, dataset=ds(EP))
    assert found is None and miss.label == "expired" and "disabled" in miss.reason


def test_checks_run_in_the_documented_order(path):
    # another version AND another endpoint AND expired: version is reported
    data = body(written_at=NOW - 99999, endpoint="http://else")
    data["version"] = 7
    write_raw(path, json.dumps(data))
    assert cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))[1].label == "version"
    # another endpoint AND future-dated: endpoint first
    assert cache.save(body(written_at=NOW + 100, endpoint="http://else"), path) is None
    assert cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))[1].label == "endpoint"


def test_older_caches_without_the_later_fields_load_as_unknown(path):
    minimal = {"version": 1, "written_at": NOW, "endpoint": EP, "dataset": ds(EP), "policies": [], "text_rules": []}
    write_raw(path, json.dumps(minimal))
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert miss is None
    assert found["grounding"] is None and found["work_item_scopes"] is None  # UNKNOWN, never empty
    assert found["grounded_rules"] == [] and found["tripwires"] == []


def test_a_cache_that_names_no_dataset_or_another_is_the_dataset_miss(path):
    for named in ({}, {"dataset": ds(EP).replace("default_graph=-", "default_graph=urn:team-a")}):
        write_raw(path, json.dumps({"version": 1, "written_at": NOW, "endpoint": EP, "text_rules": [], **named}))
        found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
        assert found is None and miss.label == "dataset", miss
    write_raw(path, json.dumps(body()))  # read with quipu; sparql11 configured
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP), dialect="sparql11")
    assert found is None and miss.label == "dataset" and "dialect 'quipu'" in miss.reason


# ── endpoint keys ────────────────────────────────────────────────────────────────────


def test_endpoint_key_makes_file_locations_absolute_against_the_root(tmp_path):
    assert cache.endpoint_key("http://q:3030/", "/r") == "http://q:3030"
    assert cache.endpoint_key("file:cat", "/r") == "file:/r/cat"
    assert cache.endpoint_key("file:///abs/a.ttl, rel/b.ttl", "/r") == "file:/abs/a.ttl,/r/rel/b.ttl"
    assert cache.endpoint_key("", "/r").startswith("file:") and cache.endpoint_key("", "/r").endswith("catalogue")


# ── the hot twin ─────────────────────────────────────────────────────────────────────


def test_save_writes_the_json_and_a_matching_hot_twin(path):
    assert cache.save(body(), path) is None
    with open(path) as fh:
        on_disk = json.load(fh)
    assert on_disk["text_rules"][0] == body()["text_rules"][0]
    assert not any(k.startswith("_") for rule in on_disk["text_rules"] for k in rule)  # derived keys stay out
    found, miss = cache.read(path)
    assert miss is None
    assert found["text_rules"][0]["_prefilter"] == regex_prefilter.prefilter(r"\bACME-[0-9]+\b")
    assert found["tripwires"][0]["_paths"] is not None


def test_the_twin_indexes_repository_exposure_by_name_and_the_json_keeps_the_entries(path):
    entries = [{"iri": "http://aegis.gastown.local/ontology/repo_widgets", "repo": "widgets", "exposure": "public",
                "comment": "open source"}]
    assert cache.save({**body(), "repo_exposure": entries}, path) is None
    with open(path) as fh:
        assert json.load(fh)["repo_exposure"] == entries
    found, _ = cache.read(path)
    assert found["_repo_exposure"] == {"widgets": "public"}
    assert cache.read_json(path)[0]["repo_exposure"] == entries


def _poison_twin(path: str, marker: str) -> None:
    """Rewrite the twin's content (same key) so a read reveals whether it used the twin."""
    from yupana.state import hot_derive
    from yupana.state.hot_view import HotFile
    from yupana.state.hot_view import PLANE, TextRules

    hot = cache.hot_path_for(path)
    with open(hot, "rb") as fh:
        twin = HotFile(data=fh.read())
    derived = dict(twin.header["meta"])
    for name in twin.header["sections"]:
        if name.startswith(PLANE):
            derived[name[len(PLANE):]] = twin.load(name)
    derived["text_rules"] = [dict(rule) for rule in TextRules(twin)]
    derived["text_rules"][0]["name"] = marker
    with open(hot, "wb") as fh:
        fh.write(b"".join(hot_derive.image(derived, {"key": twin.header["key"], "json_sha1": twin.header["json_sha1"]})))


def test_the_twin_is_used_when_its_key_matches(path):
    assert cache.save(body(), path) is None
    _poison_twin(path, "from-the-twin")
    found, _ = cache.read(path)
    assert found["text_rules"][0]["name"] == "from-the-twin"
    found, _ = cache.read_json(path)
    assert found["text_rules"][0]["name"] == "r1"


def test_the_twin_is_ignored_once_the_json_is_replaced_and_then_rebuilt(path):
    assert cache.save(body(), path) is None
    _poison_twin(path, "from-the-twin")
    replacement = body(text_rules=[{"name": "r2", "pattern": "TODO", "tier": "warn"}])
    write_raw(path + ".new", json.dumps(replacement))
    os.replace(path + ".new", path)  # another writer (the Rust original, say): no twin of its own
    found, _ = cache.read(path)
    assert found["text_rules"][0]["name"] == "r2"
    assert found["text_rules"][0]["_prefilter"] == (("TODO",), False)
    _poison_twin(path, "rebuilt-twin")  # the read above rewrote the twin for the new file …
    assert cache.read(path)[0]["text_rules"][0]["name"] == "rebuilt-twin"  # … and it is used


def test_plane_digests_come_from_the_twin_and_equal_those_computed_from_the_json(path):
    import hashlib

    full = body(repo_exposure=[], landing_policies=[], work_item_status=None)  # every plane a refresh writes
    assert cache.save(full, path) is None
    from_twin = cache.plane_digests(path)
    assert from_twin["text_rules"] == hashlib.sha256(
        json.dumps(body()["text_rules"], separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    assert from_twin["grounding"] == hashlib.sha256(b"null").hexdigest()
    os.unlink(cache.hot_path_for(path))  # no twin (another tool wrote the JSON): computed from the JSON alike
    assert cache.plane_digests(path) == from_twin
    replacement = dict(full, text_rules=[{"name": "r2", "pattern": "TODO", "tier": "warn"}])
    assert cache.save(full, path) is None
    write_raw(path + ".new", json.dumps(replacement))
    os.replace(path + ".new", path)  # the twin left beside it is another JSON's: not believed
    changed = cache.plane_digests(path)
    assert changed["text_rules"] != from_twin["text_rules"] and changed["tripwires"] == from_twin["tripwires"]
    assert cache.plane_digests(str(os.path.dirname(path)) + "/absent.json") == {}


def test_a_twin_from_another_derivation_version_is_ignored(path, monkeypatch):
    assert cache.save(body(), path) is None
    _poison_twin(path, "old-derivation")
    monkeypatch.setattr(regex_prefilter, "ALGORITHM", regex_prefilter.ALGORITHM + 1)
    assert cache.read(path)[0]["text_rules"][0]["name"] == "r1"


def test_a_twin_is_never_keyed_to_a_json_another_writer_put_there(path, monkeypatch):
    """Another writer replaces projection.json between our rename and our twin: the twin
    we write must not be served for their file."""
    real_replace = os.replace
    raced = []

    def racing_replace(src, dst):
        real_replace(src, dst)
        if dst == path and not raced:
            raced.append(dst)
            write_raw(path + ".theirs", json.dumps(body(text_rules=[{"name": "theirs", "pattern": "X"}])))
            real_replace(path + ".theirs", path)

    monkeypatch.setattr(os, "replace", racing_replace)
    assert cache.save(body(), path) is None
    monkeypatch.undo()
    assert raced
    assert cache.read(path)[0]["text_rules"][0]["name"] == "theirs"


@pytest.mark.parametrize("garbage", [b"", b"\x00\x01\x02", marshal.dumps([1, 2]), marshal.dumps({"key": None})])
def test_a_broken_twin_falls_back_to_the_json(path, garbage):
    assert cache.save(body(), path) is None
    write_raw(cache.hot_path_for(path), garbage)
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert miss is None and found["text_rules"][0]["name"] == "r1"


# ── failed saves lose nothing ────────────────────────────────────────────────────────


def _snapshot(directory: str) -> dict[str, bytes]:
    out = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as fh:
            out[name] = fh.read()
    return out


def test_a_save_that_cannot_serialise_leaves_the_prior_files(path):
    assert cache.save(body(), path) is None
    before = _snapshot(os.path.dirname(path))
    error = cache.save(body(text_rules=[{"name": "r", "pattern": "x", "weight": float("nan")}]), path)
    assert error and "cannot write" in error
    assert _snapshot(os.path.dirname(path)) == before


def test_a_save_into_an_impossible_directory_reports_why(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    error = cache.save(body(), str(blocker / "projection.json"))
    assert error and str(blocker) in error


def test_a_twin_that_cannot_be_written_is_reported_and_the_json_still_serves(path):
    os.makedirs(cache.hot_path_for(path))  # a directory where the twin should go
    error, hot_error = cache.save_detailed(body(), path)
    assert error is None and hot_error and "projection.hot" in hot_error
    found, miss = cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))
    assert miss is None and found["text_rules"][0]["_prefilter"] is not None


_BIG_SAVE = textwrap.dedent("""
    import os, resource, signal, sys, json
    from yupana.state import cache
    path, limit = sys.argv[1], int(sys.argv[2])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    rules = [{"name": "rule%05d" % i, "pattern": "FORBIDDEN%05d" % i, "tier": "block"} for i in range(5000)]
    data = {"version": 1, "written_at": 1800000000, "endpoint": "http://quipu.example:3030", "text_rules": rules}
    print(json.dumps(cache.save(data, path)))
""")


def test_a_file_size_limit_mid_write_loses_nothing(path):
    """RLIMIT_FSIZE makes write() fail part-way, as a full disk does."""
    assert cache.save(body(), path) is None
    before = _snapshot(os.path.dirname(path))
    done = subprocess.run([sys.executable, "-c", _BIG_SAVE, path, "65536"], capture_output=True, text=True,
                          timeout=60)
    error = json.loads(done.stdout)
    assert error and "File too large" in error
    assert _snapshot(os.path.dirname(path)) == before  # no temp file left, prior files intact
    assert cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))[0]["text_rules"][0]["name"] == "r1"


@pytest.fixture
def tiny_fs(tmp_path):
    """A 256 KiB tmpfs: a real full disk (needs CAP_SYS_ADMIN; skipped otherwise)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", f"yupana-test-{uuid.uuid4().hex[:6]}",
                           str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root or no CAP_SYS_ADMIN)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_loses_nothing(tiny_fs):
    path = str(tiny_fs / "projection.json")
    assert cache.save(body(), path) is None
    before = _snapshot(str(tiny_fs))
    rules = [{"name": f"rule{i:05d}", "pattern": f"FORBIDDEN{i:05d}", "tier": "block"} for i in range(8000)]
    error = cache.save(body(text_rules=rules), path)
    assert error and "No space left" in error
    assert _snapshot(str(tiny_fs)) == before
    assert cache.load_servable(path, EP, 3600, NOW, dataset=ds(EP))[0]["text_rules"][0]["name"] == "r1"


def test_reading_the_twin_again_and_again_leaks_no_descriptor(path):
    """The twin is read through a descriptor (pread): a long-lived reader must not run out."""
    assert cache.save(body(), path) is None
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3000):
        found, miss = cache.read(path)
        assert miss is None and found["text_rules"][0]["name"] == "r1"
    del found
    assert len(os.listdir("/proc/self/fd")) <= before + 1


# ── a refresh that changes little re-derives little (issue 12 §2) ──────────────────────


def _twin_of(path: str):
    from yupana.state.hot_view import open_file

    return open_file(cache.hot_path_for(path), 1 << 30)


def _planes_read(path: str) -> dict:
    found, miss = cache.read(path)
    assert miss is None
    keys = ("text_rules", "tripwires", "policies", "memory_policies", "grounding", "_repo_exposure", "written_at")
    return {k: (list(found.get(k)) if k == "text_rules" else found.get(k)) for k in keys}


def test_an_unchanged_plane_is_copied_from_the_twin_it_replaces_and_reads_as_derived_anew(path, monkeypatch):
    from yupana.state import hot_derive

    rules = [{"name": f"r{i}", "pattern": rf"\bACME{i}-[0-9]+\b", "tier": "block"} for i in range(50)]
    grounding = {"ids": ["FRT-1", "X"], "prefixes": ["FRT"]}
    assert cache.save(body(text_rules=rules, grounding=grounding), path) is None
    first = _twin_of(path)
    derived: list[str] = []
    real = hot_derive.derive_plane
    monkeypatch.setattr(hot_derive, "derive_plane", lambda key, *a, **k: derived.append(key) or real(key, *a, **k))
    wires = [{"name": "w", "paths": ["src/**"], "effect": "warn"}, {"name": "w2", "paths": ["lib/**"], "effect": "deny"}]
    assert cache.save(body(written_at=NOW + 60, text_rules=rules, grounding=grounding, tripwires=wires), path) is None
    present = body().keys()
    assert [k for k in derived if k in present] == ["tripwires"]  # of the planes the JSON holds, only the changed one
    second = _twin_of(path)
    for name in first.header["sections"]:
        if not name.endswith("tripwires"):
            assert second.raw(name) == first.raw(name), name
    reused = _planes_read(path)
    assert reused["written_at"] == NOW + 60 and [w["name"] for w in reused["tripwires"]] == ["w", "w2"]
    os.unlink(cache.hot_path_for(path))  # the same JSON, its twin derived from nothing
    assert _planes_read(path) == reused


def test_a_twin_of_another_prefilter_algorithm_is_never_copied(path, monkeypatch):
    from yupana.state import hot_derive

    assert cache.save(body(), path) is None
    monkeypatch.setattr(regex_prefilter, "ALGORITHM", regex_prefilter.ALGORITHM + 1)
    derived: list[str] = []
    real = hot_derive.derive_plane
    monkeypatch.setattr(hot_derive, "derive_plane", lambda key, *a, **k: derived.append(key) or real(key, *a, **k))
    assert cache.save(body(written_at=NOW + 1), path) is None
    assert "text_rules" in derived and "tripwires" in derived


def test_the_json_is_what_the_hot_path_encoder_writes(path):
    """The streamed cold writer and fastjson agree byte for byte (docs/cache-format.md)."""
    from yupana import fastjson

    data = body(text_rules=[{"name": "ré", "pattern": "caf\u00e9|\u2603", "tier": "warn", "n": 1.5, "t": (1, 2)}])
    assert cache.save(data, path) is None
    with open(path, "rb") as fh:
        written = fh.read()
    expected = dict(data, version=1, endpoint=cache.normalize_endpoint(EP))
    assert written == fastjson.dumps(expected).encode("utf-8")
