"""``yupana metrics`` through the real CLI, read back by prometheus_client's OpenMetrics parser,
by its Prometheus text-format parser, and by the real node_exporter's textfile collector."""

from __future__ import annotations

import json

import pytest

from tests.commands.test_status import bash, edit, post_edit, project, root, write_config  # noqa: F401 - root is a fixture

parser = pytest.importorskip("prometheus_client.openmetrics.parser")


def families(text: str) -> dict:
    return {f.name: f for f in parser.text_string_to_metric_families(text)}


def samples(fam, name: str | None = None) -> dict:
    return {tuple(sorted(s.labels.items())): s.value for s in fam.samples if name is None or s.name == name}


def test_hook_counts_latency_and_rule_set_parse_as_openmetrics(yupana, env, root):  # noqa: F811
    write_config(root, mode="enforce", extra='[yupana.policy.scopes.polecat-3]\nallow_paths = ["src/**"]')
    project(yupana, root)
    for _ in range(2):
        edit(yupana, root, "--tenant", "polecat-3")
    edit(yupana, root, "--tenant", "polecat-3", rel="docs/notes.md")
    bash(yupana, root)
    done = yupana("metrics", cwd=root)
    assert done.returncode == 0, done.stderr
    fams = families(done.stdout.decode())
    inv = samples(fams["yupana_hook_invocations"])
    results = {g["result"] for g in env.records("guard")}
    assert sum(v for k, v in inv.items() if ("hook", "pre-edit") in k) == 3 and len(results) >= 2
    assert inv[(("hook", "pre-bash"), ("result", "parsed"))] == 1
    hist = fams["yupana_hook_duration_seconds"]
    assert hist.type == "histogram"
    assert samples(hist, "yupana_hook_duration_seconds_count")[(("hook", "pre-edit"),)] == 3
    info = samples(fams["yupana_rule_set_info"])
    cached = json.loads(env.cache_path.read_text())
    ((labels, value),) = info.items()
    assert dict(labels)["digest"] == cached["digest"] and dict(labels)["state"] == "loaded" and value == 1
    assert 0 <= samples(fams["yupana_cache_age_seconds"])[()] <= 60
    assert samples(fams["yupana_rule_set_rules"])[(("plane", "text"),)] == 3
    ((labels, _),) = samples(fams["yupana_last_refresh_info"]).items()
    assert dict(labels)["outcome"] == "success"


def test_post_edit_invocations_and_latency_are_counted(yupana, env, root):  # noqa: F811
    write_config(root, mode="advise")  # work_item_scope off: every post-edit is silent, and recorded
    post_edit(yupana, root)
    post_edit(yupana, root, rel="src/other.rs")
    edit(yupana, root)
    fams = families(yupana("metrics", cwd=root).stdout.decode())
    inv = samples(fams["yupana_hook_invocations"], "yupana_hook_invocations_total")
    assert inv[(("hook", "post-edit"), ("result", "silent"))] == 2
    assert sum(v for k, v in inv.items() if ("hook", "pre-edit") in k) == 1
    hist = fams["yupana_hook_duration_seconds"]
    assert samples(hist, "yupana_hook_duration_seconds_count")[(("hook", "post-edit"),)] == 2
    total = sum(r["duration_ms"] for r in env.records("post_edit_invoked")) / 1000
    assert samples(hist, "yupana_hook_duration_seconds_sum")[(("hook", "post-edit"),)] == pytest.approx(total, abs=1e-6)


def test_fail_open_and_served_from_cache_are_counted_by_kind(yupana, env, root):  # noqa: F811
    write_config(root, mode="advise")
    lines = [{"kind": "fail_open", "hook": "pre-edit", "fail_kind": "projection", "ts": 1},
             {"kind": "fail_open", "hook": "pre-bash", "fail_kind": "config", "ts": 2},
             {"kind": "served_from_cache", "hook": "pre-edit", "age_secs": 9, "ts": 3}]
    env.spool_path.parent.mkdir(parents=True, exist_ok=True)
    env.spool_path.write_text("".join(json.dumps(r) + "\n" for r in lines) + '{"kind": "gua')  # a torn last line
    fams = families(yupana("metrics", cwd=root).stdout.decode())
    assert samples(fams["yupana_fail_open"]) == {(("hook", "pre-edit"), ("kind", "projection")): 1,
                                                 (("hook", "pre-bash"), ("kind", "config")): 1}
    assert samples(fams["yupana_served_from_cache"]) == {(("hook", "pre-edit"),): 1}
    assert dict(next(iter(samples(fams["yupana_rule_set_info"]))))["state"] == "degraded"  # no cache yet


def test_output_is_written_atomically_for_the_textfile_collector(yupana, env, root, tmp_path):  # noqa: F811
    write_config(root, endpoint=None)
    target = tmp_path / "textfile" / "yupana.prom"
    done = yupana("metrics", "--output", str(target), cwd=root)
    assert done.returncode == 0 and done.stdout == b""
    text = target.read_text()
    assert text.endswith("# EOF\n") and families(text)
    assert [p.name for p in target.parent.iterdir()] == ["yupana.prom"]  # no temp file left
    blocked = tmp_path / "file"
    blocked.write_text("x")
    bad = yupana("metrics", "--output", str(blocked / "y.prom"), cwd=root)
    assert bad.returncode == 1 and b"cannot write" in bad.stderr


PROMETHEUS_TEXT_TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}  # the text format's own set


def test_every_family_is_one_the_prometheus_text_format_knows(yupana, env, root):  # noqa: F811
    """node_exporter's textfile collector parses the Prometheus text format, which drops a whole
    file over one type it does not know (OpenMetrics' ``info``, say)."""
    write_config(root, mode="enforce")
    project(yupana, root)
    edit(yupana, root)
    text = yupana("metrics", cwd=root).stdout.decode()
    types = {line.split()[3] for line in text.splitlines() if line.startswith("# TYPE ")}
    assert types <= PROMETHEUS_TEXT_TYPES, types
    prometheus = pytest.importorskip("prometheus_client.parser")
    names = {f.name for f in prometheus.text_string_to_metric_families(text)}
    assert {"yupana_rule_set_info", "yupana_hook_duration_seconds", "yupana_hook_invocations_total"} <= names


def test_node_exporter_reads_the_file_the_timer_writes(yupana, env, root, tmp_path):  # noqa: F811
    from servers.node_exporter import NodeExporter, binary

    if binary() is None:
        pytest.skip("no node_exporter (Debian: prometheus-node-exporter)")
    write_config(root, mode="enforce")
    project(yupana, root)
    edit(yupana, root)
    textfile = tmp_path / "textfile"
    assert yupana("metrics", "--output", str(textfile / "yupana.prom"), cwd=root).returncode == 0
    exporter = NodeExporter(str(textfile)).start()
    try:
        scraped = exporter.scrape()
    finally:
        log = exporter.stop()
    assert "node_textfile_scrape_error 0" in scraped, log
    fams = {f.name: f for f in pytest.importorskip("prometheus_client.parser").text_string_to_metric_families(scraped)}
    digest = json.loads(env.cache_path.read_text())["digest"]
    ((labels, value),) = samples(fams["yupana_rule_set_info"]).items()
    assert dict(labels)["digest"] == digest and value == 1
    assert samples(fams["yupana_hook_invocations_total"])  # counters arrive untyped, by their sample name
    assert samples(fams["yupana_hook_duration_seconds"], "yupana_hook_duration_seconds_count")[(("hook", "pre-edit"),)] == 1


def test_foreign_spool_values_never_become_unbounded_label_series(yupana, env, root):  # noqa: F811
    """Issue 23 §7: 20,000 distinct foreign values became 20,002 series. Each label is bounded:
    hooks the registry names, at most MAX_VALUES slugs per label, the rest counted as `other`."""
    from yupana.commands.metrics import MAX_VALUES

    write_config(root, mode="advise")
    lines = [{"kind": "fail_open", "hook": "pre-edit", "fail_kind": "projection", "ts": 1}] * 3
    lines += [{"kind": "fail_open", "hook": f"hook-{i}", "fail_kind": f"kind-{i}", "ts": 2} for i in range(20_000)]
    lines += [{"kind": "guard", "result": f"r{i}\n\"x", "ts": 3} for i in range(500)]
    lines += [{"kind": "served_from_cache", "hook": f"h{i}", "ts": 4} for i in range(300)]
    env.spool_path.parent.mkdir(parents=True, exist_ok=True)
    env.spool_path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    done = yupana("metrics", cwd=root)
    assert done.returncode == 0, done.stderr
    fams = families(done.stdout.decode())
    fail = samples(fams["yupana_fail_open"])
    assert len(fail) <= MAX_VALUES + 1 and {dict(k)["hook"] for k in fail} == {"pre-edit", "other"}
    assert fail[(("hook", "pre-edit"), ("kind", "projection"))] == 3
    assert sum(fail.values()) == 20_003  # nothing dropped: the rest counted under `other`
    assert sum(v for k, v in fail.items() if dict(k)["kind"] == "other") > 0
    inv = samples(fams["yupana_hook_invocations"])
    assert inv == {(("hook", "pre-edit"), ("result", "other")): 500}  # not slugs: never a label
    assert samples(fams["yupana_served_from_cache"]) == {(("hook", "other"),): 300}


def test_a_fifo_refresh_lock_never_hangs_metrics(yupana, env, root):  # noqa: F811
    """Issue 23 §7: `metrics` read refresh.lock with a blocking open: a FIFO there hung it forever."""
    import os

    write_config(root, mode="enforce")
    project(yupana, root)
    lock = env.cache_path.parent / "refresh.lock"
    lock.unlink(missing_ok=True)
    os.mkfifo(lock)
    done = yupana("metrics", cwd=root, timeout=30)
    assert done.returncode == 0, done.stderr
    assert samples(families(done.stdout.decode())["yupana_rule_set_info"])


def test_invocations_are_counted_by_the_client_that_sent_them(yupana, env, root):  # noqa: F811
    write_config(root, mode="enforce")
    project(yupana, root)
    payload = {"session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "ls"}}
    for extra in ({"turn_id": "t"}, {"prompt_id": "p"}, {"prompt_id": "p"}, {}):
        assert yupana("hook", "pre-bash", stdin=json.dumps({**payload, **extra}), cwd=root).returncode == 0
    fams = families(yupana("metrics", cwd=root).stdout.decode())
    by_client = samples(fams["yupana_client_invocations"])
    assert by_client == {(("client", "claude-code"), ("hook", "pre-bash")): 2,
                         (("client", "codex"), ("hook", "pre-bash")): 1,
                         (("client", "unknown"), ("hook", "pre-bash")): 1}
