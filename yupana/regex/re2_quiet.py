"""RE2 compilation that keeps RE2's C++ log off stderr: a pattern that does not compile is an
``re2.error`` carrying RE2's message, never an ``E0000 … re2.cc] Error parsing`` line on the
terminal. Standard library and google-re2 only (hooks compile through it); ``log_errors`` is
the only option changed, so every pattern means what ``re2.compile(pattern)`` makes of it."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

_OPTIONS = None


def compile_quiet(pattern: str) -> Any:  # a compiled re2 pattern (google-re2 ships no types)
    """``re2.compile(pattern)`` with RE2's error logging off; raises ``re2.error`` as it does."""
    global _OPTIONS
    import re2

    if _OPTIONS is None:
        options = re2.Options()
        options.log_errors = False
        _OPTIONS = options
    return re2.compile(pattern, _OPTIONS)


SET_MAX_MEM = 64 << 20  # an RE2::Set's DFA never runs out at this budget (it resets its cache and goes on)


def search_set(patterns: list[str]) -> Any:
    """A compiled unanchored ``re2.Set`` of ``patterns`` (``Match(text)``: the indices of those
    found anywhere in ``text``, or None), RE2's logging off; raises ``re2.error`` when a pattern
    or the set does not compile."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.max_mem = SET_MAX_MEM
    found = re2.Set.SearchSet(options)
    for pattern in patterns:
        found.Add(pattern)
    found.Compile()
    return found
