"""Where a finding's rule came from, and what made it fire — for ``yupana explain``. Cold path.

Nothing here decides anything: the hook already did, with its own code. This module only
annotates the findings it produced:

* **provenance** — a governed rule's IRI (``Finding.source``) and its cache entry, or, for
  local rules, tripwires and scopes, the config file (and ``[[…]]`` entry) that defines
  them: the highest-precedence layer whose table holds the key (environment, then
  ``--config`` / project / user file), else the built-in default;
* **matched** — the text, tokens, captures or glob that made it fire (for a glob, which of
  the entry's patterns matches the path or its symlink-resolved form).
"""

from __future__ import annotations

from typing import Any

import os

from yupana import globs

GUARD_CONSTRAINTS = {
    "apply_patch": "the patch (apply_patch) could not be read exactly",
    "projection": "no servable projection cache",
    "deadline": "deadline_ms ran out",
    "internal": "an internal error",
    "text-rules": "text rules left unevaluated by the deadline",
}


class Context:
    """What annotating a finding needs: the resolved snapshot, the served cache, the edits."""

    def __init__(self, snapshot: dict[str, Any] | None, cache: dict[str, Any] | None, cache_path: str | None, edits: list[Any]) -> None:
        self.snapshot = snapshot or {}
        self.cfg = self.snapshot.get("config") or {}
        self.cache = cache or {}
        self.cache_path = cache_path
        self.real = {e.rel: e.real_rel for e in edits or ()}
        self._tables: dict[str, dict[str, Any] | None] = {}

    # ── config origins ─────────────────────────────────────────────────────────────
    def origin(self, *keys: str) -> dict[str, Any]:
        """The layer that sets ``[yupana.<keys…>]``: env variable, config file, or the default."""
        if len(keys) >= 2:
            var = f"YUPANA_{keys[0].upper()}__{keys[1].upper()}"
            if os.environ.get(var):
                return {"layer": "env", "variable": var}
        for source in reversed(self.snapshot.get("sources") or ()):
            table = self._table(source.get("path"))
            node: Any = table
            for key in keys:
                node = node.get(key) if isinstance(node, dict) else None
            if node is not None:
                return {"layer": source.get("layer"), "path": source.get("path")}
        return {"layer": "default"}

    def _table(self, path: str | None) -> dict[str, Any]:
        if not path:
            return {}
        if path not in self._tables:  # already validated by the snapshot: plain TOML is enough here
            import tomllib

            try:
                with open(path, "rb") as fh:
                    table = tomllib.load(fh).get("yupana")
            except (OSError, tomllib.TOMLDecodeError):
                table = None
            self._tables[path] = table if isinstance(table, dict) else None
        return self._tables[path] or {}

    def local_entry(self, table: str, name: str) -> dict[str, Any]:
        """``[[yupana.policy.<table>]]`` entry ``name``: its position and the file that defines the list."""
        entries = (self.cfg.get("policy") or {}).get(table) or []
        index = next((i for i, e in enumerate(entries) if str(e.get("name") or f"{table}[{i}]") == name), None)
        out = {"kind": "local", "key": f"[[yupana.policy.{table}]]", "name": name, **self.origin("policy", table)}
        if index is not None:
            out["index"] = index
        return out

    def governed_entry(self, plane: str, iri: str | None) -> dict[str, Any] | None:
        for entry in self.cache.get(plane) or ():
            if entry.get("iri") == iri:
                found: dict[str, Any] = entry
                return found
        return None

    # ── findings ───────────────────────────────────────────────────────────────────
    def provenance(self, f: Any) -> dict[str, Any]:
        source = f.source or ""
        if f.id in GUARD_CONSTRAINTS:
            return {"kind": "guard", "what": GUARD_CONSTRAINTS[f.id]}
        if f.plane == "self_protection":  # the built-in protected set (yupana.self_protection)
            return {"kind": "guard", "what": f"one of the guard's own controls ({f.extra.get('protected')}), "
                    "protected at the lower of [yupana.policy] mode and self_protection",
                    **self.origin("policy", "self_protection")}
        if f.id.startswith(("scope-declared:", "blast:")):
            tenant = f.id.split(":", 1)[1]
            return {"kind": "local", "key": f"[yupana.policy.scopes.{tenant}]", **self.origin("policy", "scopes", tenant)}
        if f.id.startswith(("scope-observed:", "scope-derived:")) or f.id == "scope-unknown":
            return {"kind": "governed", "plane": "work_item_scopes", "cache": self.cache_path,
                    "rung": {"key": "[yupana.policy] work_item_scope", **self.origin("policy", "work_item_scope")}}
        if f.id == "verify":
            return {"kind": "local", "key": "[yupana.policy] verify", **self.origin("policy", "verify")}
        if f.plane == "tripwire" and source == "config":
            return self.local_entry("tripwires", f.id.split(":", 1)[1])
        if f.plane == "structural" and source == "config":
            return self.local_entry("rules", f.id)
        if f.plane == "disk":
            return {"kind": "governed", "plane": "disk_history", "key": f.id, "cache": self.cache_path}
        if source.startswith(("http://", "https://", "urn:")):
            return {"kind": "governed", "iri": source, "plane": f.plane, "cache": self.cache_path}
        return {"kind": "unknown", "source": source or None}

    def matched(self, f: Any) -> dict[str, Any] | None:
        extra = f.extra or {}
        if f.plane == "text" and "match" in extra:
            entry = self.governed_entry("text_rules", f.source) or {}
            return {"text": extra["match"], "pattern": entry.get("pattern"), "tier": extra.get("tier"),
                    "exemption": entry.get("exempt_path_regex"), "path": f.rel}
        if f.plane == "grounded" and extra.get("tokens"):
            return {"tokens": extra["tokens"]}
        if f.plane == "structural" and "captures" in extra:
            return {"captures": extra["captures"], "violations": extra.get("violations") or []}
        if f.plane == "tripwire":
            return self._tripwire(f)
        if f.id.startswith("scope-declared:"):
            return self._path_scope(f)
        if f.id.startswith("blast:"):
            scope = self._scope(f.id.split(":", 1)[1])
            return {k: extra.get(k) for k in ("symbols", "files", "tier", "unmeasured") if extra.get(k) is not None} | {
                "ceiling": {"max_impacted_symbols": scope.get("max_impacted_symbols"),
                            "max_impacted_files": scope.get("max_impacted_files")}}
        if f.plane == "scope" and extra.get("provenance"):
            return {k: extra[k] for k in ("provenance", "item", "parent", "reason") if extra.get(k) is not None}
        if f.plane in ("memory", "disk"):
            return {k: v for k, v in extra.items() if k not in ("error", "key")} or None
        return None

    def _names(self, rel: str | None) -> list[str]:
        real = self.real.get(rel or "")
        return [n for n in (rel, real) if n] if real != rel else [rel] if rel else []

    def _first_match(self, patterns: Any, rel: str | None) -> str | None:
        """The first of ``patterns`` matching the path or its symlink-resolved form."""
        for name in self._names(rel):
            hit = _first(patterns, name)
            if hit is not None:
                return hit
        return None

    def _tripwire(self, f: Any) -> dict[str, Any]:
        name = f.id.split(":", 1)[1]
        if f.source and f.source != "config":
            entry = self.governed_entry("tripwires", f.source) or {}
        else:
            entry = next((w for w in (self.cfg.get("policy") or {}).get("tripwires") or () if w.get("name") == name), {})
        out = {"path": f.rel, "glob": self._first_match(entry.get("paths"), f.rel), "effect": (f.extra or {}).get("effect")}
        if entry.get("rule"):
            out["rule"] = entry["rule"]
        return out

    def _scope(self, tenant: str) -> dict[str, Any]:
        return ((self.cfg.get("policy") or {}).get("scopes") or {}).get(tenant) or {}

    def _path_scope(self, f: Any) -> dict[str, Any]:
        scope = self._scope(f.id.split(":", 1)[1])
        names = self._names(f.rel)
        deny = self._first_match(scope.get("deny_paths"), f.rel)
        if deny is not None:
            return {"path": names, "deny_paths": deny}
        allow = scope.get("allow_paths") or []
        if not allow:
            return {"path": names, "allow_paths": "empty: any path is allowed"}
        admitted = {n: _first(allow, n) for n in names}
        return {"path": names, "allow_paths": allow, "admitted_by": admitted}


def _first(patterns: Any, name: str) -> str | None:
    for pattern in patterns or ():
        try:
            if globs.matches(globs.compile_glob(pattern), name):
                return str(pattern)
        except globs.GlobError:
            continue
    return None


def allowed_by(note: dict[str, Any], cache: dict[str, Any]) -> dict[str, Any]:
    """An allowed match of a text rule (``{rule, match, why, secret}``), with ``by``: whose
    property allowed it — ``"rule"`` (its own aegis:minEntropy, aegis:allowStopword or
    aegis:allowMatchRegex) or ``"selector <name>"`` for each linked selector whose shared
    allowlist allows the secret (docs/vocabulary.md "Precision")."""
    rule: dict[str, Any] = next((r for r in cache.get("text_rules") or () if note.get("rule") in (r.get("name"), r.get("iri"))), {})
    secret = str(note.get("secret") if note.get("secret") is not None else note.get("match") or "")
    why = str(note.get("why") or "")
    linked = set(rule.get("exemption_selectors") or ())
    sources = [("rule", rule.get("allow_match_regexes"), rule.get("allow_stopwords"))]
    sources += [(f"selector {s.get('name') or s.get('iri')}", s.get("allow_match_regexes"), s.get("stopwords"))
                for s in cache.get("exemption_selectors") or () if s.get("iri") in linked]
    if why.startswith("entropy"):
        by = ["rule"]
    elif why.startswith("stopword"):
        word = why.split("`")[1] if why.count("`") >= 2 else ""
        by = [who for who, _regexes, words in sources if word in {w.casefold() for w in words or ()}]
    else:
        by = [who for who, regexes, _words in sources if any(_finds(r, secret) for r in regexes or ())]
    return {**note, "by": by}


def _finds(pattern: str, text: str) -> bool:
    from yupana.regex import re2_binding

    try:
        return re2_binding.compile(pattern).search(text) is not None
    except Exception:  # noqa: BLE001 - a regex RE2 refuses allowed nothing (the hook reported it)
        return False
