"""yupana.redact: URLs without their credentials, text without the URLs' secrets."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from yupana import redact


@pytest.mark.parametrize("url,shown", [
    ("http://alice:s3cr%40t@127.0.0.1:8080/q", "http://***@127.0.0.1:8080/q"),
    ("https://ghp_TOKEN123@h.example.com", "https://***@h.example.com"),
    ("http://h:7878/query?access_token=abcdef&x=1", "http://h:7878/query?access_token=***&x=1"),
    ("http://h/?api_key=1&Token=2&signature=3&q=4#key=zz&y=1", "http://h/?api_key=***&Token=***&signature=***&q=4#key=***&y=1"),
    ("http://h/#access_token=zz", "http://h/#access_token=***"),
    ("http://h:3030/", "http://h:3030/"),
    ("http://h/p@q/x", "http://h/p@q/x"),  # an @ in the path is no userinfo
    ("file:/srv/cat,/srv/more", "file:/srv/cat,/srv/more"),
    ("file://carol:pw@/srv/cat", "file://***@/srv/cat"),
    ("file:/srv/cat?key=abcdef", "file:/srv/cat?key=***"),
    # issue 23 §3: a password with an unencoded / ? # still ends at the @ before the host
    ("http://dave:s3c/ret@h.example:3030/sparql", "http://***@h.example:3030/sparql"),
    ("http://erin:s3c#ret@h:3030/q?x=1", "http://***@h:3030/q?x=1"),
    ("http://fay:s3c?ret@h/", "http://***@h/"),
    ("http://gus:a/b@c@h/q", "http://***@h/q"),  # an @ in the password too: the host-shaped one ends it
    ("http://h:80/p@q/x", "http://h:80/p@q/x"),  # a port, then an @ in the path: no userinfo
    ("http://h:3030?email=a@b.example", "http://h:3030?email=a@b.example"),  # ... or in the query
    ("http://h:3030#a@b", "http://h:3030#a@b"),
    ("http://x/y?z@host", "http://x/y?z@host"),
    ("http://h/cb?code=abcdef&state=1", "http://h/cb?code=***&state=1"),  # an OAuth authorization code
    ("http://h/?device_code=abcdef&postcode=1&otp=123456", "http://h/?device_code=***&postcode=1&otp=***"),
    ("", ""),
])
def test_redact_url(url, shown):
    assert redact.redact_url(url) == shown


def test_text_loses_every_url_secret_and_keeps_the_rest():
    text = ("refresh FAILED: 'http://bob:hunter22x@10.0.0.1:3030/query' redirects to "
            "https://m:other-pw@evil.example/x?token=tok-123456, (httpx: bob:hunter22x@10.0.0.1:3030) "
            "ssh ops@db.example.com git@github.com:acme/widgets.git")
    out = redact.redact_text(text)
    for secret in ("hunter22x", "other-pw", "tok-123456"):
        assert secret not in out
    assert "http://***@10.0.0.1:3030/query" in out and "token=***" in out
    assert "ssh ops@db.example.com git@github.com:acme/widgets.git" in out


def test_a_secret_seen_in_a_url_is_masked_when_echoed_alone():
    redact.redact_url("http://h/sparql?secret=echoed-SECRET-9")
    assert redact.redact_text("server said: no dataset for echoed-SECRET-9") == "server said: no dataset for ***"


def test_governed_regexes_are_not_urls():
    for pattern in (r"[?&](access_token|api_key)=[A-Za-z0-9_-]{20,}", r"https?://[^@\s]+:[^@\s]+@",
                    r"\w+://[^/\s:@]+:[^/\s@]+@", r"\bACME0-[0-9]+\b"):
        assert redact.redact_text(f"PATTERN {pattern} ok") == f"PATTERN {pattern} ok"


def test_a_stream_redacts_urls_written_in_pieces():
    inner = io.StringIO()
    stream = redact.RedactingStream(inner)
    for piece in ("endpoint : http://al", "ice:pw-in-pieces@h", ":1/?tok", "en=piece-token\n", "tail http://x:yyyyyy@z"):
        stream.write(piece)
    stream.flush()
    assert inner.getvalue() == "endpoint : http://***@h:1/?token=***\ntail http://***@z"


def test_redact_imports_nothing():
    code = "import sys; before = set(sys.modules); import yupana.redact; print(sorted(set(sys.modules) - before))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert set(eval(done.stdout)) <= {"__future__", "yupana", "yupana.redact"}  # the hot path's own modules only
