"""Cheap checks are never cut by CPU contention (issue 25 §3), through the real hook.

A hook that waited for a CPU finds its ``deadline_ms`` gone before it has done any work.
The deadline may then abandon only what grows with the tree or the buffer (structural
policies, verify, blast radius, text rules on a text beyond the bound); the checks of
bounded cost — path scope, self-protection, tripwires, and text rules and grounded
predicates on introduced text of at most 65536 characters — run to completion and decide.
A 1 ms deadline stands in for a starved process: no timing is asserted.
"""

from __future__ import annotations

import json
import time

from guard_kit import AEGIS, Repo, hook, text_rule, write_cache

ENDPOINT = "http://127.0.0.1:9"
BOUND = 65536  # yupana.evaluate.text_rules.BOUNDED_CHARS
SECRET = "AKIAIOSFODNN7EXAMPLE"
AWS = text_rule("rule_aws_key", r"\bAKIA[0-9A-Z]{16}\b", label="no AWS access keys")
LOCAL_RULE = ('[[yupana.policy.rules]]\nname = "no-ticket-in-comment"\nlanguage = "rust"\n'
              'query = "(line_comment) @c"\nmatch_type = "must-not-match"\npattern = "[A-Z]+-[0-9]+"\n'
              'message = "Ticket ids belong in the tracker."\n')


def _config(deadline_ms: int = 1, extra: str = "") -> str:
    return (f'[yupana.policy]\nmode = "enforce"\ndeadline_ms = {deadline_ms}\n{extra}'
            f'[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\ndialect = "quipu"\n')


def _public(env) -> None:
    path = env.cache_for(ENDPOINT).parent / "exposure.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"exposure": "public", "at": int(time.time())}
    path.write_text(json.dumps({"version": 1, "entries": {f"{ENDPOINT}|widgets": entry}}))


def _repo(env, tmp_path, extra: str = "") -> Repo:
    write_cache(env, ENDPOINT, text_rules=[AWS])
    _public(env)
    return Repo(tmp_path / "repo", env).config(_config(extra=extra))


def _cuts(env) -> list[str]:
    return [r["stage"] for r in env.records("fail_open") if r["fail_kind"] == "deadline"]


def _padded(size: int, tail: str) -> str:
    """``size`` characters of prose ending with ``tail``."""
    line = "Some prose about the widget and the runbook for its rollouts.\n"
    body = line * (size // len(line) + 1)
    return body[: size - len(tail)] + tail


def test_a_secret_in_a_small_edit_is_denied_while_the_structural_check_is_cut(env, tmp_path):
    repo = _repo(env, tmp_path, extra=LOCAL_RULE)
    repo.file("src/lib.rs", "fn a() {}\n" * 4000)  # the buffer the structural rule would parse
    done = hook(env, repo.payload(rel="src/lib.rs", old_string="fn a() {}",
                                  new_string=f'// OPS-1\nconst KEY: &str = "{SECRET}";'))
    assert done.denied and SECRET in done.reason and "no AWS access keys" in done.reason
    # the structural rule (tree-sitter, cost grows with the buffer) was cut: UNKNOWN, on record
    assert _cuts(env) == ["local rules"]
    guard = env.records("guard")[-1]
    assert guard["result"] == "deny" and guard["rule"] == "rule_aws_key"
    assert any({"id": "deadline", "plane": "guard", "outcome": "unknown", "response": "logged"}.items() <= c.items()
               for c in guard["constraints"])
    assert not any(c["id"] == "no-ticket-in-comment" for c in guard["constraints"])  # never judged: not clean
    assert env.records("governed")[-1]["rules"] == ["rule_aws_key"]
    assert "the remaining checks whose cost grows with the tree or the buffer are UNKNOWN" in done.stderr


def test_a_small_edit_with_nothing_to_cut_is_wholly_checked_past_the_deadline(env, tmp_path):
    repo = _repo(env, tmp_path)
    clean = hook(env, repo.payload(rel="docs/notes.md", new_string="no secret here"))
    assert clean.allowed_silently and _cuts(env) == []  # every check it has ran: no fail-open
    denied = hook(env, repo.payload(rel="docs/notes.md", new_string=f"key {SECRET}"))
    assert denied.denied and SECRET in denied.reason and _cuts(env) == []
    assert env.records("guard")[-1]["policy_freshness"] == "fresh"


def test_the_bound_is_exact_a_text_one_character_longer_is_cut(env, tmp_path):
    repo = _repo(env, tmp_path)
    at_bound = hook(env, repo.payload("Write", rel="docs/a.md", content=_padded(BOUND, "\n" + SECRET + "\n")))
    assert at_bound.denied and SECRET in at_bound.reason and _cuts(env) == []
    beyond = hook(env, repo.payload("Write", rel="docs/b.md", content=_padded(BOUND + 1, "\n" + SECRET + "\n")))
    assert not beyond.denied and "deadline" in beyond.message  # the text rules were abandoned: UNKNOWN
    assert _cuts(env) == ["governed"]
    guard = env.records("guard")[-1]
    assert guard["result"] == "notify"  # allowed, with the notice
    assert any({"id": "deadline", "plane": "guard", "outcome": "unknown", "response": "logged"}.items() <= c.items()
               for c in guard["constraints"])


def test_every_file_of_a_patch_keeps_its_bounded_checks_after_the_cut(env, tmp_path):
    repo = _repo(env, tmp_path)
    big = "".join(f"+line {i} of a generated table\n" for i in range(4000))  # ~110 KB: beyond the bound
    patch = (f"*** Begin Patch\n*** Add File: docs/table.md\n{big}"
             f"*** Add File: docs/keys.md\n+aws {SECRET}\n*** End Patch\n")
    done = hook(env, repo.patch(patch))
    assert done.denied and "docs/keys.md" in done.reason and SECRET in done.reason
    assert _cuts(env) == ["governed"]  # the first file's large text: cut; the second still decided
    guard = env.records("guard")[-1]
    assert guard["edits"] == 2 and guard["rule"] == "rule_aws_key"


def test_grounded_predicates_on_a_small_edit_decide_past_the_deadline(env, tmp_path):
    grounded = [{"iri": AEGIS + "pred_no_ticket", "name": "no-ticket", "label": "no ticket ids",
                 "match_type": "must-not-ground", "tier": "block", "rationale": None}]
    write_cache(env, ENDPOINT, grounded_rules=grounded, grounding={"ids": ["yup-12"], "prefixes": ["yup"]})
    repo = Repo(tmp_path / "repo", env).config(_config())
    done = hook(env, repo.payload(rel="docs/notes.md", new_string="see yup-99"))
    assert done.denied and "`yup-99`" in done.reason and _cuts(env) == []


def test_the_notice_names_the_bound_the_hook_applies():
    from yupana.evaluate.text_rules import BOUNDED_CHARS
    from yupana.hooks.guard_context import BOUNDED_CHECKS

    assert BOUNDED_CHARS == BOUND and f"up to {BOUNDED_CHARS} characters" in BOUNDED_CHECKS
