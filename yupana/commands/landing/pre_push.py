"""``yupana hook pre-push [REMOTE URL]``: certify a push against its repository's landing policy.

Git runs it before a push (``yupana install git``, or pre-commit's ``yupana-landing`` hook at
stage ``pre-push``): the remote's name and URL as arguments, one line per ref on stdin
(:mod:`yupana.commands.landing.pushed`). For each ref that lands (deletions land nothing):

1. the repository is ``aegis:repo_<name>``, ``<name>`` from the URL pushed to by the exposure
   lookup's rule (:func:`yupana.edit.git_repo.name_from_url`);
2. its landing policy is looked up in the servable projection cache, exactly as
   ``yupana ci-select`` reads it (never refreshed or written here; a due refresh is started in
   the background, as a hook starts one);
3. each requirement the policy names is evaluated (:mod:`yupana.evaluate.landing`):
   ``ci-selection-complete`` by the CI map's selection for the ref's outgoing change,
   ``local-commands-pass`` by running that selection with ``yupana ci-select``'s runner —
   only a complete map's selection, only when the working tree is the pushed commit;
4. one signed ``landing-*`` record is written to the landing spool
   (:mod:`yupana.commands.landing.certificate`), and one line on stderr says what it certified.

Exit status: 1 only when a certification is **refused** and ``[yupana.policy] landing`` is
``enforce`` under a ``mode`` that allows it (the mode is the ceiling); 0 otherwise —
certified, unknown (never blocks: absence fails open), refused under ``advise``, ``off``, and
every fault of yupana itself (an internal error writes a ``landing-unknown`` record when it
can and lets the push proceed). docs/landing.md is the operator page.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # annotations only: the hook's start-up imports neither typing nor re
if TYPE_CHECKING:
    from typing import Any

ALLOW, BLOCK = 0, 1


def _say(line: str) -> None:
    from yupana.redact import redact_text

    try:
        os.write(2, (redact_text(line) + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


class PrePush:
    """One pre-push invocation: the ref updates read, each certified, the exit status decided."""

    hook = "pre-push"

    def __init__(self, args: Any, t0: float) -> None:
        self.args = args
        self.t0 = t0
        self.positional: list[str] = list(getattr(args, "positional", None) or [])
        self.cfg: dict[str, Any] = {}
        self.root = ""
        self.top = ""
        self.rung = "?"
        self.remote: str | None = None
        self.url: str | None = None
        self.repo = "unresolved"
        self.runs: dict[str, dict[str, Any]] = {}  # pushed sha -> the run of its selection

    @classmethod
    def main(cls, args: Any) -> int:
        """The hook process (``yupana.cli`` dispatches here): stdin in, the exit status out."""
        from yupana.hooks import protocol

        return cls(args, time.monotonic()).answer(protocol.read_stdin())

    def answer(self, raw: bytes) -> int:
        """The whole invocation on ``raw`` (git's stdin); the exit status (0 proceed, 1 block)."""
        try:
            return self.run(raw)
        except Exception as exc:  # noqa: BLE001 - a yupana fault never blocks a push
            error = f"{type(exc).__name__}: {exc}"
            _say(f"yupana: pre-push failed (internal error: {error}); the push proceeds UNCERTIFIED")
            try:
                self.write(None, {"outcome": "unknown", "reason": f"internal error: {error}"})
            except Exception:  # noqa: BLE001
                pass
            return ALLOW

    # ── the order ──────────────────────────────────────────────────────────────────
    def run(self, raw: bytes) -> int:
        from yupana import project_root, settings
        from yupana.config.error import ConfigError
        from yupana.edit.git_repo import git_top
        from yupana.evaluate import rung

        cwd = os.getcwd()
        top = git_top(cwd)
        if top is None:
            _say(f"yupana: pre-push: {cwd} is not in a git work tree; the push proceeds UNCERTIFIED")
            return ALLOW
        self.top = top
        self.root = project_root.nearest(cwd) or self.top
        self.remote, self.url = self._remote()
        self.repo = self._repo_name()
        try:
            self.cfg = settings.load(self.root, self.args.config)["config"]
        except ConfigError as exc:
            # the agent that pushes reads this line: the error (files, keys) is the record's
            _say("yupana: pre-push: the configuration cannot be read; the push proceeds UNCERTIFIED (the landing "
                 "record names the error)")
            self.write(None, {"outcome": "unknown", "reason": f"configuration error: {exc}"})
            return ALLOW
        policy = self.cfg["policy"]
        self.rung = rung(policy.get("landing", "off"), policy.get("mode", "off"))
        if self.rung == "off":
            _say("yupana: landing certification is off for this project: this push is not evaluated")
            return ALLOW
        from yupana.commands.ci_select.changes import GitError
        from yupana.commands.landing import pushed

        try:
            updates = pushed.from_pre_commit(dict(os.environ), self.top)
            if updates is None:
                updates = pushed.read_updates(raw)
        except (pushed.PushInputError, GitError) as exc:
            _say(f"yupana: pre-push: {exc}; the push proceeds UNCERTIFIED")
            self.write(None, {"outcome": "unknown", "reason": f"the pushed refs cannot be read: {exc}"})
            return ALLOW
        landing = [u for u in updates if not u.deletion]
        if not landing:
            _say("yupana: landing: nothing lands (no ref, or deletions only): no certification")
            return ALLOW
        served = self._served()
        blocked = False
        for update in landing:
            outcome = self.certify(update, served)
            blocked = blocked or (outcome == "refused" and self.rung == "enforce")
        return BLOCK if blocked else ALLOW

    def _remote(self) -> tuple[str | None, str | None]:
        env = os.environ
        if len(self.positional) >= 2:
            return self.positional[0], self.positional[1]
        name = env.get("PRE_COMMIT_REMOTE_NAME") or (self.positional[0] if self.positional else None)
        return name, env.get("PRE_COMMIT_REMOTE_URL") or name

    def _repo_name(self) -> str:
        from yupana.commands.landing import pushed
        from yupana.edit.git_repo import name_from_url, repo_name

        if self.remote and (not self.url or self.url == self.remote):  # a remote's name alone: ask git for its URL
            self.url = pushed.remote_url(self.top, self.remote) or self.url
        if self.url:
            return name_from_url(self.url) or "unresolved"
        return repo_name(self.top) or "unresolved"

    def _served(self) -> dict[str, Any]:
        """The cache ci-select would serve (``policy`` object plus ``_cache``), a refresh started when due."""
        from yupana.commands.ci_select import served_policy

        now = int(time.time())
        served = served_policy(self.cfg, self.root, now)
        served["refresh_started"] = False
        due = served["_cache"] is None or served["stale_reason"] is not None
        if due and not served["not_configured"] and served["cache_path"]:
            from yupana.hooks import governed
            from yupana.state import refresh_state

            state = refresh_state.read(served["cache_path"], served["endpoint"])
            if not refresh_state.in_backoff(state, now):
                served["refresh_started"] = governed.start_refresh(served["cache_path"], self.root, self.args.config)
        return served

    # ── one ref ────────────────────────────────────────────────────────────────────
    def certify(self, update: Any, served: dict[str, Any]) -> str:
        """Evaluate, record and report one ref update; its outcome."""
        from yupana.commands.ci_select import rebase
        from yupana.commands.ci_select.changes import GitError
        from yupana.commands.landing import pushed
        from yupana.evaluate import ci_map, landing

        started = time.monotonic()
        cache = served["_cache"]
        policy, why_no_policy = self._policy(cache, served)
        changed: list[str] | None = None
        why_none = ""
        try:
            changed = rebase(pushed.changed_paths(self.top, update, self.remote), self.top, self.root)
        except GitError as exc:
            why_none = f"the outgoing change cannot be computed: {exc}"
        selection = None
        if cache is not None and changed is not None:
            selection = ci_map.select(cache.get("ci_map"), changed)
        elif changed is not None:
            why_none = why_no_policy
        if changed is not None:
            self._coverage_unknown(selection, served, len(changed))
        requirements: list[landing.Requirement] = []
        run = None
        for name in (policy or {}).get("requires") or ():
            if name == landing.CI_SELECTION_COMPLETE:
                requirements.append(landing.ci_selection_complete(selection, why_none))
            elif name == landing.LOCAL_COMMANDS_PASS:
                why_not = None
                if landing.needs_run(policy, selection):
                    why_not = pushed.attribution(self.top, update.local_sha)
                    if why_not is None:
                        run = self._run(update.local_sha, selection)
                        after = pushed.attribution(self.top, update.local_sha)  # the results are the commit's
                        if after is not None:  # only if the tree still is it once they ran
                            why_not = f"the results are not the pushed commit's: after the commands ran, {after}"
                requirements.append(landing.local_commands_pass(selection, why_none, attribution=why_not, run=run))
        outcome, reason = landing.certify(policy, requirements, why_no_policy)
        fields = {"outcome": outcome, "reason": reason, "ref": update.local_ref, "remote_ref": update.remote_ref,
                  "sha": update.local_sha, "remote_sha": update.remote_sha,
                  "policy": policy and {k: policy.get(k) for k in ("iri", "policy", "label", "requires", "source",
                                                                   "repository_type")},
                  "requirements": [r.to_dict() for r in requirements],
                  "changed": None if changed is None else len(changed),
                  "selection": None if selection is None else {
                      "state": selection.state, "complete": selection.complete, "cause": selection.cause,
                      "commands": [c.command for c in selection.commands]},
                  "commands": [{"command": r["command"], "exit_code": r["exit_code"],
                                "duration_ms": int(round(r["duration_secs"] * 1000))} for r in (run or {}).get("results", [])],
                  "policy_freshness": served["freshness"], "policy_age_secs": served["cache_age_secs"],
                  "endpoint": served["endpoint"], "rule_set_digest": (cache or {}).get("digest"),
                  "refresh_started": served["refresh_started"] or None,
                  "duration_ms": int(round((time.monotonic() - started) * 1000))}
        record = self.write(update, fields)
        self._report(update, outcome, reason, policy, served, record)
        return outcome

    def _coverage_unknown(self, selection: Any, served: dict[str, Any], changed: int) -> None:
        """The CI-map clause's noise count: an UNKNOWN selection at the pre-push seam is a
        ``ci_shift_unknown`` record in the metrics spool, as ``yupana ci-select`` writes one
        (``source: "pre-push"``). Not a certification: those stay in the landing spool."""
        from yupana.commands.ci_select import NO_CACHE, NOT_CONFIGURED
        from yupana.evaluate import ci_map
        from yupana.state import spool

        miss = (served["miss"] or {}).get("label")
        if served["not_configured"]:
            cause, reason = NOT_CONFIGURED, f"the governed plane is not configured ({served['not_configured']})"
        elif served["_cache"] is None:
            cause, reason = NO_CACHE, f"no servable projection cache ({miss})"
        elif selection is not None and selection.state == ci_map.UNKNOWN:
            cause, reason = selection.cause, selection.reason
        else:
            return
        spool.record("ci_shift_unknown", {"reason": reason, "cause": cause, "changed": changed, "miss": miss,
                                          "policy_freshness": served["freshness"],
                                          "policy_age_secs": served["cache_age_secs"], "source": self.hook,
                                          "repo": self.repo})

    def _policy(self, cache: dict[str, Any] | None, served: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        from yupana.evaluate import landing

        if served["not_configured"]:
            return None, f"the governed plane is not configured ({served['not_configured']}): no landing policy to apply"
        if cache is None:
            miss = served["miss"] or {}
            started = "; a refresh was started" if served["refresh_started"] else ""
            return None, f"no servable projection cache ({miss.get('label')}: {miss.get('reason')}){started}"
        if "landing_policies" not in (cache.get("counts") or {}):
            return None, "the projection cache predates landing policies (run `yupana project`)"
        found = landing.find_policy(cache.get("landing_policies"), self.repo)
        if found is None:
            return None, (f"no landing policy for repository `{self.repo}` (neither aegis:repo_{self.repo} nor a "
                          "repository type it names states an aegis:landingPolicy)")
        return found, ""

    def _run(self, sha: str, selection: Any) -> dict[str, Any]:
        """Run a complete selection once per pushed commit (ci-select's runner; output on stderr)."""
        from yupana.commands.ci_select import run_commands

        if sha not in self.runs:
            report = {"state": selection.state, "runnable": selection.runnable,
                      "commands": [c.to_dict() for c in selection.commands]}
            sys.stdout.flush()
            self.runs[sha] = run_commands(report, self.root, True)
        return self.runs[sha]

    # ── the record and the line ────────────────────────────────────────────────────
    def write(self, update: Any, fields: dict[str, Any]) -> dict[str, Any]:
        """Seal and append one certification; the record as written."""
        from yupana import project_root, redact
        from yupana.commands.landing import certificate, chain
        from yupana.evaluate.landing import KINDS
        from yupana.state import paths, spool

        base = spool.entry(KINDS[fields.pop("outcome")], None)
        record: dict[str, Any] = {**base, "format": certificate.FORMAT, "evaluation": "push", "hook": self.hook,
                                  "repo": self.repo, "remote": self.remote,
                                  "url": redact.redact_url(self.url) if self.url else None,
                                  "rung": self.rung, "project": project_root.project_key(self.root or os.getcwd())}
        record.update({k: v for k, v in fields.items() if v is not None or k in ("policy", "remote_sha")})
        record["blocking"] = record["kind"] == KINDS["refused"] and self.rung == "enforce"
        key = certificate.signing_key(self.cfg, self.root or os.getcwd())
        target = paths.landing_spool()
        if not target:
            sealed = certificate.seal(record, key)
            error: str | None = "no landing spool path: set YUPANA_LANDING_PATH, XDG_STATE_HOME or HOME"
        else:  # chained to the record before it (seq, prev), under the spool's lock
            sealed, error = chain.append(record, lambda r: certificate.seal(r, key), target)
        if error:
            _say(f"yupana: landing: the certification could not be recorded ({error})")
        return sealed

    def _report(self, update: Any, outcome: str, reason: str, policy: dict[str, Any] | None, served: dict[str, Any],
                record: dict[str, Any]) -> None:
        where = f"{update.local_ref or update.local_sha[:12]} → {self.remote or '?'} {update.remote_ref}".rstrip()
        about = f"repo `{self.repo}`" + (f", policy `{policy.get('label')}`" if policy else "")
        freshness = ""
        if served["_cache"] is not None:
            freshness = (f"; policy {'fresh' if served['freshness'] == 'fresh' else 'STALE'}, cache age "
                         f"{served['cache_age_secs']}s")
        signed = f"signed {record['key_id']}" if record.get("signed") else "UNSIGNED"
        verdict = {"certified": "CERTIFIED", "refused": "REFUSED", "unknown": "UNKNOWN — not certified"}[outcome]
        tail = ""
        if outcome == "refused":
            # What the pusher (often an agent) reads says what to do instead, never how to skip the hook.
            tail = (" — the push is BLOCKED: make the requirement pass, commit, and push again"
                    if self.rung == "enforce" else " — advise: the push proceeds")
        elif outcome == "unknown":
            tail = " — the push proceeds"
        _say(f"yupana: landing {verdict} {where} ({about}{freshness}; {signed}): {reason}{tail}")
