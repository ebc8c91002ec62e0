"""Landing certification: does a push show what its repository's landing policy requires?

The policy (the cache's ``landing_policies``, docs/vocabulary.md "Landing policies") names
requirements; each is evaluated to ``met``, ``unmet`` or ``unknown`` with the reason, and the
certification is

* ``certified`` — a policy was found and every requirement it names is met;
* ``refused`` — some requirement is shown **unmet** (a selected local command ran and failed);
* ``unknown`` — anything else: no servable policy cache, no policy for the repository, an
  outgoing change that cannot be computed, a CI map that is absent, partial or invalid, a
  command that could not run, results that cannot be attributed to the pushed commit.

Unknown is never certified: a requirement that cannot be shown is never counted as met.
Refused wins over unknown (the evidence that a check failed stands whatever else is not
known). The requirements:

* ``ci-selection-complete`` — :func:`ci_selection_complete`: the CI map's selection for the
  outgoing change is complete (a complete map selected commands, or is quiet). A partial map
  is partial *knowledge*: unknown, never met and never refused.
* ``local-commands-pass`` — :func:`local_commands_pass`: every command of a complete
  selection ran on the pushed commit and exited 0 (a quiet selection has nothing to run:
  met). Exit 126/127 (not executable, not found) and a signal are "could not run": unknown.

Standard library only, and nothing here runs a command or reads git: the caller
(``yupana hook pre-push``) supplies the selection, the run and the attribution.
"""

from __future__ import annotations

from yupana.evaluate import ci_map

TYPE_CHECKING = False  # annotations only: typing is never imported at run time
if TYPE_CHECKING:
    from typing import Any

CERTIFIED, REFUSED, UNKNOWN = "certified", "refused", "unknown"
MET, UNMET = "met", "unmet"
CI_SELECTION_COMPLETE, LOCAL_COMMANDS_PASS = "ci-selection-complete", "local-commands-pass"
REQUIREMENTS = (CI_SELECTION_COMPLETE, LOCAL_COMMANDS_PASS)
#: The record kind of each outcome: the ``landing-*`` population (docs/records.md).
KINDS = {CERTIFIED: "landing-certified", REFUSED: "landing-refused", UNKNOWN: "landing-unknown"}
OUTCOME_OF_KIND = {kind: outcome for outcome, kind in KINDS.items()}
COULD_NOT_RUN = (126, 127)  # /bin/sh: found but not executable, not found


class Requirement:
    """One requirement's evaluation: ``name``, ``outcome`` (met | unmet | unknown), ``reason``."""

    __slots__ = ("name", "outcome", "reason")

    def __init__(self, name: str, outcome: str, reason: str) -> None:
        self.name = name
        self.outcome = outcome
        self.reason = reason

    def to_dict(self) -> dict[str, Any]:
        return {"requirement": self.name, "outcome": self.outcome, "reason": self.reason}

    def __repr__(self) -> str:
        return f"Requirement({self.name!r}, {self.outcome!r})"


def find_policy(entries: object, repo: str | None) -> dict[str, Any] | None:
    """The ``landing_policies`` entry of the repository named ``repo`` (exact match), or None."""
    if not repo or not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("repo") == repo:
            return entry
    return None


def needs_run(policy: dict[str, Any] | None, selection: ci_map.Selection | None) -> bool:
    """Whether the selected commands must run: the policy requires them and the selection is
    the whole check set (a complete map's selection). Nothing partial is ever run."""
    return (policy is not None and LOCAL_COMMANDS_PASS in (policy.get("requires") or ())
            and selection is not None and selection.runnable)


def ci_selection_complete(selection: ci_map.Selection | None, why_none: str) -> Requirement:
    """``ci-selection-complete`` for ``selection`` (None: the change could not be computed: ``why_none``)."""
    if selection is None:
        return Requirement(CI_SELECTION_COMPLETE, UNKNOWN, why_none)
    if selection.state == ci_map.QUIET:
        return Requirement(CI_SELECTION_COMPLETE, MET, "the CI map is complete and selects nothing for this change")
    if selection.state == ci_map.SELECTED and selection.complete is True:
        return Requirement(CI_SELECTION_COMPLETE, MET, f"the CI map is complete: {len(selection.commands)} local "
                           "command(s) selected")
    if selection.state == ci_map.SELECTED:
        return Requirement(CI_SELECTION_COMPLETE, UNKNOWN, "the CI map is partial: its matches are not the whole "
                           "check set, and partial knowledge never certifies a push")
    return Requirement(CI_SELECTION_COMPLETE, UNKNOWN, selection.reason)


def local_commands_pass(selection: ci_map.Selection | None, why_none: str, *, attribution: str | None,
                        run: dict[str, Any] | None) -> Requirement:
    """``local-commands-pass``: ``run`` is ci-select's run object (``{refused, results, failed,
    not_run}``) or None when nothing was run; ``attribution`` is why the working tree is not the
    pushed commit (None: it is)."""
    name = LOCAL_COMMANDS_PASS
    if selection is None:
        return Requirement(name, UNKNOWN, why_none)
    if selection.state == ci_map.QUIET:
        return Requirement(name, MET, "the complete CI map selects no local command for this change: nothing to run")
    if not selection.runnable:
        what = ("the CI map is partial: a partial check set is not run, so passing it would prove nothing"
                if selection.state == ci_map.SELECTED else f"no complete selection to run ({selection.reason})")
        return Requirement(name, UNKNOWN, what)
    if attribution is not None:
        return Requirement(name, UNKNOWN, attribution if run is not None else f"not run: {attribution}")
    if run is None:
        return Requirement(name, UNKNOWN, "the selected commands were not run")
    results = run.get("results") or []
    for result in results:
        code = result.get("exit_code")
        command = result.get("command")
        if code == 0:
            continue
        if not isinstance(code, int) or code < 0 or code in COULD_NOT_RUN:
            how = (f"was killed by signal {-code}" if isinstance(code, int) and code < 0
                   else f"could not run (exit {code}: not found or not executable)")
            return Requirement(name, UNKNOWN, f"`{command}` {how}")
        later = run.get("not_run") or []
        return Requirement(name, UNMET, f"`{command}` failed (exit {code})"
                           + (f"; {len(later)} later command(s) not run" if later else ""))
    if len(results) != len(selection.commands):
        return Requirement(name, UNKNOWN, f"{len(results)} of {len(selection.commands)} selected command(s) ran")
    return Requirement(name, MET, f"all {len(results)} selected local command(s) passed on the pushed commit")


def certify(policy: dict[str, Any] | None, requirements: list[Requirement], why_no_policy: str) -> tuple[str, str]:
    """(outcome, reason) of a certification from the evaluated ``requirements`` of ``policy``."""
    if policy is None:
        return UNKNOWN, why_no_policy
    required = [r for r in requirements if r.name in (policy.get("requires") or ())]
    if not required:
        return UNKNOWN, "the landing policy names no requirement this version can evaluate"
    unmet = [r for r in required if r.outcome == UNMET]
    if unmet:
        return REFUSED, "; ".join(f"{r.name}: {r.reason}" for r in unmet)
    unknown = [r for r in required if r.outcome != MET]
    if unknown:
        return UNKNOWN, "; ".join(f"{r.name}: {r.reason}" for r in unknown)
    return CERTIFIED, "; ".join(f"{r.name}: {r.reason}" for r in required)


def consistent(kind: str, record: dict[str, Any]) -> str | None:
    """None when a record's kind follows from its requirements as :func:`certify` decides, else
    what disagrees (``yupana landing verify``: a signed record must also say what it shows)."""
    outcome = OUTCOME_OF_KIND.get(kind)
    if outcome is None:
        return f"{kind!r} is not a landing-* kind"
    policy = record.get("policy")
    raw = record.get("requirements")
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        return "the record's requirements are not a list of objects"
    evaluated = [Requirement(str(r.get("requirement")), str(r.get("outcome")), str(r.get("reason"))) for r in raw]
    expected, _ = certify(policy if isinstance(policy, dict) else None, evaluated, "")
    if expected != outcome:
        return f"the record says {kind} but its requirements make it {KINDS[expected]}"
    return None
