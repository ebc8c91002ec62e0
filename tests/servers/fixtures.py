"""pytest fixtures for the real test servers (loaded by tests/conftest.py).

* ``oxigraph_server(*ttl_paths, graphs=None, fresh=False) -> str``: the SPARQL query URL
  of a real ``oxigraph serve`` holding those files in its default graph (and ``graphs``:
  ``{graph IRI: [paths]}`` in named graphs). Session-scoped: a server per distinct data
  set, shared by the tests that ask for the same files; ``fresh=True`` gives a server of
  its own (for tests that write). ``oxigraph.update_url(url)`` is its update URL.
* ``quipu_server(*ttl_paths, max_rows=10000, auth_token=None, read_only=False,
  graphs=None) -> QuipuServer``: a quipu-dialect server (``.url`` base URL, ``.requests``
  log, ``.fail_next(...)``, ``.policy_outcomes``, ``.delay_secs``). One per test.
* ``guarded_server(*ttl_paths, basic=(user, password) | None, bearer=None) -> GuardedServer``:
  a SPARQL 1.1 Protocol server that demands credentials (401 otherwise) and logs headers.
* ``virtuoso_server(max_rows=None) -> VirtuosoServer``: a real Virtuoso (Debian
  ``virtuoso-opensource``) with its own database directory and virtuoso.ini: stock settings,
  or ``[SPARQL] ResultSetMaxRows = max_rows``. Session-scoped, one per setting; tests load
  data into a graph of their own (``.load_turtle(path, graph)``) and read it through
  ``default_graph``. Skips when Virtuoso is not installed.
* ``faulty_server(behaviour, **opts) -> str``: the URL of a misbehaving socket server
  (see :mod:`servers.faulty`). One per call.

Every server binds a free loopback port and is stopped when its scope ends.
"""

from __future__ import annotations

import os

import pytest

from servers import oxigraph, virtuoso
from servers.faulty import FaultyServer
from servers.guarded import GuardedServer
from servers.quipu_server import QuipuServer


@pytest.fixture(scope="session")
def oxigraph_server(tmp_path_factory):
    if oxigraph.binary() is None:
        pytest.skip("the oxigraph server binary is not installed (pip install oxigraph)")
    shared: dict[tuple, oxigraph.OxigraphServer] = {}
    started: list[oxigraph.OxigraphServer] = []

    def start(*ttl_paths, graphs: dict[str, list] | None = None, fresh: bool = False) -> str:
        files = [os.path.abspath(str(p)) for p in ttl_paths]
        named = {g: [os.path.abspath(str(p)) for p in ps] for g, ps in (graphs or {}).items()}
        key = (tuple(files), tuple(sorted((g, tuple(ps)) for g, ps in named.items())))
        if not fresh and key in shared:
            return shared[key].url
        server = oxigraph.OxigraphServer(str(tmp_path_factory.mktemp("oxigraph") / "db"), files, named).start()
        started.append(server)
        if not fresh:
            shared[key] = server
        return server.url

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def virtuoso_server(tmp_path_factory):
    if virtuoso.binary() is None or virtuoso.isql_binary() is None:
        pytest.skip("Virtuoso is not installed (apt-get install virtuoso-opensource; .ci/run installs it as root)")
    started: dict[int | None, virtuoso.VirtuosoServer] = {}

    def start(max_rows: int | None = None) -> virtuoso.VirtuosoServer:
        if max_rows not in started:
            where = str(tmp_path_factory.mktemp("virtuoso"))
            started[max_rows] = virtuoso.VirtuosoServer(where, max_rows=max_rows).start()
        return started[max_rows]

    yield start
    for server in started.values():
        server.stop()


@pytest.fixture
def quipu_server():
    started: list[QuipuServer] = []

    def start(*ttl_paths, max_rows: int = 10000, auth_token: str | None = None, read_only: bool = False,
              graphs: dict[str, list] | None = None) -> QuipuServer:
        server = QuipuServer([str(p) for p in ttl_paths], max_rows=max_rows, auth_token=auth_token,
                             read_only=read_only, graphs=graphs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def faulty_server():
    started: list[FaultyServer] = []

    def start(behaviour: str, **opts) -> str:
        server = FaultyServer(behaviour, **opts).start()
        started.append(server)
        return server.url

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def guarded_server():
    started: list[GuardedServer] = []

    def start(*ttl_paths, basic: tuple[str, str] | None = None, bearer: str | None = None) -> GuardedServer:
        server = GuardedServer([str(p) for p in ttl_paths], basic=basic, bearer=bearer).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
