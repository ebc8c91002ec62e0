"""Does ``projection.hot`` hold exactly what ``projection.json`` says? (``yupana status``), and
removing one a hook found damaged (:func:`discard_twin`). Cold path, but for that.

A hook trusts a twin whose key (the JSON's inode, size, mtime) matches and whose sections pass
their checksums (:mod:`yupana.state.hot_view`); it never reads the JSON to compare. This is
the comparison a hook cannot afford: every section checked whole, the JSON's SHA-1 against
the one the twin says it was derived from, the twin's bookkeeping against the JSON's, and
every plane entry (derived keys aside) against the JSON's — so a twin that is damaged, or
derived from another catalogue and given this JSON's key, is named, with what to do.
"""

from __future__ import annotations

import os

from yupana.planes import BY_KEY, PLANES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a hook removes a damaged twin here)
if TYPE_CHECKING:
    from typing import Any

    from yupana.state.hot_view import HotCache

#: ``state`` values: the twin serves exactly the JSON; there is none (the next hook derives
#: it); it belongs to an earlier JSON (the next hook derives it again); it fails a checksum;
#: it passes its checksums yet holds another catalogue than the JSON.
MATCHES, ABSENT, OUT_OF_DATE, DAMAGED, MISMATCH = "matches", "absent", "out-of-date", "damaged", "mismatch"


def compare(path: str) -> dict[str, Any]:
    """``{"state", "path", "problems": [str], "sections": int}`` for the twin of the cache at
    ``path`` (see the ``state`` values above). Reads both files whole; writes nothing."""
    from yupana.state import cache, hot_view, statefile

    hot = cache.hot_path_for(path)
    out: dict[str, Any] = {"state": MATCHES, "path": hot, "problems": [], "sections": 0}
    try:
        st = os.stat(path)
        data = statefile.read(path, statefile.CACHE_LIMIT)
    except (OSError, statefile.Refused) as exc:
        return dict(out, state=ABSENT, problems=[f"no readable projection.json to compare with ({exc})"])
    try:
        twin = hot_view.open_file(hot, statefile.CACHE_LIMIT)
    except FileNotFoundError:
        return dict(out, state=ABSENT)
    except (OSError, ValueError) as exc:
        return dict(out, state=DAMAGED, problems=[f"cannot read the twin: {exc}"])
    try:
        if twin.header.get("key") != cache.hot_key(st):
            return dict(out, state=OUT_OF_DATE, problems=["derived from an earlier projection.json (the next hook "
                                                          "derives it again)"])
        try:
            twin.verify()
        except hot_view.Corrupt as exc:
            return dict(out, state=DAMAGED, problems=[str(exc)])
        out["sections"] = len(twin.header["sections"])
        problems = _differences(twin, data)
    finally:
        twin.close()
    if problems:
        out.update(state=MISMATCH, problems=problems)
    return out


def discard_twin(path: str, served: HotCache, *, remove: bool = True) -> bool:
    """Remove the hot twin of ``path`` that ``served`` was read from, found damaged mid-read
    (a section failed its checksum), so the next read derives it again from the JSON; a twin
    renamed over it since is left alone (and nothing is removed unless ``remove``: a
    rehearsal). True when the catalogue is too large for a hook to derive it (start
    ``yupana refresh-worker --twin-only``). Never raises."""
    from yupana.state.cache import INLINE_DERIVE_BYTES, hot_path_for

    hot = hot_path_for(path)
    try:
        fd = served.file.fd
        if fd is not None and remove:
            mine, now = os.fstat(fd), os.stat(hot)
            if (mine.st_ino, mine.st_dev) == (now.st_ino, now.st_dev):
                os.unlink(hot)
        return os.stat(path).st_size > INLINE_DERIVE_BYTES
    except OSError:
        return False


def _differences(twin: Any, data: bytes) -> list[str]:
    """What the twin (already checked) holds that the JSON ``data`` does not, in words."""
    from yupana import fastjson
    from yupana.state import cache, hot_view

    problems = []
    if twin.header.get("json_sha1") != cache.sha1_hex(data):
        problems.append("the twin says it was derived from another projection.json (its json_sha1 differs)")
    try:
        body = fastjson.loads(data)
    except ValueError as exc:
        return problems + [f"projection.json does not parse ({exc})"]
    if not isinstance(body, dict):
        return problems + ["projection.json is not an object"]
    served = hot_view.HotCache(twin)
    meta = {k: v for k, v in body.items() if k not in BY_KEY}
    for key in sorted(set(meta) | set(served.meta)):
        if meta.get(key) != served.meta.get(key):
            problems.append(f"field {key!r}: the twin has {_short(served.meta.get(key))}, the JSON "
                            f"{_short(meta.get(key))}")
    for plane in PLANES:
        want = body.get(plane.key)
        if plane.shape == "list":
            want = want or []
        if plane.key == "repo_exposure":
            got: Any = served.get("_repo_exposure") or {}
            want = {e.get("repo"): e.get("exposure") for e in want or ()
                    if isinstance(e, dict) and isinstance(e.get("repo"), str)}
        elif plane.key == "text_rules":
            got = [_plain(r) for r in served.text_rules.each()]
        else:
            got = _plain(served.get(plane.key, [] if plane.shape == "list" else None))
        if got != want:
            problems.append(f"plane {plane.key!r}: {_count(got)} in the twin, {_count(want)} in the JSON"
                            + ("" if _count(got) != _count(want) else ", entries differ"))
    return problems


def _plain(value: Any) -> Any:
    """``value`` without the derived keys (``_…``) the twin adds to entries and objects."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if not (isinstance(k, str) and k.startswith("_"))}
    return value


def _count(value: Any) -> str:
    return f"{len(value)} entr{'y' if len(value) == 1 else 'ies'}" if isinstance(value, (list, dict)) else repr(value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
