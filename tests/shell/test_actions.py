"""The action resolver against a corpus of real-world commands (tests/shell/action_corpus.txt).

The corpus holds the false-deny traps users report (heredocs, quoted bodies, commit and
issue messages that mention ssh or systemctl) and the false-negative traps (VAR= prefixes,
wrappers, sh -c payloads), each with the exact resolutions expected.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from yupana.shell import actions as action
from yupana.shell import resolvers as action_resolvers

CORPUS = Path(__file__).with_name("action_corpus.txt")


def load_corpus() -> list[tuple[str, list[tuple[str, str, str]]]]:
    cases: list[tuple[str, list[str], list[tuple[str, str, str]]]] = []
    for line in CORPUS.read_text().splitlines():
        if line.startswith("$"):
            cases.append((line[2:], [], []))
        elif line.startswith(">"):
            cases[-1][1].append(line[2:])
        elif line.startswith("= "):
            spec = line[2:].strip()
            if spec != "unknown":
                cls, verb, target = (part.strip() for part in spec.split("|"))
                cases[-1][2].append((cls, verb, target))
    return [("\n".join([first, *more]), expected) for first, more, expected in cases]


CASES = load_corpus()


def test_the_corpus_is_large_and_balanced():
    assert len(CASES) >= 150
    resolved = sum(1 for _, exp in CASES if exp)
    assert resolved >= 60 and len(CASES) - resolved >= 60
    assert len({cmd for cmd, _ in CASES}) == len(CASES), "duplicate commands in the corpus"


@pytest.mark.parametrize("command,expected", CASES, ids=[c[:60] for c, _ in CASES])
def test_resolution(command: str, expected: list[tuple[str, str, str]]):
    got = action.resolve(command)
    assert got, "resolve must always answer at least one action"
    resolved = [(a.class_, a.verb, a.target) for a in got if a.class_ != action.UNKNOWN]
    assert resolved == expected
    for a in got:
        if a.class_ == action.UNKNOWN:
            assert a.reason, "an abstention says why"


def test_unknown_carries_the_reason_of_the_uncertainty():
    [only] = action.resolve("ssh a.example.com > $(mktemp)")
    assert only.class_ == "unknown" and only.reason == "command substitution"
    [only] = action.resolve("ssh prod")
    assert "bare hostname" in only.reason
    members = action.resolve("echo ok | ssh a.example.com")
    assert [a.reason for a in members] == ["pipeline", "pipeline"]


def test_credentials_in_a_url_never_reach_the_target():
    [a] = action.resolve("git push https://user:s3cret-token@github.com/o/r.git")
    assert a.target == "github.com/o/r"
    assert "s3cret" not in a.key and "user" not in a.key


def test_codex_argv_lists_are_read_without_shell_splitting():
    [a] = action.resolve(["bash", "-lc", "sudo systemctl restart nginx"])
    assert (a.class_, a.target) == ("service", "nginx")
    [a] = action.resolve(["ssh", "deploy@web.example.com", "uptime"])
    assert a.key == "host:web.example.com"
    [a] = action.resolve(["echo", "ssh a.example.com"])
    assert a.class_ == "unknown"


def test_key_is_class_colon_target():
    [a] = action.resolve("systemctl stop etcd")
    assert a.key == "service:etcd"


@pytest.mark.parametrize("url,expected", [
    ("https://github.com/org/repo.git", "github.com/org/repo"),
    ("git@github.com:org/repo.git", "github.com/org/repo"),
    ("ssh://git@host.example.com:2222/a/b.git/", "host.example.com/a/b"),
    ("https://tok@GitLab.Example.com:8443/g/p?ref=x#frag", "gitlab.example.com/g/p"),
    ("origin", None),
    ("../repo", None),
    ("/srv/repo.git", None),
    ("file:///srv/repo.git", None),
    ("C:/repo", None),
])
def test_repo_url_normalisation(url: str, expected: str | None):
    assert action_resolvers.repo_url(url) == expected
