"""``yupana status``'s landing section: the rung, the signing key, the git hook and the last
certification of this project. Cold path (reading the key imports cryptography).

Landing certifications are their own population (the landing spool, never the metrics spool):
this section reads only them, and the hook-health section never counts them.
"""

from __future__ import annotations

from typing import Any

SPOOL_TAIL_BYTES = 4 * 1024 * 1024


def section(cfg: dict[str, Any], root: str, now: int) -> dict[str, Any]:
    """``landing`` in ``status --json`` (docs/status.md "Landing")."""
    from yupana import project_root
    from yupana.commands.install import git as install_git
    from yupana.commands.landing import certificate
    from yupana.evaluate import rung
    from yupana.state import paths

    policy = cfg["policy"]
    setting, mode = policy.get("landing", "off"), policy.get("mode", "off")
    effective = rung(setting, mode)
    key = certificate.signing_key(cfg, root)
    signing = {"path": key.path, "configured": key.configured, "present": key.present, "key_id": None, "error": None}
    if key.present:
        if key.load():
            signing["key_id"] = key.key_id
        else:
            signing["error"] = key.error
    spool_path = paths.landing_spool()
    records = certificate.read(spool_path, SPOOL_TAIL_BYTES)
    mine = [r for r in records if r.get("project") == project_root.project_key(root)]
    counts: dict[str, int] = {}
    for record in mine:
        counts[str(record["kind"])] = counts.get(str(record["kind"]), 0) + 1
    hook = install_git.inspect(root)
    out = {"setting": setting, "effective": effective, "mode": mode, "signing_key": signing,
           "git_hook": hook, "spool": {"path": spool_path, "records": len(records), "this_project": len(mine),
                     "last_seq": records[-1].get("seq") if records else None},
           "counts": counts, "last": _last(mine[-1], now) if mine else None, "notes": []}
    notes: list[str] = out["notes"]
    if setting != "off" and effective == "off":
        notes.append(f"landing = \"{setting}\" but mode = \"{mode}\" (the ceiling): pushes are not evaluated")
    if effective != "off" and not hook["ours"]:
        notes.append("the git pre-push hook is not installed in this repository: pushes are not certified "
                     "(`yupana install git`, or pre-commit's yupana-landing hook)")
    if effective != "off" and signing["key_id"] is None:
        notes.append(f"certifications are written UNSIGNED: no signing key at {key.path or '(signing_key_path unset)'}"
                     if not key.present else f"certifications are written UNSIGNED: the signing key cannot be used "
                                             f"({signing['error']})")
    return out


def _last(record: dict[str, Any], now: int) -> dict[str, Any]:
    ts = record.get("ts")
    return {"kind": record.get("kind"), "outcome": str(record.get("kind", "")).removeprefix("landing-"),
            "at": ts, "age_secs": now - ts if isinstance(ts, int) else None, "repo": record.get("repo"),
            "ref": record.get("ref"), "sha": record.get("sha"), "reason": record.get("reason"),
            "signed": record.get("signed") is True, "key_id": record.get("key_id"),
            "blocking": record.get("blocking") is True}
