"""The disk-impact advisory: recognition, signatures, filesystem identity, REAL free-space
deltas through the hook, the p90 advisory, and the write path to a quipu-dialect server."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO, run_yupana
from prebash import hook, output, write_cache

from yupana.state import disk_samples

from yupana import shell
from yupana.evaluate import disk

MIB = 1 << 20
AEGIS = "http://aegis.gastown.local/ontology/"


# ── recognition and signatures ─────────────────────────────────────────────────────────


@pytest.mark.parametrize("command,expected", [
    ("cargo build --release", ("cargo", "build")),
    ("cargo +nightly -Z unstable-options b", ("cargo", "build")),
    ("cargo -C sub t -- --nocapture", ("cargo", "test")),
    ("RUSTFLAGS=-g nice cargo build 2>&1 | tail -5", ("cargo", "build")),
    ("cd x && sudo -E docker build -t app .", ("docker", "build")),
    ("docker -H ssh://h buildx build .", ("docker", "buildx")),
    ("podman pull alpine", ("podman", "pull")),
    ("python3 -m pip install -r requirements.txt", ("pip", "install")),
    ("pip3 download torch", ("pip", "download")),
    ("npm ci", ("npm", "ci")),
    ("npm i left-pad", ("npm", "install")),
    ("yarn", ("yarn", "install")),
    ("yarn --frozen-lockfile", ("yarn", "install")),
    ("pnpm add react", ("pnpm", "add")),
    ("sudo apt-get -y install build-essential", ("apt-get", "install")),
    ("go test ./...", ("go", "test")),
    ("git clone https://github.com/o/r", ("git", "clone")),
    ("cp -a big/ copy/", ("cp", "")),
    ("rsync -a src/ dst/", ("rsync", "")),
    ("tar -xzf a.tgz", ("tar", "extract")),
    ("tar czf a.tgz dir", ("tar", "create")),
    ("tar --create -f a.tar d", ("tar", "create")),
    ("tar -tf a.tar", ("tar", "")),
    ("unzip a.zip", ("unzip", "")),
    ("fallocate -l 1G blob", ("fallocate", "")),
    ("dd if=/dev/zero of=x bs=1M count=10", ("dd", "")),
    ("truncate -s 10G sparse", ("truncate", "")),
    ("bash -lc 'cargo test'", ("cargo", "test")),
])
def test_commands_that_create_large_artifacts_are_recognised(command, expected):
    assert disk.recognise(shell.read(command)) == expected


@pytest.mark.parametrize("command", [
    "ls -la", "cargo fmt", "cargo --version", "docker ps", "npm run test", "pip list", "git status",
    "echo 'cargo build'", "cat <<EOF\ncargo build\nEOF", "$CARGO build", "cargo $SUB", "apt-get update",
    "python3 script.py", "grep -r dd .",
])
def test_unrelated_commands_are_not(command):
    assert disk.recognise(shell.read(command)) is None


def test_classes_of_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    repo = tmp_path / "home" / "repo"
    assert disk.classes(str(repo), str(repo)) == ("git", "repo-root")
    assert disk.classes(str(repo / "src"), str(repo)) == ("git", "subdir")
    assert disk.classes(str(tmp_path / "tmp" / "x"), None) == ("none", "tmp")
    assert disk.classes(str(tmp_path / "home" / "notes"), None) == ("none", "home")
    assert disk.classes("/opt/somewhere", None) == ("none", "other")
    assert disk.signature("cargo", "build", "git", "repo-root") == "cargo:build|repo:git|cwd:repo-root"


# ── filesystem identity ────────────────────────────────────────────────────────────────


def test_identity_is_opaque_and_from_the_longest_mount(tmp_path):
    info = tmp_path / "mountinfo"
    info.write_text(
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "30 27 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw\n"
        "41 27 8:1 / /srv/data\\040disk rw - xfs /dev/sdb1 rw\n"
        "42 41 8:2 / /srv/data\\040disk/inner rw - ext4 /dev/sdc1 rw\n")
    mounts = disk_samples.read_mounts(str(info))
    assert mounts[2] == ("/srv/data disk", "8:1", "xfs")
    assert disk_samples.identity("/home/u/x", mounts) == "root"
    assert disk_samples.identity("/dev/shm/x", mounts) == "tmpfs"
    outer = disk_samples.identity("/srv/data disk/a", mounts)
    inner = disk_samples.identity("/srv/data disk/inner/b", mounts)
    assert outer.startswith("mount:") and inner.startswith("mount:") and outer != inner
    assert len(outer) == len("mount:") + 16 and "srv" not in outer and "sdb" not in outer
    assert disk_samples.identity("/srv/data diskette", mounts) == "root"  # a prefix is not a parent


def test_snapshot_of_this_machine_names_each_filesystem_once(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    fss = disk_samples.snapshot(str(tmp_path))
    assert len({f.identity for f in fss}) == len(fss)
    assert all(f.free > 0 for f in fss)
    assert "working directory" in fss[0].roles


# ── the advisory verdict ───────────────────────────────────────────────────────────────


def test_p90_above_80_percent_of_headroom_advises_and_never_blocks():
    fs = disk_samples.Fs("root", "/", 10_000, ["working directory"])
    sig = "cargo:build|repo:git|cwd:repo-root"
    found, missing = disk.advise({f"{sig}|root": {"n": 40, "p90": 8_001, "latest": 1}}, sig, [fs])
    assert missing == [] and found[0].outcome == "unsatisfied" and not found[0].blocking
    assert "p90 of the last 40 runs" in found[0].message
    found, _ = disk.advise({f"{sig}|root": {"n": 40, "p90": 8_000, "latest": 1}}, sig, [fs])
    assert found[0].outcome == "satisfied"  # exactly 80% is not "exceeds"
    found, missing = disk.advise({}, sig, [fs])
    assert found == [] and missing == [f"no history for {sig}|root"]
    found, missing = disk.advise(None, sig, [fs])
    assert found == [] and "UNKNOWN" in missing[0]


# ── real deltas through the hook ───────────────────────────────────────────────────────


def _local_config(env, work: Path) -> str:
    """Governed plane on a local-file store: the advisory reads the cache; nothing is queued."""
    endpoint = f"file:{work}/catalogue.ttl"
    env.user_config(f'[yupana.policy]\nmode = "advise"\n[yupana.quipu]\nenabled = true\nendpoint = "{endpoint}"\n')
    return endpoint


def _write_blob(path: Path, size: int) -> None:
    chunk = os.urandom(MIB)
    with open(path, "wb") as fh:
        for _ in range(size // MIB):
            fh.write(chunk)
        fh.flush()
        os.fsync(fh.fileno())


def _drop(path: Path) -> None:
    path.unlink()
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.sync()


def _locations(tmp_path: Path) -> list[Path]:
    out = [tmp_path / "work"]
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        out.append(shm / f"yupana-test-{os.getpid()}-{tmp_path.name}")
    return out


@pytest.mark.parametrize("where", ["disk", "tmpfs"])
def test_real_deltas_are_signed_and_recorded_per_filesystem(env, tmp_path, where):
    """Write and delete files of known size between matching commands; the recorded deltas
    are the written size, positive then negative. The disk is shared with other processes,
    so its noise gets a slack (a few percent, a few MiB) and up to three attempts."""
    places = _locations(tmp_path)
    if where == "tmpfs" and len(places) < 2:
        pytest.skip("no writable /dev/shm")
    work = places[0 if where == "disk" else 1]
    work.mkdir(parents=True)
    sizes = (128 * MIB, 64 * MIB)
    total = sum(sizes)
    slack = (6 * MIB + total * 3 // 100) if where == "disk" else 2 * MIB
    try:
        endpoint = _local_config(env, work)
        write_cache(env, endpoint=endpoint, disk_history={})
        ident = disk_samples.identity(os.path.realpath(work), disk_samples.read_mounts())
        if disk_samples.free_bytes(str(work)) < 4 * total:
            pytest.skip("not enough free space for the real-delta test")
        seen = []
        for attempt in range(3):
            session = f"delta-{attempt}"
            assert hook(env, "dd if=/dev/zero of=blob bs=1M count=128", cwd=work, session=session).stdout == b""
            _write_blob(work / "blob", sizes[0])
            _write_blob(work / "blob2", sizes[1])
            assert hook(env, "cp blob blob3", cwd=work, session=session).stdout == b""  # closes the dd sample
            _drop(work / "blob")
            _drop(work / "blob2")
            hook(env, "truncate -s 0 nothing", cwd=work, session=session)             # closes the cp sample
            samples = [r for r in env.records("disk_sample") if r["fs"] == ident and r["session"] == session]
            assert [r["signature"] for r in samples] == ["dd:|repo:none|cwd:tmp", "cp:|repo:none|cwd:tmp"]
            assert all(r["queued"] is False and "local files" in r["reason"] for r in samples)
            consumed, freed = samples[0]["delta_bytes"], samples[1]["delta_bytes"]
            seen.append((consumed, freed))
            if abs(consumed - total) <= slack and abs(freed + total) <= slack:
                break
        else:
            pytest.fail(f"deltas {seen} are not within {slack} bytes of +/-{total}")
        assert not any(str(work) in json.dumps(r) for r in env.records())  # no paths in the spool
        unknown = env.records("disk_guard_unknown")
        assert "no history for dd:|repo:none|cwd:tmp|" in unknown[0]["reason"]
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)


def test_the_p90_advisory_speaks_against_real_headroom(env, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    endpoint = _local_config(env, work)
    sig = "cargo:build|repo:none|cwd:tmp"
    ident = disk_samples.identity(os.path.realpath(work), disk_samples.read_mounts())
    free = disk_samples.free_bytes(str(work))
    write_cache(env, endpoint=endpoint, disk_history={f"{sig}|{ident}": {"n": 57, "p90": free, "latest": 1}})
    out = output(hook(env, "cargo build --release", cwd=work))
    assert "hookSpecificOutput" not in out
    message = out["systemMessage"]
    assert "disk advisory, governed, not blocking" in message and "p90 of the last 57 runs" in message
    assert "policy fresh" in message
    [rec] = env.records("disk_advisory")
    assert rec["signature"] == sig and rec["fs"] == ident and rec["p90_bytes"] == free and rec["samples"] == 57

    write_cache(env, endpoint=endpoint, disk_history={f"{sig}|{ident}": {"n": 57, "p90": free // 2, "latest": 1}})
    assert hook(env, "cargo build --release", cwd=work).stdout == b""
    assert len(env.records("disk_advisory")) == 1


def test_no_history_is_unknown_and_silent(env, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    endpoint = _local_config(env, work)
    write_cache(env, endpoint=endpoint, disk_history=None)
    assert hook(env, "cargo build", cwd=work).stdout == b""
    [rec] = env.records("disk_guard_unknown")
    assert "no disk history" in rec["reason"] and rec["signature"] == "cargo:build|repo:none|cwd:tmp"


def test_unrelated_commands_pay_nothing(env, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    _local_config(env, work)
    write_cache(env, endpoint=f"file:{work}/catalogue.ttl", disk_history={})
    for command in ("ls -la", "git status", "echo 'cargo build'"):
        assert hook(env, command, cwd=work).stdout == b""
    kinds = {r["kind"] for r in env.records()}
    assert not {k for k in kinds if k.startswith("disk")}
    assert not (env.state / "yupana" / "disk").exists() and not (env.state / "disk").exists()


def test_mode_off_takes_no_samples(env, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    env.user_config(f'[yupana.quipu]\nenabled = true\nendpoint = "file:{work}/c.ttl"\n')
    hook(env, "cargo build", cwd=work)
    assert not {r["kind"] for r in env.records()} & {"disk_sample", "disk_guard_unknown"}


def test_samples_pair_within_a_session_only(env, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    _local_config(env, work)
    write_cache(env, endpoint=f"file:{work}/catalogue.ttl", disk_history={})
    hook(env, "cargo build", cwd=work, session="A")
    hook(env, "cargo build", cwd=work, session="B")
    assert env.records("disk_sample") == []
    hook(env, "cargo test", cwd=work, session="A")
    assert [r["signature"] for r in env.records("disk_sample")] == ["cargo:build|repo:none|cwd:tmp"]
    hook(env, "cargo test", cwd=work, session=None)
    assert "no session id" in env.records("disk_sample_dropped")[0]["reason"]


# ── the write path ─────────────────────────────────────────────────────────────────────


def _store_config(env, url: str, *, backoff: int = 60) -> None:
    env.user_config(f'[yupana.policy]\nmode = "advise"\n[yupana.quipu]\nenabled = true\nendpoint = "{url}"\n'
                    f'dialect = "quipu"\nrefresh_backoff_secs = {backoff}\n')


def _queue(env, endpoint: str, session: str, samples: list[tuple[str, str, int, int]]) -> Path:
    """Queue samples exactly as the hook does (same module, the test's state directory)."""
    saved = dict(os.environ)
    os.environ.update({"XDG_STATE_HOME": str(env.state), "HOME": str(env.home)})
    try:
        err = disk_samples.enqueue(endpoint, session, [{"signature": s, "fs": f, "delta": d, "at": a}
                                                       for s, f, d, a in samples])
        assert err is None
        return Path(disk_samples.queue_path(endpoint))
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _flush(env, url: str, token: str | None, root: Path):
    run_env = dict(env)
    if token is not None:
        run_env["QUIPU_AUTH_TOKEN"] = token
    proc = run_yupana(["disk-flush", "--endpoint", url, "--root", str(root)], run_env, cwd=str(root))
    assert proc.returncode == 0, proc.stderr.decode()


def _observations(server) -> list[dict]:
    rows = server.store.query(
        f"SELECT ?o ?sig ?fs ?d ?at WHERE {{ ?o a <{AEGIS}CommandDiskImpactObservation> ; <{AEGIS}commandSignature> ?sig ;"
        f" <{AEGIS}filesystemIdentity> ?fs ; <{AEGIS}deltaBytes> ?d ; <{AEGIS}observedAt> ?at }}")
    return [{"o": r["o"].value, "sig": r["sig"].value, "fs": r["fs"].value, "delta": int(r["d"].value),
             "at": int(r["at"].value)} for r in rows]


SAMPLES = [("cargo:build|repo:git|cwd:repo-root", "root", 734003200, 1780000000),
           ("cargo:build|repo:git|cwd:repo-root", "mount:5d41402abc4b2a76", -1048576, 1780000100)]


def test_accepted_writes_conform_to_the_shape_and_carry_no_paths(env, quipu_server, tmp_path):
    server = quipu_server(auth_token="s3cret")
    _store_config(env, server.url)
    _queue(env, server.url, "sess-1", SAMPLES)
    _flush(env, server.url, "s3cret", tmp_path)
    found = sorted(_observations(server), key=lambda o: o["at"])
    assert [(o["sig"], o["fs"], o["delta"], o["at"]) for o in found] == SAMPLES
    [knot] = [r for r in server.requests if r.path == "/knot"]
    assert knot.headers.get("authorization") == "Bearer s3cret"
    assert "sess-1" not in knot.body.decode() and "/" not in json.loads(knot.body)["turtle"].split("ontology/>", 1)[1]
    assert env.records("disk_written")[0]["samples"] == 2
    assert not list((env.state / "yupana" / "disk").glob("queue-*.jsonl"))  # drained: nothing kept
    _flush(env, server.url, "s3cret", tmp_path)  # an empty queue writes nothing more
    assert len([r for r in server.requests if r.path == "/knot"]) == 1
    from pyshacl import validate

    data = "@prefix aegis: <http://aegis.gastown.local/ontology/> .\n" + "".join(
        f"<{o['o']}> a aegis:CommandDiskImpactObservation ; aegis:commandSignature \"{o['sig']}\" ; "
        f"aegis:filesystemIdentity \"{o['fs']}\" ; aegis:deltaBytes {o['delta']} ; aegis:observedAt {o['at']} .\n"
        for o in found)
    from rdflib import Graph

    # parsed Graphs, not paths: pyshacl would load paths into an rdflib Dataset, whose
    # default_context (deprecated in rdflib 7) raised a DeprecationWarning per triple lookup
    conforms, _, text = validate(Graph().parse(data=data, format="turtle"),
                                 shacl_graph=Graph().parse(REPO / "shapes" / "disk-impact.ttl", format="turtle"))
    assert conforms, text


def test_a_refused_token_disables_writes_for_the_session_and_reads_go_on(env, quipu_server, tmp_path):
    server = quipu_server(auth_token="right")
    _store_config(env, server.url)
    _queue(env, server.url, "sess-9", SAMPLES)
    _flush(env, server.url, "wrong", tmp_path)
    assert _observations(server) == []
    [auth] = env.records("quipu_auth_failure")
    assert auth["session"] == "sess-9" and auth["writes_disabled"] is True and "401" in auth["reason"]
    assert "right" not in json.dumps(env.records()) and "wrong" not in json.dumps(env.records())
    failed = env.records("disk_write_failed")[-1]
    assert failed["kept"] is False and failed["samples"] == 2
    assert (env.state / "yupana" / "disk" / "noauth-sess-9").exists()

    # The hook no longer queues for that session; the advisory (a read of the cache) goes on.
    work = tmp_path / "work"
    work.mkdir()
    ident = disk_samples.identity(os.path.realpath(work), disk_samples.read_mounts())
    sig = "cargo:build|repo:none|cwd:tmp"
    write_cache(env, endpoint=server.url, disk_history={f"{sig}|{ident}": {"n": 3, "p90": 1 << 60, "latest": 1}})
    hook(env, "cargo build", cwd=work, session="sess-9")
    out = output(hook(env, "cargo build", cwd=work, session="sess-9", extra_env={"QUIPU_AUTH_TOKEN": "wrong"}))
    assert "disk advisory" in out["systemMessage"]
    [sample] = [r for r in env.records("disk_sample") if r["fs"] == ident]
    assert sample["queued"] is False and "credentials" in sample["reason"]
    assert not list((env.state / "yupana" / "disk").glob("queue-*.jsonl"))  # nothing queued for the session


def test_a_read_only_store_403_is_a_credential_failure_too(env, quipu_server, tmp_path):
    server = quipu_server(read_only=True)
    _store_config(env, server.url)
    _queue(env, server.url, "sess-ro", SAMPLES)
    _flush(env, server.url, "tok", tmp_path)
    [auth] = env.records("quipu_auth_failure")
    assert auth["session"] == "sess-ro" and "read-only" in auth["reason"]
    assert (env.state / "yupana" / "disk" / "noauth-sess-ro").exists()


def test_a_store_that_is_down_keeps_the_queue_with_the_reason(env, tmp_path):
    url = "http://127.0.0.1:9"
    _store_config(env, url)
    queue = _queue(env, url, "sess-2", SAMPLES)
    _flush(env, url, "tok", tmp_path)
    [failed] = env.records("disk_write_failed")
    assert failed["kept"] is True and failed["samples"] == 2 and "connect" in failed["reason"]
    kept = list(queue.parent.glob("*.jsonl"))
    assert kept and sum(len(p.read_text().splitlines()) for p in kept) == 2
    state = json.loads(Path(str(queue)[: -len(".jsonl")] + ".state").read_text())
    assert state["retry_after"] > time.time() and "connect" in state["last_error"]


def test_queued_lines_that_would_leak_a_path_are_dropped_not_written(env, quipu_server, tmp_path):
    server = quipu_server()
    _store_config(env, server.url)
    queue = _queue(env, server.url, "s", SAMPLES[:1])
    with open(queue, "a") as fh:
        fh.write(json.dumps({"signature": "cp:|repo:none|cwd:/home/alice/secret", "fs": "root", "delta": 1, "at": 1,
                             "session": "s", "id": "00ff00ff00ff00ff"}) + "\n")
        fh.write(json.dumps({"signature": "cp:|repo:none|cwd:tmp", "fs": "/dev/sda1", "delta": 1, "at": 1,
                             "session": "s", "id": "00ff00ff00ff00fe"}) + "\n")
        fh.write("not json\n")
    _flush(env, server.url, None, tmp_path)
    assert [(o["sig"], o["fs"]) for o in _observations(server)] == [SAMPLES[0][:2]]
    assert "alice" not in b"".join(r.body for r in server.requests).decode()
    dropped = [r for r in env.records("disk_write_failed") if r["kept"] is False]
    assert dropped and dropped[0]["samples"] == 3


def test_a_store_that_stays_down_cannot_grow_the_queue_without_bound(env, tmp_path, monkeypatch):
    from yupana.workers import disk_flush

    url = "http://127.0.0.1:9"
    _store_config(env, url)
    n = disk_flush.MAX_QUEUED + 25
    _queue(env, url, "s", [("dd:|repo:none|cwd:tmp", "root", i, 1780000000 + i) for i in range(n)])
    _flush(env, url, None, tmp_path)
    [draining] = (env.state / "yupana" / "disk").glob("*.draining.jsonl")
    kept = [json.loads(line) for line in draining.read_text().splitlines()]
    assert len(kept) == disk_flush.MAX_QUEUED and kept[0]["delta"] == 25 and kept[-1]["delta"] == n - 1
    assert any(r["samples"] == 25 and "overflowed" in r["reason"] for r in env.records("disk_write_failed"))


def test_the_hook_queues_and_a_detached_worker_writes(env, quipu_server, tmp_path):
    server = quipu_server(auth_token="tok")
    _store_config(env, server.url)
    work = tmp_path / "work"
    work.mkdir()
    write_cache(env, endpoint=server.url, disk_history={})
    extra = {"QUIPU_AUTH_TOKEN": "tok"}
    hook(env, "fallocate -l 32M blob", cwd=work, extra_env=extra)
    _write_blob(work / "blob", 32 * MIB)
    hook(env, "fallocate -l 32M blob2", cwd=work, extra_env=extra)
    deadline = time.time() + 30
    while time.time() < deadline and not _observations(server):
        time.sleep(0.2)
    found = _observations(server)
    assert found, f"the detached disk-flush wrote nothing; spool: {env.records()}"
    ident = disk_samples.identity(os.path.realpath(work), disk_samples.read_mounts())
    mine = [o for o in found if o["fs"] == ident]
    assert mine and mine[0]["sig"] == "fallocate:|repo:none|cwd:tmp"
    [recorded] = [r for r in env.records("disk_sample") if r["fs"] == ident]
    assert mine[0]["delta"] == recorded["delta_bytes"] and recorded["queued"] is True
    assert mine[0]["delta"] > 16 * MIB  # 32 MiB written; the shared disk adds noise either way


def test_sparql11_stores_get_insert_data(env, oxigraph_server, tmp_path):
    from servers import oxigraph

    url = oxigraph_server(fresh=True)
    env.user_config(f'[yupana.policy]\nmode = "advise"\n[yupana.quipu]\nenabled = true\nendpoint = "{url}"\n'
                    f'dialect = "sparql11"\nupdate_endpoint = "{oxigraph.update_url(url)}"\n')
    _queue(env, url, "sess-3", SAMPLES)
    _flush(env, url, None, tmp_path)
    import httpx

    reply = httpx.post(url, data={"query": f"SELECT (COUNT(?o) AS ?n) WHERE {{ ?o a <{AEGIS}CommandDiskImpactObservation> }}"},
                       headers={"Accept": "application/sparql-results+json"})
    assert reply.json()["results"]["bindings"][0]["n"]["value"] == "2"
    assert env.records("disk_written")[0]["samples"] == 2


def test_projected_history_is_the_nearest_rank_p90_of_written_samples(env, quipu_server, tmp_path):
    """What the hook writes, the projection reads back as the history the advisory uses."""
    from yupana.config import Quipu
    from yupana.endpoint import open_endpoint
    from yupana.endpoint.base import Deadline
    from yupana.projection.refresh import project

    server = quipu_server(auth_token="tok")
    _store_config(env, server.url)
    sig = "cargo:build|repo:git|cwd:repo-root"
    deltas = [100, -50, 900, 300, 700, 200, 400, 600, 500, 800, 1000]
    _queue(env, server.url, "s", [(sig, "root", d, 1780000000 + i) for i, d in enumerate(deltas)])
    _flush(env, server.url, "tok", tmp_path)
    quipu = Quipu(enabled=True, endpoint=server.url, dialect="quipu").model_dump()
    ep = open_endpoint(quipu)
    try:
        history = project(ep, quipu, Deadline(30), env={}).cache["disk_history"]
    finally:
        ep.close()
    ordered = sorted(deltas)
    assert history[f"{sig}|root"]["n"] == len(deltas)
    assert history[f"{sig}|root"]["p90"] == ordered[-(-9 * len(deltas) // 10) - 1] == 900
