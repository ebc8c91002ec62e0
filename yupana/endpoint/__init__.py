"""Transports to the policy store. Cold path only: nothing on the hot path imports this.

``open_endpoint(config["quipu"])`` picks the transport from ``[yupana.quipu] endpoint``:

* ``""``: the bundled example catalogue (``fixtures/catalogue/``) in the embedded store,
  only when the caller allows it (``yupana project`` does); otherwise an error;
* ``file:<path>[,<path>…]``: Turtle / N-Triples files (or directories of them) loaded
  in-process (:mod:`yupana.endpoint.embedded`);
* ``http(s)://…``: a network store, in the ``dialect`` configured (``sparql11`` or
  ``quipu``), or, when unset, the dialect detected by asking the URL (see
  :func:`detect_dialect`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from yupana.state import paths
from yupana.redact import redact_url
from yupana.endpoint.base import (ASK, CAPABILITIES, POLICY_CHECK, SELECT, UPDATE, WRITE, Deadline, Endpoint,
                                  SelectResult, Term)
if TYPE_CHECKING:
    from yupana.endpoint.quipu import QuipuEndpoint
    from yupana.endpoint.sparql11 import Sparql11Endpoint
from yupana.endpoint.errors import (KINDS, AuthError, BadResponse, BrokenConnection, Busy, ConnectError, ConnectTimeout,
                                    DeadlineError, EndpointError, HTTPError, HTTPStatus, NameNotResolved, NotAnEndpoint,
                                    NotFound, ProtocolError, QueryError, Redirected, Refused, StoreTimeout, TLSFailure,
                                    TooLarge, TruncatedError, Unreachable, UnsupportedError, WrongURL)

__all__ = ["ASK", "CAPABILITIES", "KINDS", "POLICY_CHECK", "SELECT", "UPDATE", "WRITE", "AuthError", "BadResponse",
           "BrokenConnection", "Busy", "ConnectError", "ConnectTimeout", "Deadline", "DeadlineError", "Endpoint",
           "EndpointError", "HTTPError", "HTTPStatus", "NameNotResolved", "NotAnEndpoint", "NotFound", "ProtocolError",
           "QueryError", "Redirected", "Refused", "SelectResult", "StoreTimeout", "TLSFailure", "Term", "TooLarge",
           "TruncatedError", "Unreachable", "UnsupportedError", "WrongURL", "bundled_location", "check_location",
           "detect_dialect", "open_endpoint"]


def bundled_location() -> str:
    """The example catalogue shipped with yupana (``<checkout>/fixtures/catalogue``)."""
    return os.path.join(paths.source_root(), "fixtures", "catalogue")


def open_endpoint(quipu: dict[str, Any], *, allow_bundled: bool = False, deadline: Deadline | None = None) -> Endpoint:
    """The transport for ``[yupana.quipu]`` (the ``config["quipu"]`` table).

    ``deadline`` bounds dialect detection when ``dialect`` is unset (default: a budget
    of twice connect + request timeout). Raises EndpointError when the endpoint is
    missing, malformed, unreachable during detection, or of an unknown kind.
    """
    endpoint = (quipu.get("endpoint") or "").strip()
    if not endpoint:
        if not allow_bundled:
            raise UnsupportedError("no endpoint configured: set [yupana.quipu] endpoint to the store "
                                               "(http(s)://… or file:<path>)")
        location = bundled_location()
        if not os.path.isdir(location):
            raise ConnectError(f"the bundled example catalogue is missing ({location}); run yupana from "
                                           "its checkout, or set [yupana.quipu] endpoint")
        from yupana.endpoint.embedded import EmbeddedStore

        return EmbeddedStore.from_location(location)
    if endpoint.startswith("file:"):
        from yupana.endpoint.embedded import EmbeddedStore

        location = endpoint[len("file://"):] if endpoint.startswith("file://") else endpoint[len("file:"):]
        return EmbeddedStore.from_location(location)
    check_location(endpoint)
    dialect = quipu.get("dialect")
    if dialect == "sparql11":
        return _sparql11(endpoint, quipu)
    if dialect == "quipu":
        return _quipu(endpoint, quipu)
    if dialect:
        raise UnsupportedError(f'[yupana.quipu] dialect = "{dialect}": use "sparql11" or "quipu"')
    if deadline is None:
        deadline = Deadline(2 * (_setting(quipu, "connect_timeout_secs") + _setting(quipu, "request_timeout_secs")))
    return detect_dialect(endpoint, quipu, deadline)


def check_location(endpoint: str, what: str = "[yupana.quipu] endpoint") -> None:
    """EndpointError unless ``endpoint`` is an http(s):// URL with a host and no credentials
    (``yupana config check`` asks the same question the refresh does)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(endpoint)
        host = parts.hostname
    except ValueError:
        parts, host = None, None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise NotAnEndpoint(f"{what} {redact_url(endpoint)!r} is not an http(s):// URL "
                                           "or a file: location")
    if parts.username is not None or parts.password is not None:
        raise AuthError(f"{what} {redact_url(endpoint)!r} carries credentials in the URL: "
                                    "remove them and use auth / auth_user / credentials_env instead")


# Failures that asking the store another way cannot cure.
UNREACHABLE = (ConnectError, StoreTimeout, DeadlineError, AuthError)


def detect_dialect(endpoint: str, quipu: dict[str, Any], deadline: Deadline) -> Endpoint:
    """Ask the URL which dialect it speaks, and return the matching transport.

    1. quipu: ``POST {endpoint}/query`` with ``{"query": "ASK {}"}`` and no standard Accept;
       only quipu answers that with its bespoke ``{"result": …}``.
    2. SPARQL 1.1: a form-encoded ``ASK {}`` to the URL itself, answered in W3C JSON.

    A store that cannot be reached (connect, timeout, deadline) fails at once; it is not
    asked twice. The probes count in the returned transport's ``.requests``.
    """
    candidate = _quipu(endpoint, quipu)
    try:
        if candidate.probe(deadline):
            return candidate
        quipu_reason = "no bespoke ASK answer at /query"
    except EndpointError as exc:
        if isinstance(exc, UNREACHABLE):
            candidate.close()
            raise type(exc)(f"[yupana.quipu] endpoint = {redact_url(endpoint)}: {exc.message} (while detecting the "
                            "dialect, through the probe URL quoted second; set [yupana.quipu] dialect to skip "
                            "detection)") from None
        quipu_reason = str(exc)
    spent = candidate.requests
    candidate.close()
    fallback = _sparql11(endpoint, quipu)
    fallback._http.requests += spent
    try:
        fallback.ask("ASK {}", deadline)
        return fallback
    except EndpointError as exc:
        fallback.close()
        if isinstance(exc, UNREACHABLE):
            raise
        if _is_update_url(endpoint):
            raise NotAnEndpoint(f"[yupana.quipu] endpoint = {redact_url(endpoint)} is the store's update URL, not "
                                   "its query URL: yupana only reads — use the query URL (Oxigraph: "
                                   "http://host:7878/query; quipu: its base URL, http://host:3030) "
                                   f"(the store said: {exc.message})") from None
        raise NotAnEndpoint(f"{endpoint}: not recognised as quipu ({quipu_reason}) nor as a SPARQL 1.1 "
                                           f"query URL ({exc.message}) — set [yupana.quipu] dialect; for quipu the "
                                           "endpoint is its base URL (http://host:3030), for a SPARQL 1.1 store its "
                                           "query URL (Oxigraph: http://host:7878/query)") from None


def _sparql11(endpoint: str, quipu: dict[str, Any]) -> Sparql11Endpoint:
    from yupana.endpoint.auth import read_credentials
    from yupana.endpoint.sparql11 import Sparql11Endpoint

    return Sparql11Endpoint(
        endpoint,
        default_graph=quipu.get("default_graph"),
        update_url=quipu.get("update_endpoint"),
        connect_timeout=_setting(quipu, "connect_timeout_secs"),
        request_timeout=_setting(quipu, "request_timeout_secs"),
        credentials=read_credentials(quipu),
    )


def _quipu(endpoint: str, quipu: dict[str, Any]) -> QuipuEndpoint:
    from yupana.endpoint.auth import read_credentials
    from yupana.endpoint.quipu import QuipuEndpoint

    return QuipuEndpoint(
        endpoint,
        graph=quipu.get("default_graph"),
        max_rows=int(_setting(quipu, "max_rows")),
        connect_timeout=_setting(quipu, "connect_timeout_secs"),
        request_timeout=_setting(quipu, "request_timeout_secs"),
        credentials=read_credentials(quipu),
    )


def _setting(quipu: dict[str, Any], key: str) -> Any:
    """A key of ``[yupana.quipu]``; the model's default when the table omits it."""
    if quipu.get(key) is not None:
        return quipu[key]
    from yupana.config import Quipu

    return Quipu.model_fields[key].default


def _is_update_url(endpoint: str) -> bool:
    """Whether ``endpoint`` names a store's SPARQL Update path (``…/update``, ``…/sparql/update``)."""
    path = endpoint.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return path.rsplit("/", 1)[-1].lower() in ("update", "statements")
