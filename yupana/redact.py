"""Credentials never leave in a URL: what yupana prints or stores goes through here. Hot and cold.

* :func:`redact_url` — one URL with its userinfo (``user:password@``) replaced by ``***@``
  and the values of credential-like query and fragment parameters (``token``, ``key``,
  ``password``, ``secret``, ``access_token``, ``sig``, ``code``, … — see :func:`sensitive_name`)
  replaced by ``***``. Userinfo is found even when its password holds an unencoded ``/``,
  ``?`` or ``#`` (which would otherwise end the authority): a ``user:…@host`` run before
  the path is userinfo (:func:`_userinfo_end`). Everything else (scheme, host, port, path, other parameters) is
  kept, so a redacted endpoint still says which store it is.
* :func:`redact_text` — any text (an error message quoting a URL, an ``httpx`` exception,
  a server's reply echoing the request) with every URL in it redacted, and every secret
  seen so far in this process (the masked parts of any URL :func:`redact_url` redacted, in
  plain and percent-encoded form) replaced by ``***`` wherever it appears on its own.
* :func:`redact_fields` — the same for the strings of a record (nested dicts and lists).

Imports nothing, and cheap: text without ``://``, ``@`` or a remembered secret is
returned as is after a few substring tests, so a hook pays nothing for it.
Redaction is a display and storage rule; the request itself always uses the configured URL.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, TextIO

MASK = "***"

# A parameter is credential-like when its lower-cased name contains one of these.
_SENSITIVE_PARTS = ("token", "key", "pass", "pwd", "secret", "auth", "sig", "credential", "session", "jwt",
                    "bearer", "cookie", "private")
# ... or is one of these (an OAuth authorization code, a one-time password), or ends in ``_code``.
_SENSITIVE_NAMES = ("code", "otp", "pin")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]%")
# Where a URL ends inside running text (a password may hold most other characters).
_URL_END = frozenset(" \t\r\n\"'`<>\\")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
_MIN_SECRET = 6  # shorter masked values are not hunted for in free text (they would mangle it)

_secrets: set[str] = set()


def sensitive_name(name: str) -> bool:
    """True for a query/fragment parameter name that carries a credential."""
    low = name.strip().lower()
    return (any(part in low for part in _SENSITIVE_PARTS) or low in _SENSITIVE_NAMES
            or low.endswith(("_code", "-code", ".code")))


def redact_url(url: str) -> str:
    """``url`` without credentials: userinfo becomes ``***@``, credential-like parameter
    values become ``***``. The masked parts are remembered for :func:`redact_text`."""
    if not url or ("@" not in url and "?" not in url and "#" not in url):
        return url
    head, sep, rest = url.partition("://")
    if sep:
        cut = len(rest)
        for ch in "/?#":
            at = rest.find(ch)
            if 0 <= at < cut:
                cut = at
        if "@" not in rest[:cut]:
            cut = _userinfo_end(rest, cut)
        authority, tail = rest[:cut], rest[cut:]
        userinfo, at_sign, host = authority.rpartition("@")
        if at_sign:
            _remember_userinfo(userinfo)
            authority = MASK + "@" + host
        url = head + sep + authority + tail
        prefix_len = len(head) + len(sep) + len(authority)
    else:
        prefix_len = 0
    body = url[prefix_len:]
    q = body.find("?")
    f = body.find("#")
    if q < 0 and f < 0:
        return url
    if f >= 0 and (q < 0 or f < q):
        return url[:prefix_len] + body[:f + 1] + _mask_params(body[f + 1:])
    path, query = body[:q], body[q + 1:]
    fragment = ""
    hash_at = query.find("#")
    if hash_at >= 0:
        query, fragment = query[:hash_at], "#" + _mask_params(query[hash_at + 1:])
    return url[:prefix_len] + path + "?" + _mask_params(query) + fragment


def redact_text(text: str) -> str:
    """``text`` with every URL in it redacted and every remembered secret masked."""
    if not text or not isinstance(text, str):
        return text
    if "://" in text or "@" in text:
        text = _redact_urls(text)
    if _secrets:
        for secret in sorted(_secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, MASK)
    return text


def redact_fields(value: object) -> object:
    """A copy of ``value`` (str, dict, list, tuple; anything else as is) with its strings redacted."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_fields(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_fields(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_fields(v) for v in value)
    return value


class RedactingStream:
    """A text stream whose every line goes out through :func:`redact_text` (a cold command's
    stdout and stderr: ``status``, ``explain``, ``project [--dump]``, ``config check``).

    Lines are redacted whole, so a URL written in pieces (``print`` and ``json.dump`` write
    in chunks) is still seen as one; ``flush`` writes a pending partial line. Everything
    else (``buffer``, ``isatty``, ``encoding``) is the wrapped stream's.
    """

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        if "\n" in self._pending:
            lines, _, self._pending = self._pending.rpartition("\n")
            self._inner.write(redact_text(lines + "\n"))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, ""
            self._inner.write(redact_text(pending))
        self._inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def remember(url: str) -> None:
    """Learn the secrets of ``url`` (a configured endpoint) without printing anything."""
    redact_url(url)


# ── internals ───────────────────────────────────────────────────────────────────────


def _userinfo_end(rest: str, cut: int) -> int:
    """Where the authority of ``rest`` (a URL after ``://``) ends when its password may hold an
    unencoded ``/``, ``?`` or ``#`` (``cut``, the first of them, otherwise).

    The first ``@`` after ``cut`` that follows a ``user:`` (a user without ``/?#``, then a
    colon that is not a port — not only digits up to ``cut``) and precedes a host-shaped run
    (host characters up to the next ``/?#`` or the end) ends the userinfo: the authority is
    then ``user:password@host``. Otherwise ``cut``: an ``@`` in a path (``http://h/p@q``) or
    behind a port (``http://h:80/p@q``, ``http://h:80?email=a@b.c``) is no userinfo."""
    user, colon, after = rest[:cut].partition(":")
    if not colon or not user or cut >= len(rest) or after.isdigit():
        return cut  # no ``user:``, or ``host:port`` then the path, query or fragment
    at = rest.find("@", cut)
    while at >= 0:
        end = at + 1
        while end < len(rest) and rest[end] not in "/?#":
            end += 1
        host = rest[at + 1:end]
        if host and all(c in _HOST_CHARS for c in host):
            return end
        at = rest.find("@", at + 1)
    return cut



def _mask_params(query: str) -> str:
    if "=" not in query:
        return query
    out = []
    for pair in query.split("&"):
        name, eq, value = pair.partition("=")
        if eq and value and value != MASK and sensitive_name(_unquote(name)):
            _learn(value)
            pair = name + "=" + MASK
        out.append(pair)
    return "&".join(out)


def _remember_userinfo(userinfo: str) -> None:
    if userinfo == MASK:
        return
    user, colon, password = userinfo.partition(":")
    if colon:
        _learn(password)
    else:
        _learn(user)  # a lone userinfo is a token (https://TOKEN@host)


def _learn(secret: str) -> None:
    if len(secret) < _MIN_SECRET or secret == MASK:
        return
    _secrets.add(secret)
    plain = _unquote(secret)
    if plain != secret and len(plain) >= _MIN_SECRET:
        _secrets.add(plain)


def _unquote(text: str) -> str:
    """Percent-decoding without urllib (a hook must not import it): ``%41`` → ``A``, ``+`` kept."""
    if "%" not in text:
        return text
    raw = bytearray()
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "%" and i + 2 < n and _is_hex(text[i + 1:i + 3]):
            raw.append(int(text[i + 1:i + 3], 16))
            i += 3
            continue
        raw += ch.encode("utf-8")
        i += 1
    return raw.decode("utf-8", "replace")


def _is_hex(pair: str) -> bool:
    return len(pair) == 2 and all(c in "0123456789abcdefABCDEF" for c in pair)


def _redact_urls(text: str) -> str:
    """Redact each URL-shaped word of ``text`` (found from its ``://`` or ``@``, so a long
    text with neither costs two ``find`` calls)."""
    n = len(text)
    spans = set()
    for needle in ("://", "@"):
        at = text.find(needle)
        while at >= 0:
            start = at
            while start > 0 and text[start - 1] not in _URL_END:
                start -= 1
            end = at + len(needle)
            while end < n and text[end] not in _URL_END:
                end += 1
            spans.add((start, end))
            at = text.find(needle, end)
    out = []
    last = 0
    for start, end in sorted(spans):
        if start < last:
            continue
        word = text[start:end]
        fixed = _redact_word(word)
        if fixed != word:
            out.append(text[last:start])
            out.append(fixed)
            last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _redact_word(word: str) -> str:
    """One whitespace/quote-delimited run: the ``scheme://`` URL(s) in it redacted.

    Only a real scheme (a letter, then letters, digits, ``+-.``) starts a URL, and a run
    without one is only searched for ``user:password@host``: a governed regex shown by
    ``project --dump`` (``[?&]token=…``, ``https?://…``) is not a URL and stays as written.
    """
    at = word.find("://")
    if at < 0:
        return _bare_userinfo(word)
    begin = at
    while begin > 0 and word[begin - 1] in _SCHEME_CHARS:
        begin -= 1
    while begin < at and not word[begin].isalpha():
        begin += 1
    nxt = word.find("://", at + 3)
    end = len(word)
    if nxt >= 0:  # two URLs glued together (``http://…,http://…``): redact each on its own
        end = nxt
        while end > at + 3 and word[end - 1] in _SCHEME_CHARS:
            end -= 1
    head = word[:begin] if begin < at else word[:at + 3]
    url = word[begin:end] if begin < at else ""
    tail = word[end:] if begin < at else word[at + 3:end]
    rest = _redact_word(word[end:]) if nxt >= 0 else ""
    if begin < at:
        return head + redact_url(url) + rest
    return head + _bare_userinfo(tail) + rest


def _bare_userinfo(word: str) -> str:
    """``user:password@host`` with no scheme (an httpx message quoting the netloc)."""
    userinfo, at_sign, host = word.rpartition("@")
    if not at_sign or ":" not in userinfo:
        return word
    name = host.split("/", 1)[0].rstrip(")]},;.'")
    if not name or not all(c.isalnum() or c in ".-:" for c in name) or ("." not in name and ":" not in name):
        return word
    lead = len(userinfo)
    while lead > 0 and userinfo[lead - 1] not in "([{=,;":
        lead -= 1
    user, _, password = userinfo[lead:].partition(":")
    if not user or not password or not all(c.isalnum() or c in "._-%+" for c in user):
        return word
    _remember_userinfo(userinfo[lead:])
    return word[:lead] + MASK + "@" + host
