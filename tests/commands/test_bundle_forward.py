"""Bundles move forward only, and their content is checked as a projection is (issue 23 §2).

Through the real CLI: a publisher signs real bundles, a host fetches them from a real loopback
static server, and its pre-edit hook shows whether the rules it enforces survived.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from catalogue_kit import write_catalogue
from commands import test_bundle
from commands.test_bundle import build, host, project, refused
from conftest import run_yupana
from hooks.guard_kit import Repo, hook

fleet = test_bundle.fleet  # the publisher, its key and a real static server (a fixture)


def signed_host(f, name: str) -> tuple:
    """A host (a real git repository) trusting the publisher's key and fetching rules.bundle."""
    env, root = host(f, name, [f["public"]], f["server"].url + "/rules.bundle")
    Repo(root, env)
    config = root / ".bobbin" / "config.toml"
    config.write_text(config.read_text() + '\n[yupana.policy]\nmode = "enforce"\nexposure = "public"\n')
    return env, root



def rules(env) -> int:
    return len(json.loads(env.cache_path.read_text())["text_rules"])


def edit(root: Path, text: str) -> dict:
    return {"session_id": "s1", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": str(root / "notes.md"), "content": text}, "tool_use_id": "t1"}


def resign(f, mutate, *, confirmed_at: int | None = None, recount: bool = True) -> None:
    """Serve rules.bundle re-signed with the publisher's key after ``mutate(payload)``: a bundle the
    host's trusted key verifies, whose content the publisher's refresh never produced."""
    from yupana.projection import bundle
    from yupana.projection.digest import rule_set_digest

    path, built = f["srv"] / "rules.bundle", f["tmp"] / "built.bundle"
    if not built.exists():  # each mutation starts from the bundle the publisher built
        shutil.copy(path, built)
    payload = json.loads(built.read_bytes()[len(bundle.MAGIC):].partition(b"\n")[2])
    payload["written_at"] = confirmed_at or int(time.time())
    mutate(payload)
    if recount:  # as the publisher's refresh computes them
        from yupana.planes import PLANES, count

        for plane in PLANES:
            if isinstance(payload.get(plane.key), list):
                payload["counts"][plane.key] = count(plane.key, payload[plane.key])
    try:
        payload["digest"] = rule_set_digest(payload)
    except (KeyError, TypeError, AttributeError):
        pass  # a payload whose rules lack a field keeps the digest it had
    path.write_bytes(bundle.build(payload, bundle.load_private(str(f["key"]))))


def test_a_genuine_older_bundle_is_refused_as_a_rollback_and_the_newer_rules_keep_denying(fleet):
    write_catalogue(fleet["cat"], 1)
    assert build(fleet, "v1.bundle").returncode == 0
    time.sleep(1.1)  # the next build is confirmed a second later
    write_catalogue(fleet["cat"], 2)
    assert build(fleet).returncode == 0
    env, root = signed_host(fleet, "roll")
    code, out, err = project(env, root)
    assert code == 0 and rules(env) == 2, err
    assert hook(env, edit(root, "see ACME1-42"), cwd=root).denied
    shutil.copy(fleet["srv"] / "v1.bundle", fleet["srv"] / "rules.bundle")  # the server offers v1 again
    out = refused(fleet, env, root, "bundle-rollback")
    assert "older bundle is never installed over a newer one" in out["error"]
    assert hook(env, edit(root, "see ACME1-42"), cwd=root).denied  # rule 1 (v2 only) still denies
    [record] = env.records("bundle_rollback")
    assert record["offered_confirmed_at"] < record["highest_confirmed_at"]
    status = json.loads(run_yupana(["status", "--json", "--offline"], env, cwd=root).stdout)
    assert status["signed_rule_set"]["last_error_kind"] == "bundle-rollback"
    assert status["signed_rule_set"]["loaded"] is True
    text = run_yupana(["status", "--offline"], env, cwd=root).stdout.decode()
    assert "bundle-rollback" in text
    # the high-water mark outlives failures: still refused after another failed attempt
    refused(fleet, env, root, "bundle-rollback")
    # and the loss of refresh-state.json: the installed cache's confirmation is the floor
    env.cache_path.with_name("refresh-state.json").unlink()
    code, out, err = project(env, root)
    assert code == 1 and out["error_kind"] == "bundle-rollback", (out, err)
    # a rebuild (the publisher going back on purpose) is confirmed now, so it installs
    write_catalogue(fleet["cat"], 1)
    time.sleep(1.1)
    assert build(fleet).returncode == 0
    code, out, err = project(env, root)
    assert code == 0 and out["status"] == "refreshed" and rules(env) == 1, err


def test_a_signed_regex_this_host_cannot_compile_is_refused_and_the_good_cache_keeps_serving(fleet):
    assert build(fleet).returncode == 0
    env, root = signed_host(fleet, "re2")
    assert project(env, root)[0] == 0
    resign(fleet, lambda p: p["text_rules"][0].update(pattern="(?<=x)ACME0-[0-9]+"))
    out = refused(fleet, env, root, "bundle-compile")
    assert "text_rules[0]" in out["error"] and "`pattern`" in out["error"] and "RE2" in out["error"]
    assert hook(env, edit(root, "see ACME0-42"), cwd=root).denied


def test_a_signed_payload_missing_a_field_is_named_never_internal(fleet):
    assert build(fleet).returncode == 0
    env, root = signed_host(fleet, "field")
    assert project(env, root)[0] == 0
    resign(fleet, lambda p: p["text_rules"][1].pop("name"))
    out = refused(fleet, env, root, "bundle-content")
    assert "text_rules[1]" in out["error"] and "`name` is missing" in out["error"]
    resign(fleet, lambda p: p.pop("text_rules"), recount=False)  # counts still say 3: the empty guard must not be fooled
    out = refused(fleet, env, root, "bundle-content")
    assert "counts say text_rules = 3" in out["error"]
    resign(fleet, lambda p: p.update(tripwires="all of them"))
    out = refused(fleet, env, root, "bundle-content")
    assert "tripwires" in out["error"]
    resign(fleet, lambda p: p.update(tripwires=[{"name": "w", "paths": ["src/[z-a].rs"], "effect": "deny"}]))
    out = refused(fleet, env, root, "bundle-compile")
    assert "tripwires[0] (w)" in out["error"] and "`paths`" in out["error"]
    assert hook(env, edit(root, "see ACME2-42"), cwd=root).denied


class Always304(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(304)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_304_with_no_bundle_installed_is_a_named_refusal(fleet):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Always304)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env, root = host(fleet, "n304", [fleet["public"]], f"http://127.0.0.1:{server.server_address[1]}/rules.bundle")
        code, out, err = project(env, root)
        assert code == 1 and out["error_kind"] == "bundle-unsolicited-304", (out, err)
        assert "Traceback" not in err and "internal" not in err
        assert not env.cache_path.exists()
    finally:
        server.shutdown()
        server.server_close()


def test_garbage_and_an_unknown_key_are_refused_at_the_first_lines_and_nothing_is_left_on_disk(fleet):
    assert build(fleet).returncode == 0
    env, root = signed_host(fleet, "junk")
    assert project(env, root)[0] == 0
    served = fleet["srv"] / "rules.bundle"
    block = os.urandom(1 << 20)
    served.write_bytes(b"<html>not a bundle</html>\n" + block * 16)
    out = refused(fleet, env, root, "bundle-format")
    assert "does not start with yupana-bundle/1" in out["error"]
    header = {"key_id": "ed25519:0123456789abcdef", "signature": "AAAA", "digest": None, "endpoint": None,
              "confirmed_at": 0}
    served.write_bytes(b"yupana-bundle/1\n" + json.dumps(header).encode() + b"\n" + block * 16)
    refused(fleet, env, root, "bundle-unknown-key")
    served.write_bytes(b"yupana-bundle/1\n" + b"{" * (128 << 10))  # a header line that never ends
    out = refused(fleet, env, root, "bundle-format")
    assert "header is longer than" in out["error"]
    assert not list(env.cache_path.parent.glob("bundle.download*"))
    assert hook(env, edit(root, "see ACME0-42"), cwd=root).denied


def test_a_trusted_header_over_a_forged_payload_is_refused_and_the_download_removed(fleet):
    assert build(fleet).returncode == 0
    env, root = signed_host(fleet, "forged")
    assert project(env, root)[0] == 0
    served = fleet["srv"] / "rules.bundle"
    magic, _, rest = served.read_bytes().partition(b"\n")
    header, _, payload = rest.partition(b"\n")
    served.write_bytes(magic + b"\n" + header + b"\n" + payload.replace(b"ACME0", b"ACME9"))
    refused(fleet, env, root, "bundle-signature")
    assert not list(env.cache_path.parent.glob("bundle.download*"))


def test_a_file_url_bundle_goes_through_the_same_streamed_checks(fleet):
    assert build(fleet).returncode == 0
    env, root = host(fleet, "local", [fleet["public"]], "file:" + str(fleet["srv"] / "rules.bundle"))
    code, out, err = project(env, root)
    assert code == 0 and out["status"] == "refreshed", err
    (fleet["srv"] / "rules.bundle").write_bytes(b"yupana-bundle/1\n")
    out = refused(fleet, env, root, "bundle-format")
    assert "ends before its header line" in out["error"]
    assert not list(env.cache_path.parent.glob("bundle.download*"))
