"""Judging one captured input under one catalogue: the real hook, rehearsed as ``yupana explain``
rehearses it, in a sandbox that serves that catalogue and nothing of this machine's. Cold path.

Each side (the live catalogue, the candidate) is a :class:`Side`: a
:class:`~yupana.commands.rule_tests.sandbox.Sandbox` (private HOME and state, the caller's
``YUPANA_*`` hidden) whose store is a placeholder endpoint, with the side's checked cache object
(:func:`yupana.commands.diff.sources.read`) installed as that store's cache — confirmed now, so it
is served fresh. An input is rebuilt as the payload a client sends (a ``Write`` of its
introduced text for one file, an ``apply_patch`` adding each file for several, a ``Bash``
command), run in a fresh project (its repository's name as origin; the recorded exposure as
``[yupana.policy] exposure``) under ``mode = "enforce"``, and the report's decision and fired
rules are kept. There is no second evaluator here.
"""

from __future__ import annotations

from typing import Any

import json
import os
import time

from yupana.commands.rule_tests import runner
from yupana.commands.rule_tests.sandbox import Sandbox, Source, active

MODE = "enforce"  # every input is judged as enforce would decide it (docs/replay.md)
EXPOSURES = ("public", "internal")


class Verdict:
    """What the hook decided on one input under one side."""

    __slots__ = ("decision", "rules", "caught")

    def __init__(self, decision: str, rules: list[str], caught: list[str]) -> None:
        self.decision = decision
        self.rules = rules  # the names of the governed rules that fired (not satisfied), sorted
        self.caught = caught  # what they caught (masked out of the examples)


class Side:
    """One catalogue, installed in its own sandbox."""

    def __init__(self, name: str, cache: dict[str, Any]) -> None:
        self.name = name
        self.endpoint = f"https://replay.invalid/{name}"
        self.sandbox = Sandbox(Source(f"replay {name}", {"endpoint": self.endpoint}))
        self.rules = runner.governed_rules(cache)
        self.digest = cache.get("digest")
        with active(self.sandbox):
            self._install(cache)

    def _install(self, cache: dict[str, Any]) -> None:
        from yupana import config
        from yupana.state import cache as cache_mod
        from yupana.state import dataset, stores

        root = self.sandbox.project("install", MODE)
        quipu = config.resolve(root, None)["config"]["quipu"]
        ident = dataset.identity(quipu, root)
        path = stores.cache_path(ident)
        if not path:
            raise RuntimeError("the replay sandbox has no state directory")
        body = dict(cache, endpoint=dataset.endpoint_key(self.endpoint, root), dataset=ident,
                    written_at=int(time.time()))
        body.pop("dialect", None)
        stores.name_store(os.path.dirname(path), ident)
        error = cache_mod.save(body, path)
        if error:
            raise RuntimeError(f"the {self.name} catalogue could not be installed in the replay sandbox: {error}")

    def judge(self, rec: dict[str, Any], number: int) -> Verdict:
        """The real hook's decision on the captured input ``rec`` under this side's catalogue."""
        from yupana.commands import explain

        with active(self.sandbox):
            root = self.sandbox.case_root(MODE, _name(rec.get("repo")))
            exposure = rec.get("exposure")
            if exposure in EXPOSURES:  # the config's last table is [yupana.policy]
                with open(os.path.join(root, ".bobbin", "config.toml"), "a", encoding="utf-8") as fh:
                    fh.write(f'exposure = "{exposure}"\n')
            cwd = workdir(rec, root)
            os.makedirs(cwd, exist_ok=True)
            os.chdir(cwd)
            outside = os.path.join(self.sandbox.dir, "outside")
            raw = json.dumps(payload(rec, root, f"yupana-replay-{number}", cwd, outside)).encode("utf-8", "surrogatepass")
            tenant = rec.get("tenant") if isinstance(rec.get("tenant"), str) else None
            report = explain.explain(raw, hook_of(rec), "the captured input", tenant, None)
        fired = runner.fired_rules(report, self.rules)
        names = sorted({str(f.get("rule") or f.get("id")) for f in fired if f.get("iri")})
        return Verdict(str(report["decision"]), names, caught(report))

    def remove(self) -> None:
        self.sandbox.remove()


def caught(report: dict[str, Any]) -> list[str]:
    """Every text a finding of the explain ``report`` caught (a match, tokens, captures)."""
    out: list[str] = []
    for stage in report.get("stages") or ():
        for f in stage.get("findings") or ():
            matched = f.get("matched") or {}
            found = [matched.get("text"), *(matched.get("tokens") or ()),
                     *(v.get("text") for v in matched.get("violations") or () if isinstance(v, dict))]
            out += [t for t in found if isinstance(t, str) and t]
    return out


def hook_of(rec: dict[str, Any]) -> str:
    return "pre-bash" if rec.get("hook") == "pre-bash" else "pre-edit"


def judgeable(rec: dict[str, Any]) -> bool:
    """Whether ``rec`` holds an input a hook can be rerun on."""
    if hook_of(rec) == "pre-bash":
        return isinstance(rec.get("command"), str) and bool(rec["command"])
    edits = rec.get("edits")
    return isinstance(edits, list) and bool(edits) and all(
        isinstance(e, dict) and isinstance(e.get("path"), str) and e["path"] and isinstance(e.get("text"), str)
        for e in edits)


def workdir(rec: dict[str, Any], root: str) -> str:
    """Where the input ran: the captured ``cwd`` (relative to the project root: an agent's
    ``cd`` a client kept) under ``root``, else ``root`` itself (also for a ``cwd`` that would leave it)."""
    cwd = rec.get("cwd")
    if not isinstance(cwd, str) or not cwd or cwd.startswith("/") or "\0" in cwd:
        return root
    parts = [p for p in cwd.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return root
    return os.path.join(root, *parts)


def located(path: str, root: str, outside: str | None = None) -> str:
    """Where a captured ``path`` is put before the hook: a relative one (the file's path in its
    project) under ``root``; an absolute one (a file outside the project, as the hook named it)
    under ``outside`` — still outside the sandbox's project, never at this machine's own path,
    where a project of the replaying machine could be found and judge it. A relative path that
    climbs out of the project is put there too."""
    inside = os.path.normpath(os.path.join(root, path))
    if outside and (os.path.isabs(path) or not inside.startswith(root.rstrip("/") + "/")):
        return os.path.join(outside, *[p for p in path.split("/") if p not in ("", ".", "..")])
    return inside


def payload(rec: dict[str, Any], root: str, session: str, cwd: str | None = None,
            outside: str | None = None) -> dict[str, Any]:
    """The client payload that puts ``rec``'s input before the hook again (Claude Code's shape),
    run from ``cwd`` (default: the project root); captured paths are relative to ``root``
    (absolute ones are put under ``outside``: :func:`located`)."""
    base: dict[str, Any] = {"session_id": session, "cwd": cwd or root, "hook_event_name": "PreToolUse"}
    if hook_of(rec) == "pre-bash":
        return dict(base, tool_name="Bash", tool_input={"command": rec["command"]})
    edits = rec["edits"]
    if len(edits) == 1:
        path = located(edits[0]["path"], root, outside)
        return dict(base, tool_name="Write", tool_input={"file_path": path, "content": edits[0]["text"]})
    body = ["*** Begin Patch"]
    for e in edits:
        body.append(f"*** Add File: {located(e['path'], root, outside)}")
        body += ["+" + line for line in e["text"].split("\n")]
    body.append("*** End Patch")
    return dict(base, tool_name="apply_patch", turn_id=f"{session}-turn", tool_input={"command": "\n".join(body) + "\n"})


def _name(repo: object) -> str | None:
    """A repository name safe to write into a git config (else none)."""
    if not isinstance(repo, str) or repo in ("", "unresolved"):
        return None
    return repo if all(c.isalnum() or c in "._-" for c in repo) else None
