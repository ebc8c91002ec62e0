"""What a Bash command writes, from syntax alone (yupana.shell.writes), and which of those writes
are the guard's own controls (yupana.hooks.pre_bash.controls_written): every route of issue 22 §2,
the reads that look alike, and the peer command corpus at 0 false denies."""

from __future__ import annotations

import subprocess

import pytest
from test_actions import CASES

from yupana import shell
from yupana.hooks.pre_bash import controls_written
from yupana.shell.writes import writes

CWD, HOME = "/r", "/h"


def _written(command: str) -> list[tuple[str, str]]:
    return [(w.route, w.git or w.path) for w in writes(shell.read(command), CWD, HOME)]


@pytest.mark.parametrize("command, expected", [
    ("echo 'mode = \"off\"' > .bobbin/config.toml", [("redirect", "/r/.bobbin/config.toml")]),
    ("printf x >> ~/.codex/hooks.json", [("redirect", "/h/.codex/hooks.json")]),
    ("cmd 2> .git/config", [("redirect", "/r/.git/config")]),
    ("cmd &> .git/config", [("redirect", "/r/.git/config")]),
    ("echo x | tee -a .claude/settings.json", [("tee", "/r/.claude/settings.json")]),
    ("sed -i s/enforce/off/ .bobbin/config.toml", [("sed -i", "/r/.bobbin/config.toml")]),
    ("sed -i.bak -e s/a/b/ .bobbin/config.toml", [("sed -i", "/r/.bobbin/config.toml")]),
    ("sed --in-place=.b 's/a/b/' a .bobbin/config.toml", [("sed -i", "/r/a"), ("sed -i", "/r/.bobbin/config.toml")]),
    ("perl -pi -e 's/enforce/off/' .bobbin/config.toml", [("perl -i", "/r/.bobbin/config.toml")]),
    ("perl -i.bak -pe 's/a/b/' .git/config", [("perl -i", "/r/.git/config")]),
    ("cp /tmp/off.toml .bobbin/config.toml", [("cp", "/r/.bobbin/config.toml")]),
    ("cp hook .git/hooks", [("cp", "/r/.git/hooks")]),
    ("cp -t .git/hooks pre-push", [("cp", "/r/.git/hooks"), ("cp", "/r/.git/hooks/pre-push")]),
    ("mv .bobbin/config.toml /tmp/x", [("mv", "/tmp/x"), ("mv", "/r/.bobbin/config.toml")]),
    ("rm .bobbin/config.toml", [("rm", "/r/.bobbin/config.toml")]),
    ("rm -rf .bobbin", [("rm", "/r/.bobbin")]),
    ("ln -sf /dev/null .git/hooks/pre-push", [("ln", "/r/.git/hooks/pre-push")]),
    ("install -m 0644 x.toml .bobbin/config.toml", [("install", "/r/.bobbin/config.toml")]),
    ("truncate -s 0 .bobbin/config.toml", [("truncate", "/r/.bobbin/config.toml")]),
    ("chmod -x .git/hooks/pre-push", [("chmod", "/r/.git/hooks/pre-push")]),
    ("chmod 000 .git/hooks/pre-push", [("chmod", "/r/.git/hooks/pre-push")]),
    ("touch src/.bobbin/config.toml", [("touch", "/r/src/.bobbin/config.toml")]),
    ("mkdir -p src/.bobbin", [("mkdir", "/r/src/.bobbin")]),
    ("dd if=/dev/null of=.bobbin/config.toml", [("dd", "/r/.bobbin/config.toml")]),
    ("cd src && echo x > .bobbin/config.toml", [("redirect", "/r/src/.bobbin/config.toml")]),
    ("sudo bash -c 'echo x > /etc/bobbin/config.toml'", [("redirect", "/etc/bobbin/config.toml")]),
    ("git config core.hooksPath /dev/null", [("git", "hooks_path")]),
    ("git config --local core.hooksPath .nohooks", [("git", "hooks_path")]),
    ("git config --unset core.hooksPath", [("git", "hooks_path")]),
    ("git config set core.hooksPath x", [("git", "hooks_path")]),
    ("git -c core.hooksPath=/dev/null push origin main", [("git", "hooks_path")]),
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git push", [("git", "hooks_path")]),
    ("export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=x", [("export", "hooks_path")]),
    ("env GIT_CONFIG_PARAMETERS=\"'core.hooksPath'='/dev/null'\" git push", [("git", "hooks_path")]),
    ("git push --no-verify", [("git push", "no_verify")]),
    ("git commit -n -m wip", [("git commit", "no_verify")]),
    ("git commit -anm wip", [("git commit", "no_verify")]),
    ("git merge --no-verify topic", [("git merge", "no_verify")]),
    ("rm .bobbin/*", [("rm", "/r/.bobbin/*")]),
    ("echo \"$(date)\" >> .bobbin/config.toml", [("redirect", "/r/.bobbin/config.toml")]),
    ("ln .bobbin/config.toml notes.toml", [("ln", "/r/notes.toml"), ("ln", "/r/.bobbin/config.toml")]),
    ("cp -l .git/config c", [("cp", "/r/c"), ("cp", "/r/.git/config")]),
    ("git rm .bobbin/config.toml", [("git rm", "/r/.bobbin/config.toml")]),
    ("git checkout HEAD~3 -- .bobbin/config.toml", [("git checkout", "/r/.bobbin/config.toml")]),
    ("git restore -s HEAD~3 .bobbin/config.toml", [("git restore", "/r/.bobbin/config.toml")]),
])
def test_every_route_is_read_from_syntax(command, expected):
    assert _written(command) == expected


@pytest.mark.parametrize("command", [
    "cat .bobbin/config.toml", "grep -n mode .bobbin/config.toml", "git diff .bobbin/config.toml",
    "sed -n 1,5p .bobbin/config.toml", "sed 's/enforce/off/' .bobbin/config.toml", "wc -l < .bobbin/config.toml",
    "less .git/config", "git config core.hooksPath", "git config --get core.hooksPath", "git config user.name",
    "git push -n origin main", "git merge -n topic", "git commit -m '-n means dry'", "git commit -F msg.txt",
    "git push --no-verify --verify", "cmd 2>&1", "cmd >&2", "perl -pe 's/a/b/' .git/config",
    "cp $(ls) .bobbin/config.toml", "echo x > $(echo .bobbin/config.toml)", "(echo x > .bobbin/config.toml)",
    "if true; then echo > .bobbin/config.toml; fi", "echo 'x > .bobbin/config.toml'", "cat <<EOF\nrm .bobbin/config.toml\nEOF", "cp .bobbin/config.toml /tmp/b", "ln -s .bobbin/config.toml cfg",
    "echo \"sed -i s/a/b/ .bobbin/config.toml\"", "git log -p -- .git/hooks", "git rm --cached -r .",
    "git checkout main", "git checkout -b topic", "GIT_CONFIG_KEY_0=user.name git commit -m x", "rm *.log", "rm -rf build/*", "git show HEAD:.bobbin/config.toml",
])
def test_reads_and_look_alikes_write_no_control(command):
    assert all(route not in ("git push", "git commit", "git merge", "git") for route, _ in _written(command))
    assert controls_written(shell.read(command), "/r", "/h") == []


def test_a_deeper_command_that_is_not_read_with_certainty_abstains():
    assert _written("for f in x; do echo > .bobbin/config.toml; done") == []
    assert _written("echo x > $TARGET") == []
    assert _written("cp \"$a\" .bobbin/config.toml") == [("cp", "/r/.bobbin/config.toml")]  # the destination is literal


def test_no_verify_counts_only_where_yupanas_hook_is_installed(tmp_path, yupana):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    reading = shell.read("git push --no-verify origin main")
    assert controls_written(reading, str(repo), "/h") == []
    assert yupana("install", "git", cwd=repo).returncode == 0
    assert controls_written(reading, str(repo), "/h") == [("no_verify", "git push")]
    assert controls_written(reading, str(tmp_path), "/h") == []  # another directory, no repository


def test_a_recursive_removal_that_takes_a_control_with_it_counts(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".bobbin").mkdir(parents=True)
    (repo / "build").mkdir()
    home = str(tmp_path / "home")
    for command, kind in [("rm -rf .", "config"), ("rm -rf .git/*", "git_hooks"), ("git rm -r .", "config"),
                          ("mv .claude /tmp/x", "client"), ("rm -rf build/*", None), ("rm -r build", None)]:
        found = controls_written(shell.read(command), str(repo), home)
        assert [k for k, _ in found] == ([kind] if kind else []), command


def test_the_peer_corpus_has_no_false_deny(tmp_path):
    for command, _ in CASES:
        assert controls_written(shell.read(command), str(tmp_path), str(tmp_path / "home")) == [], command


def test_a_hooks_path_installation_is_found_and_its_hook_protected(tmp_path, yupana):
    from yupana import self_protection

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "core.hooksPath", ".githooks"], check=True)
    assert yupana("install", "git", cwd=repo).returncode == 0
    assert (repo / ".githooks" / "pre-push").exists()
    reading = shell.read("git push --no-verify")
    assert controls_written(reading, str(repo / "sub"), "/h") == [("no_verify", "git push")]
    assert controls_written(shell.read("rm .githooks/pre-push"), str(repo), "/h") == [("git_hooks", "rm")]
    assert self_protection.of_path(str(repo / ".githooks" / "pre-push")) == "git_hooks"
    (repo / ".githooks" / "pre-commit").write_text("#!/bin/sh\n")
    assert self_protection.of_path(str(repo / ".githooks" / "pre-commit")) is None  # not the guard's
