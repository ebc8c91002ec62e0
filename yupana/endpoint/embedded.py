"""The embedded store: Turtle / N-Triples files loaded in-process with pyoxigraph.

Used for ``file:`` endpoints and for the bundled example catalogue (fixtures/). It is the
same query engine as the Oxigraph server, so a catalogue behaves the same in both.
"""

from __future__ import annotations

import os
from typing import Any

from yupana.endpoint.base import ConnectError, Deadline, Endpoint, ProtocolError, QueryError, SelectResult, Term

_FORMATS = {".ttl": "TURTLE", ".nt": "N_TRIPLES", ".n3": "N3", ".nq": "N_QUADS", ".trig": "TRIG", ".rdf": "RDF_XML"}
RDF_EXTENSIONS = tuple(_FORMATS)  # the file names the embedded store loads (a directory's other files are skipped)


def files_of(location: str) -> list[str]:
    """The RDF files a ``file:`` location names: a file, a directory (recursively), or
    several separated by commas."""
    found: list[str] = []
    for part in location.split(","):
        part = part.strip()
        if not part:
            continue
        if os.path.isdir(part):
            for dirpath, _, names in sorted(os.walk(part)):
                for name in sorted(names):
                    if os.path.splitext(name)[1] in _FORMATS:
                        found.append(os.path.join(dirpath, name))
        else:
            found.append(part)
    return found


def base_iri(path: str) -> str:
    """The ``file://`` IRI relative IRIs in ``path`` resolve against: the absolute path
    percent-encoded (RFC 3987), so a directory named ``my policies`` or ``{team}`` loads."""
    from urllib.parse import quote

    return "file://" + quote(os.path.abspath(path), safe="/")


class EmbeddedStore(Endpoint):
    dialect = "embedded"

    def __init__(self, files: list[str], identity: str) -> None:
        import pyoxigraph

        self.identity = identity
        self.requests = 0  # queries answered (no HTTP here; the same counter as the network transports)
        self._store = pyoxigraph.Store()
        if not files:
            raise ProtocolError(f"{identity}: no RDF files to load")
        for path in files:
            fmt = _FORMATS.get(os.path.splitext(path)[1])
            if fmt is None:
                raise ProtocolError(f"{path}: unknown RDF file type (use .ttl, .nt, .n3, .nq, .trig or .rdf)")
            try:
                with open(path, "rb") as fh:
                    self._store.load(fh, format=getattr(pyoxigraph.RdfFormat, fmt), base_iri=base_iri(path))
            except OSError as exc:
                raise ConnectError(f"{path}: {exc.strerror or exc}") from None
            except SyntaxError as exc:
                raise ProtocolError(f"{path}: not valid RDF: {exc}") from None

    @classmethod
    def from_location(cls, location: str) -> "EmbeddedStore":
        files = files_of(location)
        return cls(files, "file:" + ",".join(os.path.abspath(f) for f in files))

    @property
    def store(self) -> Any:  # pyoxigraph.Store
        return self._store

    def select(self, query: str, deadline: Deadline) -> SelectResult:
        import pyoxigraph

        deadline.check("an embedded query")
        self.requests += 1
        try:
            solutions = self._store.query(query)
        except SyntaxError as exc:
            raise QueryError(f"the store rejected the query: {exc}") from None
        if not isinstance(solutions, pyoxigraph.QuerySolutions):
            raise ProtocolError("expected a SELECT query")
        variables = [v.value for v in solutions.variables]
        rows: list[dict[str, Term]] = []
        for solution in solutions:
            row: dict[str, Term] = {}
            for name in variables:
                term = solution[name]
                if term is not None:
                    row[name] = _term(term)
            rows.append(row)
        return SelectResult(variables, rows)


def _term(term: Any, _classes: list[Any] = []) -> Term:  # noqa: B006 - a per-process memo of the term classes
    if not _classes:
        import pyoxigraph

        _classes += [pyoxigraph.NamedNode, pyoxigraph.BlankNode, pyoxigraph.Literal]
    named, blank, literal = _classes
    cls = type(term)
    if cls is named:
        return Term("uri", term.value)
    if cls is literal:
        lang = term.language
        if lang:
            return Term("literal", term.value, None, lang)
        return Term("literal", term.value, term.datatype.value)
    if cls is blank:
        return Term("bnode", term.value)
    raise ProtocolError(f"unexpected term {term!r}")
