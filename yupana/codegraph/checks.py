"""The verifier's resolution rules: names, ``use`` trees, ``mod`` files and call arity.

One :class:`Checker` per verified buffer. Every rule abstains (``unchecked``, or silence for
arity) when the answer could come from somewhere the index cannot see; a violation is only
reported for something introduced by the edit and absent from the file before it.

Each kind of check lives in its own module, on the shared :class:`CheckContext`:

* :mod:`~yupana.codegraph.check_context` — the context, lookups and recording;
* :mod:`~yupana.codegraph.check_identifiers` — ``identifier-does-not-exist``;
* :mod:`~yupana.codegraph.check_imports` — ``unresolved-import`` (``use`` and ``mod``);
* :mod:`~yupana.codegraph.check_arity` — ``wrong-arity``.
"""

from __future__ import annotations

from yupana.codegraph.check_arity import ArityChecks
from yupana.codegraph.check_context import ARITY, IDENT, IMPORT, CheckContext, segments  # noqa: F401 - part of this API
from yupana.codegraph.check_identifiers import IdentifierChecks
from yupana.codegraph.check_imports import ImportChecks


class Checker(IdentifierChecks, ImportChecks, ArityChecks):
    """Every verify check for one buffer: ``check_refs``, ``check_uses``, ``check_mods``,
    ``check_calls`` (see :class:`CheckContext` for the constructor)."""
