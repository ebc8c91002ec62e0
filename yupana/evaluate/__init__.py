"""Evaluators, one module per plane. They share :class:`Finding`. Standard library only."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

SATISFIED, UNSATISFIED, UNKNOWN = "satisfied", "unsatisfied", "unknown"
LADDER = {"off": 0, "advise": 1, "enforce": 2}  # the mode ladder: ``mode`` and each plane's rung


def rung(setting: str, mode: str) -> str:
    """The lower of a plane's ``setting`` and the ambient ``mode`` (the mode is a ceiling);
    an unknown name stands as low as off."""
    return setting if LADDER.get(setting, 0) <= LADDER.get(mode, 0) else mode


def stage_of(f: Finding) -> str:
    """A finding's governed rollout stage (``aegis:rolloutStage``, docs/vocabulary.md): ``shadow``
    (evaluated and recorded, shown to nobody), ``advise`` (at most a notice, whatever the host's
    mode) or ``enforce`` (the host's mode decides; also when the rule states none)."""
    return f.extra.get("stage") or "enforce"


def strongest(modes: list[str]) -> str:
    """The highest of ``modes`` on the ladder (a Codex patch judged under several projects)."""
    return max(modes, key=lambda m: LADDER.get(m, -1))


class Finding:
    """One constraint evaluation: what was checked, the outcome, and whether it may block.

    ``blocking`` says the finding would deny under ``enforce`` (class first, then effect);
    the hook applies the ambient mode as a ceiling. ``message`` is written for the model:
    what was exceeded, by how much, what to do instead.
    """

    __slots__ = ("id", "plane", "blocking", "message", "outcome", "class_", "verification_point",
                 "source", "rel", "extra")

    def __init__(
        self,
        id: str,
        plane: str,
        message: str,
        *,
        blocking: bool = False,
        outcome: str = UNSATISFIED,
        class_: str | None = None,
        verification_point: str | None = None,
        source: str | None = None,
        rel: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.id = id
        self.plane = plane
        self.message = message
        self.blocking = blocking
        self.outcome = outcome
        self.class_ = class_
        self.verification_point = verification_point
        self.source = source
        self.rel = rel
        self.extra = extra or {}

    def __repr__(self) -> str:
        return f"Finding({self.id!r}, {self.plane!r}, blocking={self.blocking}, outcome={self.outcome!r})"


def effect_blocks(effect: str | None) -> bool:
    """Without a class, an effect blocks unless it is warn, record, allow or throttle
    (unknown effects block: a typo must not disarm a rule)."""
    return (effect or "warn") not in ("warn", "record", "allow", "throttle")


def policy_blocks(class_: str | None, effect: str | None) -> bool:
    """Class decides first: hard and escalation block, soft never does; else the effect."""
    if class_ is not None:
        return class_ in ("hard", "escalation")
    return effect_blocks(effect)
