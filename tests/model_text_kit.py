"""What the model reads, and what it must never read (issue 22 §3).

:func:`model_texts` takes the stdout of a hook (the JSON a client reads) and returns the
texts that reach the model: the deny reason (``permissionDecisionReason``) and
``additionalContext`` — on both clients; Codex's ``systemMessage`` reaches nobody, Claude
Code's the user. :func:`forbidden` names every operator diagnostic in a text: config keys
and tables, control files, the state directory, endpoints, flags and variables that switch
the guard, advice to change a mode, and words that tell the model the guard is down. A test
of any hook text asserts ``forbidden(text) == []``; new texts (self-protection's denies
included) run through the same function.
"""

from __future__ import annotations

import json
import re

from yupana.config import schema as config_schema


def _keys(spec: dict, out: set[str]) -> set[str]:
    for name, sub in (spec.get("fields") or {}).items():
        out.add(config_schema.key_of(name, sub) if hasattr(config_schema, "key_of") else name)
        _keys(sub, out)
    if spec.get("item"):
        _keys(spec["item"], out)
    return out


#: Every key of the settings schema (``deny_paths``, ``mode``, ``advise_audience``, ...).
CONFIG_KEYS = frozenset(_keys(config_schema.SETTINGS, set()))
# A key with an underscore is unmistakable anywhere; a plain word only as `key = …` or quoted as code.
_UNDERSCORED = sorted(k for k in CONFIG_KEYS if "_" in k)
_PLAIN = sorted(k for k in CONFIG_KEYS if "_" not in k)

PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("a config table", re.compile(r"\[\[?\s*yupana\b")),
    ("a config key", re.compile(r"\b(?:" + "|".join(map(re.escape, _UNDERSCORED)) + r")\b")),
    ("a config key", re.compile(r"(?:`(?:" + "|".join(map(re.escape, _PLAIN)) + r")`)|\b(?:"
                                + "|".join(map(re.escape, _PLAIN)) + r")\s*=")),
    ("a control file", re.compile(r"\.bobbin\b|config\.toml|/etc/bobbin|settings(?:\.local)?\.json|hooks\.json"
                                  r"|\.git/(?:hooks|config)\b|hooksPath|\.codex\b|\.claude\b", re.I)),
    ("the state directory", re.compile(r"\.local/state|projection\.(?:json|hot|memo)|metrics\.jsonl|refresh-state"
                                       r"|exposure\.json|denials\.jsonl|throttles\.jsonl|/stores/")),
    ("an endpoint", re.compile(r"\b(?:https?|sparql)://|\bfile:(?=\S)|127\.0\.0\.1|\[::1\]")),
    ("an endpoint", re.compile(r"\bendpoints?\b|\bport\b|\blocalhost\b", re.I)),
    ("a flag", re.compile(r"--no-verify|--config\b|--tenant\b|--offline|\bgit\s+-c\b")),
    ("a variable", re.compile(r"\b(?:YUPANA|BOBBIN|CODEX|CLAUDE)_[A-Z_]+|\$HOME|\$XDG")),
    ("an operator command", re.compile(r"`yupana\s|\byupana\s+(?:project|config|install|uninstall|status|refresh)\b")),
    ("mode advice", re.compile(r"\bmode\b", re.I)),
    ("the guard is down", re.compile(r"unguarded|not enforced|fail(?:ed|ing|s)?[- ]open|disarm|switch(?:ed)? off",
                                     re.I)),
]


def forbidden(text: str, named: tuple[str, ...] = ()) -> list[str]:
    """Each operator diagnostic in ``text``, as ``"<what>: <the words>"`` ([] when clean).

    ``named``: what the tool call itself named (the path it edits, the command it runs). Saying
    those back ("edit to .bobbin/config.toml is refused") teaches the model nothing it did not
    write, so they are taken out of the text before it is checked."""
    for words in sorted(named, key=len, reverse=True):
        if words:
            text = text.replace(words, "<named>")
    found = []
    for what, pattern in PATTERNS:
        for m in pattern.finditer(text):
            found.append(f"{what}: {m.group(0)!r}")
    return found


def model_texts(stdout: str) -> list[str]:
    """The texts of a hook's stdout that reach the model (deny reason, additionalContext)."""
    if not stdout:
        return []
    out = json.loads(stdout)
    specific = out.get("hookSpecificOutput") or {}
    return [t for t in (specific.get("permissionDecisionReason"), specific.get("additionalContext")) if t]


def assert_clean(label: str, texts: list[str], named: tuple[str, ...] = ()) -> None:
    """Fail naming the scenario, the text and every forbidden part in it (``named``: see :func:`forbidden`)."""
    bad = [(t, forbidden(t, named)) for t in texts if forbidden(t, named)]
    assert not bad, f"{label}: model-facing text carries operator diagnostics:\n" + "\n".join(
        f"  {hits}\n    in: {t!r}" for t, hits in bad)
