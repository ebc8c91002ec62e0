"""An empty answer never silently replaces a catalogue that governed rules (issue 9 §3),
through the real CLI: a missing graph on Virtuoso, an empty Oxigraph, an emptied file; the
operator's explicit ``--accept-empty``; the background worker that never accepts it; the
loud first projection of an empty catalogue."""

from __future__ import annotations

import json
import time
from pathlib import Path

from catalogue_kit import PREFIXES, configure, write_catalogue


def refused(done) -> str:
    err = done.stderr.decode()
    assert done.returncode != 0, done.stdout
    assert "refresh FAILED (empty)" in err and "governs 3" in err and "--accept-empty" in err, err
    return err


def test_a_missing_virtuoso_graph_is_another_dataset_loudly_empty(yupana, env, tmp_path, virtuoso_server):
    # A default graph names a dataset of its own (issue 23 §1): a mistyped one is never served the
    # good graph's rules as its own, and its empty answer is stored loudly in its own directory,
    # leaving the good graph's cache as it was.
    server = virtuoso_server()
    write_catalogue(tmp_path / "cat", 3)
    server.load_turtle(str(tmp_path / "cat" / "catalogue.ttl"), "http://yupana.test/empty-good")
    root = tmp_path / "project"
    configure(root, server.url, dialect="sparql11", default_graph="http://yupana.test/empty-good")
    assert yupana("project", cwd=root).returncode == 0
    good = env.cache_for(server.url, default_graph="http://yupana.test/empty-good")
    before = good.read_bytes()
    configure(root, server.url, dialect="sparql11", default_graph="http://yupana.test/no-such-graph")
    done = yupana("project", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "EMPTY" in done.stderr.decode() and "default_graph" in done.stderr.decode()
    assert good.read_bytes() == before
    typo = env.cache_for(server.url, default_graph="http://yupana.test/no-such-graph")
    assert json.loads(typo.read_text())["text_rules"] == []
    # the good graph emptied later (the same dataset) is refused until accepted
    configure(root, server.url, dialect="sparql11", default_graph="http://yupana.test/empty-good")
    server.clear("http://yupana.test/empty-good")
    err = refused(yupana("project", cwd=root))
    assert "default_graph" in err and "prior cache kept" in err
    assert good.read_bytes() == before  # the rules keep serving
    done = yupana("project", "--accept-empty", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "accepted an empty catalogue" in done.stderr.decode()
    assert json.loads(good.read_text())["text_rules"] == []


def test_an_empty_oxigraph_behind_the_same_url_is_refused(yupana, env, tmp_path, oxigraph_server):
    write_catalogue(tmp_path / "cat", 3)
    full = oxigraph_server(tmp_path / "cat" / "catalogue.ttl", fresh=True)
    root = tmp_path / "project"
    configure(root, full, dialect="sparql11")
    assert yupana("project", cwd=root).returncode == 0
    before = env.cache_path.read_bytes()
    # The store is wiped (a reload gone wrong): the same URL now answers with nothing.
    from urllib.request import Request, urlopen

    from servers.oxigraph import update_url

    urlopen(Request(update_url(full), data=b"update=CLEAR%20ALL", method="POST"), timeout=10).read()
    refused(yupana("project", cwd=root))
    assert env.cache_path.read_bytes() == before


def test_the_background_worker_never_accepts_an_empty_answer(yupana, env, tmp_path):
    root = tmp_path / "project"
    write_catalogue(root / "cat", 3)
    configure(root, "file:cat", refresh_interval_secs=0)
    assert yupana("project", cwd=root).returncode == 0
    before = env.cache_path.read_bytes()
    (root / "cat" / "catalogue.ttl").write_text(PREFIXES)
    time.sleep(1.1)  # due: older than refresh_interval_secs = 0
    yupana("refresh-worker", "--root", str(root))  # exits non-zero on a failed refresh, silently
    assert "refresh FAILED" in (env.cache_path.parent / "refresh.log").read_text().splitlines()[-1]
    assert env.cache_path.read_bytes() == before
    state = json.loads((env.cache_path.parent / "refresh-state.json").read_text())
    assert state["last_error_kind"] == "empty"


def test_the_first_projection_of_an_empty_catalogue_says_so_loudly(yupana, env, tmp_path):
    root = tmp_path / "project"
    (root / "cat").mkdir(parents=True)
    (root / "cat" / "catalogue.ttl").write_text(PREFIXES)
    configure(root, "file:cat")
    done = yupana("project", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "EMPTY CATALOGUE" in done.stderr.decode() and "default_graph" in done.stderr.decode()
    assert "catalogue is EMPTY" in done.stdout.decode()
    status = yupana("status", cwd=root)
    assert "empty" in status.stdout.decode()
    assert Path(env.cache_path).exists()


def _guarded(root: Path, n: int, **quipu) -> None:
    write_catalogue(root / "cat", n)
    configure(root, "file:cat", **quipu)
    text = (root / ".bobbin" / "config.toml").read_text()
    (root / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "enforce"\nexposure = "public"\n' + text)


def _denies(yupana, root: Path, ticket: str) -> bool:
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "lib.rs").write_text("old\n")
    payload = {"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": str(root), "permission_mode": "default",
               "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / "src" / "lib.rs"), "old_string": "old",
                              "new_string": f"// see {ticket}"}}
    done = yupana("hook", "pre-edit", cwd=root, stdin=json.dumps(payload))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout) if done.stdout.strip() else {}
    return (out.get("hookSpecificOutput") or {}).get("permissionDecision") == "deny"


def test_a_store_reloaded_with_a_twentieth_of_its_rules_is_refused_until_accepted(yupana, env, tmp_path):
    root = tmp_path / "project"
    _guarded(root, 20)
    assert yupana("project", cwd=root).returncode == 0
    before = env.cache_path.read_bytes()
    write_catalogue(root / "cat", 1)  # the reload went wrong: 1 rule of 20
    done = yupana("project", cwd=root)
    err = done.stderr.decode()
    assert done.returncode != 0 and "refresh FAILED (shrink)" in err, err
    assert "1 governed rules" in err and "governs 20" in err and "95% fewer" in err and "max_shrink = 0.5" in err
    assert "--accept-shrink" in err
    assert env.cache_path.read_bytes() == before and _denies(yupana, root, "ACME7-1")  # the 20 keep serving
    # the background worker never accepts it
    yupana("refresh-worker", "--root", str(root), "--force")
    assert json.loads((env.cache_path.parent / "refresh-state.json").read_text())["last_error_kind"] == "shrink"
    assert env.cache_path.read_bytes() == before
    done = yupana("project", "--accept-shrink", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "accepted a shrunken catalogue" in done.stderr.decode()
    assert json.loads(env.cache_path.read_text())["counts"]["text_rules"] == 1
    assert not _denies(yupana, root, "ACME7-1")


def test_a_shrink_within_max_shrink_is_installed(yupana, env, tmp_path):
    root = tmp_path / "project"
    _guarded(root, 4, max_shrink=0.8)
    assert yupana("project", cwd=root).returncode == 0
    write_catalogue(root / "cat", 1)  # 75% fewer: within 0.8
    done = yupana("project", cwd=root)
    assert done.returncode == 0, done.stderr
    assert json.loads(env.cache_path.read_text())["counts"]["text_rules"] == 1
