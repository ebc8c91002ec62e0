"""The structural types the hook modules name the effects by — imported under ``TYPE_CHECKING``
only, so that :mod:`~yupana.hooks.protocol` and :mod:`~yupana.hooks.governed` do not import
:mod:`~yupana.hooks.effects` (which imports them) just to annotate: no import circle. Nothing
imports this module at run time, and it imports nothing of yupana.
"""

from __future__ import annotations

from typing import Any, Protocol



class Workers(Protocol):
    """What the governed plane asks of :class:`yupana.hooks.effects.Workers`."""

    def refresh(self, cache_path: str, root: str, override: str | None, *, twin_only: bool = False) -> bool: ...


class Effects(Protocol):
    """What :mod:`yupana.hooks.protocol` and :mod:`yupana.hooks.governed` ask of
    :class:`yupana.hooks.effects.Effects`: a record, a once-per-session marker, the workers."""

    @property
    def workers(self) -> Workers: ...

    def record(self, kind: str, fields: dict[str, Any] | None = None, *, item: str | None = None) -> None: ...

    def first_time(self, session_id: str | None, kind: str) -> bool: ...
