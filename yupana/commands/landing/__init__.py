"""``yupana landing verify|keygen``: check signed landing certifications; make their key. Cold path.

``yupana landing verify [RECORD | --last | --all] [--sha C] [--ref R] [--repo N] [--require
signed|certified] [--key K…] [--json]`` checks landing certifications
(:mod:`yupana.commands.landing.certificate`): RECORD is a file holding one record (a JSON
object, or a line of the landing spool; ``-`` reads stdin); ``--last`` the newest record of the
landing spool (the default), ``--all`` every one — with ``--sha/--ref/--repo``, the newest (or
every) record for that commit, ref and repository. A record verifies when it claims a
signature, its key is trusted, the signature covers every field, its kind follows from the
requirements it lists, it is for the commit/ref/repo asked (``mismatch``), and — under
``--require certified``, the default when one is asked — it certified the push
(``not-certified``). The spool's chain (:mod:`yupana.commands.landing.chain`) is checked
whole: a deleted, duplicated or edited record fails the run. Trusted keys: each ``--key`` (``ed25519:<base64>``
as ``keygen`` prints it, or a PEM public key file), else the public half of this project's
``[yupana.quipu] signing_key_path``.

Exit codes: 0 every record checked verifies; 1 one does not (``format``, ``unknown-key``,
``signature``, ``inconsistent``, ``mismatch``, ``not-certified``, ``missing``) or the chain is broken; 3 one is unsigned (it says so; there is nothing to verify)
and none failed; 2 nothing to check or nothing to check it with (no record, a signed record
and no key, a file that cannot be read).

``yupana landing keygen [--out FILE]`` creates the ed25519 signing key (PKCS#8 DER, mode
0600, never over an existing file) at ``--out``, else at ``signing_key_path``, and prints its
public key line; a key inside a git work tree that git would not ignore is added to that
repository's ``.git/info/exclude`` (and the command says so), so it is never committed.
The hook signs only once this file exists. Operator page: docs/landing.md.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # the hook imports this package: argparse, json and typing load only when a command runs
if TYPE_CHECKING:
    import argparse
    from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNSIGNED = 0, 1, 2, 3
GLOBAL_FLAGS: tuple[str, ...] = ("--json", "--config")  # the report as JSON; the key's path from that config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    import argparse

    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    verify = sub.add_parser("verify", help="verify signed landing certifications (exit 0 verified, 1 not, 3 unsigned)")
    verify.add_argument("record", nargs="?", default=None, metavar="RECORD",
                        help="a file holding one landing record (- reads stdin); default: --last")
    which = verify.add_mutually_exclusive_group()
    which.add_argument("--last", action="store_true", help="the newest record of the landing spool")
    which.add_argument("--all", action="store_true", help="every record of the landing spool")
    verify.add_argument("--key", action="append", default=[], metavar="K",
                        help="a trusted public key: ed25519:<base64>, or a PEM public key file (repeatable; "
                             "default: this project's signing key)")
    verify.add_argument("--root", default=None, help="project root whose configuration to use (default: cwd)")
    verify.add_argument("--sha", default=None, metavar="COMMIT",
                        help="the record must certify this commit (a full id, or anything git names in the project); "
                             "from the spool: the newest record that does")
    verify.add_argument("--ref", default=None, help="the record must be for this ref (main = refs/heads/main)")
    verify.add_argument("--repo", default=None, help="the record must be for this repository name")
    verify.add_argument("--require", choices=("signed", "certified"), default=None,
                        help="certified: a refused or unknown push fails (the default with --sha/--ref/--repo); "
                             "signed: any verified record passes (the default otherwise)")
    keygen = sub.add_parser("keygen", help="create the ed25519 key landing certifications are signed with")
    keygen.add_argument("--out", default=None, help="the key file to create (default: [yupana.quipu] signing_key_path)")
    keygen.add_argument("--root", default=None, help="project root whose configuration to use (default: cwd)")
    for action in (verify, keygen):  # the global --json, also after the action word
        action.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def run(args: argparse.Namespace) -> int:
    from yupana import config, project_root

    as_json = bool(getattr(args, "json", False))
    root = project_root.cold_root(args.root)
    try:
        cfg = config.resolve(root, getattr(args, "config", None))["config"]
    except config.ConfigError as exc:
        return _usage("landing." + args.action, f"configuration error\n{exc}", as_json, kind="config")
    if args.action == "keygen":
        return keygen(cfg, root, args.out, as_json)
    return verify(cfg, root, args, as_json)


# ── verify ───────────────────────────────────────────────────────────────────────────


def verify(cfg: dict[str, Any], root: str, args: argparse.Namespace, as_json: bool) -> int:
    from yupana.commands.landing import certificate, match

    try:
        want = match.Want(match.resolve_sha(root, args.sha) if args.sha else None, args.ref, args.repo,
                          args.require or ("certified" if (args.sha or args.ref or args.repo) else "signed"), root)
        records, source, chain = _records(args, want)
    except ValueError as exc:
        return _usage("landing.verify", str(exc), as_json)
    key = certificate.signing_key(cfg, root)
    try:
        trusted = certificate.trusted_keys(args.key, root, key)
    except certificate.Refusal as exc:
        return _usage("landing.verify", exc.message, as_json)
    if not trusted and any(isinstance(r, dict) and r.get("signed") is True for r in records):
        return _usage("landing.verify", f"no key to verify with: pass --key ed25519:<base64> (or a PEM public key "
                                        f"file), or create this project's signing key ({key.path or 'unset'})", as_json)
    results = [_check(record, trusted, want) for record in records]
    if not records:  # asked for a commit/ref/repo the spool holds no record of
        results.append({"kind": None, "ts": None, "repo": want.repo, "ref": want.ref, "verified": False,
                        "key_id": None, "problem": "missing",
                        "message": f"no landing record for {want.describe()} in {source}"})
    failed = [r for r in results if not r["verified"] and r["problem"] != "unsigned"]
    code = EXIT_FAILED if failed or (chain and chain["problems"]) else (
        EXIT_UNSIGNED if any(not r["verified"] for r in results) else EXIT_OK)
    if as_json:
        from yupana.commands.json_output import emit

        emit("landing.verify", {"schema_version": 1, "source": source, "trusted_keys": sorted(trusted),
                                "require": want.require, "records": results,
                                "verified": sum(r["verified"] for r in results), "chain": chain, "exit_code": code})
    else:
        for r in results:
            what = f"{r['kind'] or want.describe()} {r['repo'] or '?'} {r['ref'] or ''}".rstrip()
            if r["verified"]:
                print(f"verified   : {what} (ts {r['ts']}), signed by {r['key_id']}")
            else:
                print(f"{'UNSIGNED' if r['problem'] == 'unsigned' else 'REFUSED':<11}: {what} (ts {r['ts']}): "
                      f"{r['problem']}: {r['message']}")
        for problem in (chain or {}).get("problems") or []:
            print(f"{'CHAIN':<11}: {problem}")
        if chain and chain["problems"]:
            print(f"the landing spool's chain is broken ({len(chain['problems'])} break(s)): records were deleted, "
                  "duplicated or edited — its certifications are not evidence")
        print(f"{sum(r['verified'] for r in results)} of {len(results)} record(s) verified ({source})")
    return code


def _check(record: Any, trusted: dict[str, bytes], want: Any) -> dict[str, Any]:
    """One record's verification: signature and consistency, then the commit/ref/repo and kind wanted."""
    from yupana.commands.landing import certificate

    entry: dict[str, Any] = {"kind": record.get("kind") if isinstance(record, dict) else None,
                             "ts": record.get("ts") if isinstance(record, dict) else None,
                             "repo": record.get("repo") if isinstance(record, dict) else None,
                             "ref": record.get("ref") if isinstance(record, dict) else None,
                             "sha": record.get("sha") if isinstance(record, dict) else None,
                             "seq": record.get("seq") if isinstance(record, dict) else None}
    try:
        entry.update(verified=True, key_id=certificate.verify(record, trusted), problem=None, message=None)
    except certificate.Refusal as exc:
        entry.update(verified=False, key_id=record.get("key_id") if isinstance(record, dict) else None,
                     problem=exc.kind, message=exc.message)
        return entry
    mismatch = want.mismatch(record)
    unmet = want.unmet_kind(record)
    if mismatch or unmet:
        entry.update(verified=False, problem="mismatch" if mismatch else "not-certified", message=mismatch or unmet)
    return entry


def _records(args: argparse.Namespace, want: Any) -> tuple[list[Any], str, dict[str, Any] | None]:
    """The records to check, where they came from, and the spool's chain check (None for a
    RECORD file); ValueError when there are none to look at."""
    import json

    from yupana.commands.landing import certificate, chain
    from yupana.state import paths

    if args.record is not None:
        if args.last or args.all:
            raise ValueError("give a RECORD file or --last / --all, not both")
        try:
            text = sys.stdin.read() if args.record == "-" else open(args.record, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read {args.record}: {getattr(exc, 'strerror', None) or exc}") from None
        lines = [line for line in text.splitlines() if line.strip()]
        try:
            found = [json.loads(text)] if len(lines) != 1 else [json.loads(lines[0])]
        except ValueError as exc:
            raise ValueError(f"{args.record} does not hold one JSON record ({exc})") from None
        return found, "stdin" if args.record == "-" else args.record, None
    spool = paths.landing_spool()
    records = certificate.read(spool)
    if not records:
        raise ValueError(f"the landing spool holds no certification ({spool or 'no path'}): push through "
                         "`yupana hook pre-push` first")
    before = certificate.read(spool + ".old", max_bytes=1024 * 1024) if spool else []
    checked = {"checked": len(records), "problems": chain.check(records, before[-1] if before else None)}
    if want.selects:
        records = [r for r in records if want.mismatch(r) is None]
    return (records if args.all else records[-1:]), str(spool), checked


# ── keygen ───────────────────────────────────────────────────────────────────────────


def keygen(cfg: dict[str, Any], root: str, out: str | None, as_json: bool) -> int:
    from yupana.commands.landing import certificate
    from yupana.projection import bundle

    target = os.path.abspath(os.path.expanduser(out)) if out else certificate.signing_key(cfg, root).path
    if not target:
        return _usage("landing.keygen", "no key path: pass --out FILE or set [yupana.quipu] signing_key_path", as_json)
    der, raw = bundle.generate_private_pem(der=True)
    try:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        print(f"yupana: cannot create {target}: {exc.strerror or exc} (an existing key is never replaced)",
              file=sys.stderr)
        return EXIT_FAILED
    with os.fdopen(fd, "wb") as fh:
        fh.write(der)
    excluded = _keep_out_of_git(target)
    found = {"private_key": target, "key_id": bundle.key_id(raw), "public_key": bundle.public_key_text(raw),
             "excluded_in": excluded}
    if as_json:
        from yupana.commands.json_output import emit

        emit("landing.keygen", found)
    else:
        print(f"wrote {target} ({found['key_id']})")
        if excluded:
            print(f"added it to {excluded}: git will not commit the private key")
        print(f"verify certifications elsewhere with: yupana landing verify --key {found['public_key']}")
    return EXIT_OK


def _keep_out_of_git(path: str) -> str | None:
    """Add ``path`` to its git work tree's ``info/exclude`` unless git already ignores it; the file edited."""
    import subprocess

    folder = os.path.dirname(path)
    try:
        top = subprocess.run(["git", "-C", folder, "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                             timeout=10, stdin=subprocess.DEVNULL)
        if top.returncode != 0 or not top.stdout.strip():
            return None
        ignored = subprocess.run(["git", "-C", folder, "check-ignore", "-q", path], timeout=10,
                                 stdin=subprocess.DEVNULL, capture_output=True)
        if ignored.returncode == 0:
            return None
        exclude = subprocess.run(["git", "-C", folder, "rev-parse", "--git-path", "info/exclude"], capture_output=True,
                                 text=True, timeout=10, stdin=subprocess.DEVNULL).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    if not exclude:
        return None
    exclude = os.path.join(folder, exclude) if not os.path.isabs(exclude) else exclude
    rel = os.path.relpath(path, top.stdout.strip())
    try:
        os.makedirs(os.path.dirname(exclude), exist_ok=True)
        with open(exclude, "a", encoding="utf-8") as fh:
            fh.write(f"\n# yupana landing signing key (private): never commit it\n/{rel}\n")
    except OSError:
        return None
    return exclude


def _usage(schema: str, message: str, as_json: bool, kind: str = "usage") -> int:
    print(f"yupana: landing: {message}", file=sys.stderr)
    if as_json:
        from yupana.commands.json_output import emit

        emit(schema, {"schema_version": 1, "error": {"kind": kind, "message": message}, "exit_code": EXIT_USAGE})
    return EXIT_USAGE
