"""Convert gitleaks' default rules into an aegis text-rule catalogue (issue 25 §2).

    .venv/bin/python benchmarks/gitleaks_catalogue.py [--check]

Reads benchmarks/data/gitleaks/gitleaks.toml (gitleaks' ``config/gitleaks.toml`` at commit
b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b, MIT licence: benchmarks/data/gitleaks/LICENSE: the
rules are data, taken as published) and writes benchmarks/data/gitleaks/catalogue/text-rules.ttl:
one ``aegis:TextRule`` per gitleaks rule, tier ``block``, with

* ``aegis:regex``: the rule's regex, its secret group (``secretGroup``, else the first capture
  group, as gitleaks takes the first non-empty one) named ``secret`` for ``aegis:secretGroup``;
* ``aegis:requiredKeyword``: its ``keywords``; ``aegis:minEntropy``: its ``entropy``;
* ``aegis:allowMatchRegex`` / ``aegis:allowStopword``: its allowlists' regexes on the secret
  and stopwords; the global allowlist as one shared ``aegis:Selector`` linked from every rule
  (its regexes, stopwords and path regexes).

Listed and skipped (printed, and in the file's header): rules RE2 cannot compile
(lookarounds, backreferences), rules without a regex, rules scoped to a path (aegis text
rules apply to every path), and allowlist entries aegis cannot say (``regexTarget`` line or
match, ``condition = "AND"``). ``--check`` only verifies that the committed catalogue is what
this script writes.
"""

from __future__ import annotations

import os
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "gitleaks")
SOURCE = os.path.join(DATA, "gitleaks.toml")
OUT = os.path.join(DATA, "catalogue", "text-rules.ttl")
COMMIT = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b"


def literal(text: str) -> str:
    """A Turtle string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'


def name_group(pattern: str, n: int) -> str | None:
    """``pattern`` with its ``n``-th capturing group (1-based) named ``secret``; None when it
    has fewer, or the group is already named."""
    seen = 0
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "^":
                i += 1
            if pattern[i + 1:i + 2] == "]":
                i += 1
        elif c == "(":
            named = pattern.startswith("(?P<", i) or pattern.startswith("(?<", i)
            if pattern[i + 1:i + 2] != "?" or named:
                seen += 1
                if seen == n:
                    return None if named else pattern[:i + 1] + "?P<secret>" + pattern[i + 1:]
        i += 1
    return None


def compiles(pattern: str) -> str | None:
    """None when RE2 compiles ``pattern``, else RE2's reason."""
    from yupana.regex import re2_binding

    try:
        re2_binding.compile(pattern)
    except Exception as exc:  # noqa: BLE001 - re2.error and friends
        return str(exc) or type(exc).__name__
    return None


def convert(doc: dict) -> tuple[str, list[str], int]:
    """(Turtle, what was skipped or dropped, rules written)."""
    skipped: list[str] = []
    out: list[str] = []
    glob = doc.get("allowlist") or {}
    sel = ["aegis:sel_gitleaks_global a aegis:Selector ;", '    aegis:name "gitleaks-global-allowlist" ;',
           '    aegis:evidenceSource "gitleaks\' global allowlist: generated, vendored and binary paths, '
           'placeholder values" ;']
    for key, prop in (("paths", "aegis:exemptPathRegex"), ("regexes", "aegis:allowMatchRegex"),
                      ("stopwords", "aegis:allowStopword")):
        values = [v for v in glob.get(key) or () if compiles(v) is None or key == "stopwords"]
        skipped += [f"global allowlist {key[:-1]} {v!r}: RE2 refuses it" for v in glob.get(key) or ()
                    if key != "stopwords" and v not in values]
        if values:
            sel.append(f"    {prop} " + " , ".join(literal(v) for v in values) + " ;")
    sel[-1] = sel[-1][:-2] + " ."
    out += sel + [""]
    written = 0
    for rule in doc["rules"]:
        rid = rule["id"]
        regex = rule.get("regex")
        if not regex:
            skipped.append(f"rule {rid}: no regex (a path-only rule)")
            continue
        if rule.get("path"):
            skipped.append(f"rule {rid}: scoped to paths {rule['path']!r} (an aegis text rule applies to every path)")
            continue
        why = compiles(regex)
        if why is not None:
            skipped.append(f"rule {rid}: RE2 cannot compile its regex ({why})")
            continue
        group = rule.get("secretGroup") or 1
        named = name_group(regex, group)
        pattern = named if named is not None and compiles(named) is None else regex
        subject = "aegis:gitleaks_" + rid.replace("-", "_").replace(".", "_")
        lines = [f"{subject} a aegis:TextRule ;", f"    rdfs:label {literal(rid)} ;",
                 f"    aegis:regex {literal(pattern)} ;", '    aegis:enforcementTier "block" ;',
                 '    aegis:identifierClass "secret" ;', f"    rdfs:comment {literal(rule['description'])} ;"]
        if named is not None and pattern is named:
            lines.append('    aegis:secretGroup "secret" ;')
        if rule.get("entropy"):
            lines.append(f'    aegis:minEntropy "{float(rule["entropy"])}"^^xsd:decimal ;')
        if rule.get("keywords"):
            lines.append("    aegis:requiredKeyword " + " , ".join(literal(k) for k in rule["keywords"]) + " ;")
        allow_regexes: list[str] = []
        stopwords: list[str] = []
        for allow in rule.get("allowlists") or ():
            if allow.get("condition", "OR").upper() == "AND" or allow.get("regexTarget") in ("line", "match"):
                skipped.append(f"rule {rid}: an allowlist aegis cannot say (condition {allow.get('condition', 'OR')}, "
                               f"regexTarget {allow.get('regexTarget', 'secret')}) dropped")
                continue
            allow_regexes += [r for r in allow.get("regexes") or () if compiles(r) is None]
            stopwords += list(allow.get("stopwords") or ())
            if allow.get("paths"):
                lines.append("    aegis:exemptPathRegex " + " , ".join(literal(p) for p in allow["paths"]) + " ;")
        if allow_regexes:
            lines.append("    aegis:allowMatchRegex " + " , ".join(literal(r) for r in allow_regexes) + " ;")
        if stopwords:
            lines.append("    aegis:allowStopword " + " , ".join(literal(s) for s in stopwords) + " ;")
        lines.append("    aegis:exemptionSelector aegis:sel_gitleaks_global .")
        out += lines + [""]
        written += 1
    return "\n".join(out), skipped, written


def render() -> tuple[str, list[str], int]:
    with open(SOURCE, "rb") as fh:
        doc = tomllib.load(fh)
    body, skipped, written = convert(doc)
    head = [f"# gitleaks' default rules (config/gitleaks.toml at {COMMIT}, MIT licence: ../LICENSE),",
            "# converted by benchmarks/gitleaks_catalogue.py into aegis text rules. Do not edit by hand.",
            f"# {written} of {len(doc['rules'])} rules written; skipped or dropped ({len(skipped)}):"]
    head += [f"#   {s}" for s in skipped]
    head += ["", "@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .",
             "@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .",
             "@prefix aegis: <http://aegis.gastown.local/ontology/> .", ""]
    return "\n".join(head) + "\n" + body + "\n", skipped, written


def main(argv: list[str]) -> int:
    sys.path.insert(0, os.path.dirname(HERE))
    text, skipped, written = render()
    if "--check" in argv:
        with open(OUT, encoding="utf-8") as fh:
            same = fh.read() == text
        print("up to date" if same else f"{OUT} differs from what the script writes: run it again")
        return 0 if same else 1
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"{written} rules written to {os.path.relpath(OUT)}; {len(skipped)} skipped or dropped:")
    for s in skipped:
        print(f"  {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
