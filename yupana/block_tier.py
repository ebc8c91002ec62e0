"""Can a block-tier text rule block in this repository, and if not, why not. Cold path.

A text rule of tier ``block`` blocks only under ``mode = "enforce"`` and only in a
repository whose exposure is ``public`` (docs/vocabulary.md, "Repository exposure"); an
internal repository downgrades it to a warning and an unknown exposure leaves it a warning
that says so. Which of these holds is invisible from the rules themselves, so ``yupana
project --dump`` and ``yupana status`` state it with :func:`assess`, asking the exposure
sources exactly as a hook would (:func:`yupana.exposure.resolve`, as a dry run: no lookup
is started) for the repository at the project root.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any


def assess(cfg: dict[str, Any], cache: dict[str, Any] | None, root: str, now: int, *,
           override: str | None = None, no_cache: str | None = None) -> dict[str, Any]:
    """``{block_rules, repo, exposure, source, reason, mode, can_block, why}`` for the project at ``root``.

    ``cache`` is the projection the hooks would serve (None: ``no_cache`` says why there is
    none). ``why`` is one sentence: what makes the block tier block, or what stops it."""
    from yupana import exposure
    from yupana.edit import git_repo

    mode = cfg["policy"]["mode"]
    rules = [r for r in (cache or {}).get("text_rules") or () if isinstance(r, dict) and r.get("tier") == "block"]
    top = git_repo.git_top(root)
    repo = git_repo.repo_name(top) if top else None
    found, reason, source = exposure.resolve(
        cfg["quipu"], (cache or {}).get("repo_exposure"), cfg["policy"].get("exposure"), repo, now, root=root,
        override=override, workers=exposure.LookOnly(),
        no_repo_reason="the project root is in no git tree" if not top else "the repository has no origin remote")
    if reason:  # a dry run starts no lookup: say who will
        reason = reason.replace("looking it up in the background",
                                "a hook looks it up in the background when a block-tier rule next fires")
    out = {"block_rules": None if cache is None else len(rules), "repo": repo or "unresolved", "exposure": found,
           "source": source, "reason": reason, "mode": mode, "can_block": False}
    shown = f"repo `{out['repo']}`"
    quipu = cfg["quipu"]
    if not quipu.get("enabled") or not (quipu.get("endpoint") or "").strip():
        out["why"] = ("the governed plane is not configured ([yupana.quipu] enabled = true and an endpoint): hooks "
                      "enforce no governed rule")
    elif cache is None:
        out["why"] = f"no servable projection cache ({no_cache or 'none'}): governed rules are not enforced at all"
    elif not rules:
        out["why"] = "the catalogue holds no block-tier text rule"
    elif found == "unknown":
        out["why"] = (f"the exposure of {shown} is unknown → block-tier rules only warn: {reason}. Fix: state it in "
                      f"the graph (aegis:repo_{repo or '<name>'} aegis:exposure \"public\") or set [yupana.policy] "
                      "exposure")
    elif found == "internal":
        out["why"] = f"{shown} is internal ({reason}) → block-tier rules are downgraded to warnings"
    elif mode != "enforce":
        out["why"] = f"{shown} is public ({reason}), but mode = {mode}: only enforce blocks"
    else:
        out["can_block"] = True
        out["why"] = f"{shown} is public ({reason}) and mode = enforce"
    return out


def for_status(cfg: dict[str, Any], root: str, now: int, override: str | None,
               rule_set: dict[str, Any]) -> dict[str, Any]:
    """``rule_set.block_tier`` in ``status --json``: :func:`assess` over the cache the hooks would
    serve (``rule_set`` is status's own section: which cache, and why none is servable)."""
    from yupana.state import cache

    body = None
    if rule_set["state"] != "off" and rule_set["miss"] is None:
        body, _ = cache.load_servable_json(rule_set["cache_path"], rule_set["endpoint"], rule_set["ttl_secs"], now,
                                           dataset=rule_set["dataset"], dialect=cfg["quipu"].get("dialect"))
    miss = rule_set["miss"]
    return assess(cfg, body, root, now, override=override, no_cache=miss["reason"] if miss else None)


def line(found: dict[str, Any]) -> str:
    """The one-line statement both commands print."""
    count = found["block_rules"]
    if found["can_block"]:
        return f"{count} block-tier text rule{'s' if count != 1 else ''} can block: {found['why']}"
    if not count:
        return f"no block-tier text rule can block: {found['why']}"
    return f"{count} block-tier text rule{'s' if count != 1 else ''} CANNOT block: {found['why']}"
