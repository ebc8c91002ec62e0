"""Credentials: read credentials for the store (Basic or Bearer) and the token for writes.

Secrets come from the environment or a file, never from the configuration itself, and
never leave this module except as an ``Authorization`` header value: they are not
logged, not cached, not part of an endpoint's identity, and :meth:`Credentials.scrub`
removes them from any text (an error message quoting a server reply, for instance).

Read credentials (``[yupana.quipu]``):

* ``auth`` = ``"none"`` (default) | ``"basic"`` | ``"bearer"``;
* ``auth_user``: the Basic user name (required for ``basic``);
* the secret (password or token): the environment variable named by ``credentials_env``
  (default ``YUPANA_SPARQL_SECRET``), else the first line of ``credentials_file``.

Write token (quipu's ``/knot``): ``$QUIPU_AUTH_TOKEN``, else the file named by
``$QUIPU_AUTH_TOKEN_FILE``, else ``~/.config/quipu/token``. Empty means none.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from typing import Any
from dataclasses import dataclass, field

from yupana.endpoint.base import AuthError, EndpointError


@dataclass(frozen=True, slots=True)
class Credentials:
    scheme: str  # "basic" | "bearer"
    user: str | None
    secret: str = field(repr=False)

    def header(self) -> str:
        """The ``Authorization`` header value."""
        if self.scheme == "basic":
            pair = f"{self.user}:{self.secret}".encode()
            return "Basic " + base64.b64encode(pair).decode("ascii")
        return "Bearer " + self.secret

    def scrub(self, text: str) -> str:
        """``text`` with the secret (and its encoded header form) replaced by ``***``."""
        for needle in (self.header().split(" ", 1)[1], self.secret):
            if needle:
                text = text.replace(needle, "***")
        return text

    def __repr__(self) -> str:
        return f"Credentials(scheme={self.scheme!r}, user={self.user!r}, secret=***)"


def read_credentials(quipu: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Credentials | None:
    """The read credentials configured in ``[yupana.quipu]``, or None for ``auth = "none"``.

    Raises AuthError when credentials are configured but unusable; the
    message names where the secret was looked for, never the secret.
    """
    scheme = (quipu.get("auth") or "none").lower()
    if scheme == "none":
        return None
    if scheme not in ("basic", "bearer"):
        raise AuthError(f'[yupana.quipu] auth = "{scheme}": use "none", "basic" or "bearer"')
    env = os.environ if env is None else env
    user = quipu.get("auth_user")
    if scheme == "basic" and not user:
        raise AuthError('[yupana.quipu] auth = "basic" needs auth_user (the user name)')
    var = quipu.get("credentials_env") or "YUPANA_SPARQL_SECRET"
    secret = (env.get(var) or "").strip()
    path = quipu.get("credentials_file")
    if not secret and path:
        secret = _first_line(os.path.expanduser(path), "[yupana.quipu] credentials_file")
    if not secret:
        where = f"${var}" + (f" or {path}" if path else " (or set [yupana.quipu] credentials_file)")
        raise AuthError(f'[yupana.quipu] auth = "{scheme}" but no secret was found in {where}')
    return Credentials(scheme, user if scheme == "basic" else None, secret)


def token_for_writes(env: Mapping[str, str] | None = None) -> str | None:
    """The bearer token for quipu writes, or None. Unreadable or empty sources are skipped."""
    env = os.environ if env is None else env
    token = (env.get("QUIPU_AUTH_TOKEN") or "").strip()
    if token:
        return token
    candidates = []
    if env.get("QUIPU_AUTH_TOKEN_FILE"):
        candidates.append(os.path.expanduser(env["QUIPU_AUTH_TOKEN_FILE"]))
    home = env.get("HOME")
    if home:
        candidates.append(os.path.join(home, ".config", "quipu", "token"))
    for path in candidates:
        try:
            token = _first_line(path, "token file")
        except EndpointError:
            continue
        if token:
            return token
    return None


def _first_line(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return (fh.readline() or "").strip()
    except OSError as exc:
        raise AuthError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise AuthError(f"{what} {path} is not UTF-8 text") from None
