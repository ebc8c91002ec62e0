"""``yupana bundle build|keygen``: publish the validated projection as one signed bundle. Cold path.

``yupana bundle build --out FILE`` refreshes the projection from the store (the same
refresh, SHACL gate and cache as ``yupana project``; ``--no-refresh`` signs the cache as it
is), refuses a cache the hooks would not serve (expired, another endpoint), and writes the
signed bundle atomically (:mod:`yupana.projection.bundle`) with the key of
``[yupana.bundle] signing_key_path``. Serve FILE from any static HTTP server, object store
or CDN; hosts set ``[yupana.bundle] url`` and ``trusted_keys`` (docs/bundles.md).

``yupana bundle keygen --out FILE`` writes a new ed25519 private key (PKCS#8 PEM, mode
0600; never over an existing file) and prints the public key line a host trusts.

Exit codes: 0 written; 1 refused or failed (the reason on stderr); 3 a refresh is running.
``--json``: ``yupana.bundle.build/1`` and ``yupana.bundle.keygen/1`` (docs/json.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from yupana.commands.json_output import emit

EXIT_FAILED = 1
EXIT_BUSY = 3


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--json", "--config")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="refresh, then sign the validated projection into one bundle file")
    build.add_argument("--out", required=True, help="the bundle file to write (atomically)")
    build.add_argument("--no-refresh", action="store_true", help="sign the cache as it is (it must be servable)")
    build.add_argument("--key", default=None, help="the signing key (default: [yupana.bundle] signing_key_path)")
    build.add_argument("--root", default=None, help="project root whose configuration to use (default: cwd)")
    keygen = sub.add_parser("keygen", help="write a new ed25519 signing key and print its public key")
    keygen.add_argument("--out", required=True, help="the private key file to create (PKCS#8 PEM, mode 0600)")
    for action in (build, keygen):  # the global --json, also after the action word
        action.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def run(args: argparse.Namespace) -> int:
    if args.action == "keygen":
        return _keygen(args.out, bool(getattr(args, "json", False)))
    return _build(args)


def _keygen(out: str, as_json: bool) -> int:
    from yupana.projection import bundle

    pem, raw = bundle.generate_private_pem()
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        print(f"yupana: cannot create {out}: {exc.strerror or exc} (an existing key is never replaced)", file=sys.stderr)
        return EXIT_FAILED
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    found = {"private_key": out, "key_id": bundle.key_id(raw), "public_key": bundle.public_key_text(raw)}
    if as_json:
        emit("bundle.keygen", found)
    else:
        print(f"wrote {out} ({found['key_id']})")
        print(f'hosts trust it with: [yupana.bundle] trusted_keys = ["{found["public_key"]}"]')
    return 0


def _build(args: argparse.Namespace) -> int:
    from yupana import config, project_root
    from yupana.projection import bundle
    from yupana.state import atomic, cache
    from yupana.workers import refresher

    root = project_root.cold_root(args.root)
    override = getattr(args, "config", None)
    as_json = bool(getattr(args, "json", False))
    try:
        cfg = config.resolve(root, override)["config"]
    except config.ConfigError as exc:
        return _fail("config", str(exc), as_json)
    key_path = args.key or cfg["bundle"].get("signing_key_path")
    if not key_path:
        return _fail("config", "no signing key: set [yupana.bundle] signing_key_path (or pass --key; "
                               "`yupana bundle keygen --out FILE` makes one)", as_json)
    key_path = os.path.join(root, os.path.expanduser(key_path))
    configured = (cfg["quipu"].get("endpoint") or "").strip()
    if not configured:
        return _fail("config", "no endpoint configured: a bundle carries the store it was projected from; "
                               "set [yupana.quipu] endpoint", as_json)
    if (cfg["bundle"].get("url") or "").strip():
        return _fail("config", "this host fetches bundles ([yupana.bundle] url is set): build on the publisher, "
                               "which projects from the store", as_json)
    try:
        private = bundle.load_private(key_path)
    except bundle.BundleError as exc:
        return _fail(exc.kind, exc.message, as_json)
    key = cache.endpoint_key(configured, root)
    if not args.no_refresh:
        outcome = refresher.refresh_now(root, override, lock_wait_secs=float(cfg["quipu"]["refresh_deadline_secs"]) + 5)
        if not outcome.ok:
            code = EXIT_BUSY if outcome.status == refresher.BUSY else EXIT_FAILED
            return _fail(outcome.error_kind or "refresh", f"refresh failed, no bundle written: {outcome.reason()}",
                         as_json, code)
    from yupana.state import dataset

    ident = dataset.identity(cfg["quipu"], root)
    path = refresher.cache_path_for(configured, ident)
    now = int(time.time())
    found, refused = cache.load_servable_json(path, key, int(cfg["quipu"]["projection_cache_ttl_secs"]), now,
                                              dataset=ident, dialect=cfg["quipu"].get("dialect"))
    if refused:
        return _fail(refused.label, f"the cache would not be served ({refused.reason}); no bundle written", as_json)
    assert found is not None  # load_servable answers a cache or the reason it refused one
    body = {k: v for k, v in found.items() if not k.startswith("_") and k != "dataset"}  # the host's is its own
    data = bundle.build(body, private)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        atomic.write(args.out, data, fsync=True)
    except OSError as exc:
        return _fail("write", f"cannot write {args.out}: {exc.strerror or exc}", as_json)
    header = bundle.header_of(data)
    report = {"status": "written", "path": args.out, "bytes": len(data), "key_id": header["key_id"],
              "digest": header["digest"], "endpoint": header["endpoint"], "confirmed_at": header["confirmed_at"],
              "age_secs": now - int(header["confirmed_at"])}
    if as_json:
        emit("bundle.build", report)
    else:
        print(f"wrote {args.out} ({len(data)} bytes): {header['digest']}, {header['endpoint']}, "
              f"confirmed {report['age_secs']}s ago, signed by {header['key_id']}")
    return 0


def _fail(kind: str, message: str, as_json: bool, code: int = EXIT_FAILED) -> int:
    print(f"yupana: bundle build refused ({kind}): {message}", file=sys.stderr)
    if as_json:
        emit("bundle.build", {"status": "refused", "error_kind": kind, "error": message})
    return code
