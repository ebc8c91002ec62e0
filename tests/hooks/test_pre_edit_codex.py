"""Codex apply_patch through the real hook: every file evaluated, strongest outcome, moves checked at
both ends, advisories through additionalContext, patch problems UNKNOWN and never a clean allow."""

from __future__ import annotations

import shutil

import pytest
from conftest import CODEX_FIXTURES
from guard_kit import Repo, hook

SCOPE = """
[yupana.policy]
mode = "{mode}"
[yupana.policy.scopes.polecat-3]
allow_paths = ["src/**", "tests/**"]
deny_paths = ["src/config.rs"]
"""


@pytest.fixture
def repo(tmp_path, env):
    repo = Repo(tmp_path / "repo", env).config(SCOPE.format(mode="enforce"))
    repo.file("src/lib.rs", "fn a() {}\nfn b() {}\n")
    repo.file("src/config.rs", "pub const X: u8 = 1;\n")
    return repo


def _patch(*sections: str) -> str:
    return "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"


ADD_OK = "*** Add File: src/new.rs\n+fn n() {}\n"
ADD_OUT = "*** Add File: docs/notes.md\n+hello\n"
UPDATE_CONFIG = "*** Update File: src/config.rs\n@@\n-pub const X: u8 = 1;\n+pub const X: u8 = 2;\n"


def test_strongest_outcome_across_the_patch(env, repo):
    result = hook(env, repo.patch(_patch(ADD_OK, UPDATE_CONFIG)), "--tenant", "polecat-3")
    assert result.denied and "src/config.rs" in result.reason
    guard = env.records("guard")[-1]
    assert guard["edits"] == 2 and guard["tool"] == "apply_patch" and guard["tool_use_id"] == "call_7"
    assert guard["session"] == "sess-1" and guard["result"] == "deny"
    assert [c["outcome"] for c in guard["constraints"]] == ["satisfied", "unsatisfied"]


def test_every_file_is_reported(env, repo):
    result = hook(env, repo.patch(_patch(ADD_OUT, UPDATE_CONFIG)), "--tenant", "polecat-3")
    assert "docs/notes.md" in result.reason and "src/config.rs" in result.reason


def test_clean_patch_is_silent(env, repo):
    update = "*** Update File: src/lib.rs\n@@\n fn a() {}\n-fn b() {}\n+fn b() { a() }\n"
    assert hook(env, repo.patch(_patch(ADD_OK, update)), "--tenant", "polecat-3").allowed_silently


@pytest.mark.parametrize("source,dest", [("src/config.rs", "src/settings.rs"), ("src/lib.rs", "src/config.rs"),
                                         ("src/lib.rs", "docs/lib.rs")])
def test_moves_check_source_and_destination(env, repo, source, dest):
    move = f"*** Update File: {source}\n*** Move to: {dest}\n"
    body = "@@\n-pub const X: u8 = 1;\n+pub const X: u8 = 3;\n" if source == "src/config.rs" else "@@\n fn a() {}\n"
    result = hook(env, repo.patch(_patch(move + body)), "--tenant", "polecat-3")
    assert result.denied


def test_advisories_reach_the_model_through_additional_context(env, repo):
    repo.config(SCOPE.format(mode="advise"))
    result = hook(env, repo.patch(_patch(UPDATE_CONFIG)), "--tenant", "polecat-3")
    assert not result.denied
    assert "src/config.rs" in result.context and result.out["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in result.out["hookSpecificOutput"]


def test_missing_anchor_is_unknown_with_a_fail_open_advisory_never_a_clean_allow(env, repo):
    broken = "*** Update File: src/lib.rs\n@@\n-fn nowhere() {}\n+fn somewhere() {}\n"
    for _ in range(2):  # every such patch, not once per session
        result = hook(env, repo.patch(_patch(broken)), "--tenant", "polecat-3")
        assert not result.denied and not result.allowed_silently
        assert "anchor missing" in result.context and "UNGUARDED" in result.stderr  # the model is told what to fix
        assert "send a patch whose context matches" in result.context and "UNGUARDED" not in result.context
    guard = env.records("guard")[-1]
    assert {"id": "apply_patch", "plane": "patch", "outcome": "unknown", "response": "logged"} in guard["constraints"]
    assert [r["fail_kind"] for r in env.records("fail_open")] == ["patch", "patch"]
    assert env.records("fail_open")[0]["tool_use_id"] == "call_7"


def test_unsupported_syntax_is_unknown_even_with_no_files(env, repo):
    result = hook(env, repo.patch("*** Begin Patch\n*** Frobnicate File: x\n*** End Patch\n"), "--tenant", "polecat-3")
    assert "not a valid section header" in result.context and result.message


def test_mode_off_is_inert_for_patches_too(env, repo):
    repo.config(SCOPE.format(mode="off"))
    broken = "*** Update File: src/lib.rs\n@@\n-fn nowhere() {}\n+x\n"
    assert hook(env, repo.patch(_patch(broken, UPDATE_CONFIG)), "--tenant", "polecat-3").allowed_silently


def test_heredoc_wrapper_and_absolute_paths(env, repo):
    patch = f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {repo.root}/src/config.rs\n+x\n*** End Patch\nEOF\n"
    assert hook(env, repo.patch(patch), "--tenant", "polecat-3").denied


SCENARIOS = sorted(p.name for p in CODEX_FIXTURES.iterdir() if p.is_dir()) if CODEX_FIXTURES.is_dir() else []
FAILING = {"005", "006", "007", "008", "009", "012", "013", "015"}


@pytest.mark.skipif(not SCENARIOS, reason="shared Codex apply_patch fixtures are absent")
@pytest.mark.parametrize("name", SCENARIOS)
def test_codex_scenarios(env, tmp_path, name):
    scenario = CODEX_FIXTURES / name
    repo = Repo(tmp_path / "repo", env).config(SCOPE.format(mode="enforce").replace('"src/**", "tests/**"', '"**"'))
    if (scenario / "input").is_dir():
        shutil.copytree(scenario / "input", repo.root, dirs_exist_ok=True)
    payload = repo.patch((scenario / "patch.txt").read_text())
    result = hook(env, payload, "--tenant", "polecat-3")
    guard = env.records("guard")[-1]
    if name[:3] in FAILING:
        assert not result.allowed_silently and "could not be read exactly" in result.context, result
        assert "UNGUARDED" in result.stderr and "UNGUARDED" not in result.context
        assert any(c["id"] == "apply_patch" and c["outcome"] == "unknown" for c in guard["constraints"])
    else:
        assert result.allowed_silently, result
        assert all(c["outcome"] == "satisfied" for c in guard["constraints"])
    # the same patch with every file it touches denied
    touched = [e for e in guard.get("constraints", []) if e["id"].startswith("scope-declared")]
    if touched:
        repo.config(SCOPE.format(mode="enforce").replace('deny_paths = ["src/config.rs"]', 'deny_paths = ["**"]'))
        assert hook(env, payload, "--tenant", "polecat-3").denied


def test_a_10_mb_patch_is_read_whole_and_its_denied_file_still_denied(env, repo):
    """A huge patch is read to its last section: the denied file after 10 MB of allowed edits stands,
    and the big sections arrive intact (the run-at-a-time reader loses no line)."""
    lines = [f"pub fn f{i}() -> u32 {{ {i} }}" for i in range(250_000)]
    big_add = "*** Add File: src/big.rs\n" + "".join(f"+{ln}\n" for ln in lines)
    big_update = ("*** Update File: src/lib.rs\n@@\n fn a() {}\n-fn b() {}\n" + "".join(f"+{ln}\n" for ln in lines)
                  + "\n+\n-\n fn c() {}\n")
    result = hook(env, repo.patch(_patch(big_add, big_update, UPDATE_CONFIG)), "--tenant", "polecat-3")
    assert result.denied and "src/config.rs" in result.reason
    guard = env.records("guard")[-1]
    assert guard["edits"] == 3


def test_the_run_reader_keeps_every_line_of_every_kind_in_order():
    from yupana.edit import apply_patch

    body = ["@@ fn a", " ctx1", " ctx2", "-gone1", "-gone2", "+new1", "+new2", "+new3", "", " ctx3", "-gone3",
            "+new4", "*** End of File"]
    patch = apply_patch.parse("*** Begin Patch\n*** Update File: x.rs\n" + "\n".join(body) + "\n"
                              "*** Add File: y.rs\n++plus\n+\n+last\n*** End Patch")
    assert patch.problems == []
    chunk = patch.ops[0].chunks[0]
    assert chunk.contexts == ["fn a"] and chunk.eof
    assert chunk.old_lines == ["ctx1", "ctx2", "gone1", "gone2", "", "ctx3", "gone3"]
    assert chunk.new_lines == ["ctx1", "ctx2", "new1", "new2", "new3", "", "ctx3", "new4"]
    assert chunk.added == ["new1", "new2", "new3", "new4"]
    assert patch.ops[1].content == "+plus\n\nlast\n" and patch.ops[1].lines == ["+plus", "", "last"]
