"""RE2 compilation that keeps RE2's C++ log off stderr: a pattern that does not compile is an
``re2.error`` carrying RE2's message, never an ``E0000 … re2.cc] Error parsing`` line on the
terminal. Standard library and google-re2 only (hooks compile through it): the patterns are
:class:`yupana.regex.re2_binding.Pattern` (google-re2's extension without its Python
wrapper's start-up cost); ``log_errors`` is the only option changed, so every pattern means
what ``re2.compile(pattern)`` makes of it."""

from __future__ import annotations

from yupana.regex import re2_binding
from yupana.regex.re2_binding import Pattern, SearchSet


def compile_quiet(pattern: str) -> Pattern:
    """``re2.compile(pattern)`` with RE2's error logging off; raises ``re2.error`` as it does."""
    return re2_binding.compile(pattern)


def search_set(patterns: list[str]) -> SearchSet:
    """A compiled unanchored ``re2.Set`` of ``patterns`` (``Match(text)``: the indices of those
    found anywhere in ``text``, or None), RE2's logging off; raises ``re2.error`` when a pattern
    or the set does not compile."""
    return re2_binding.search_set(patterns)
