"""Small real catalogues (Turtle) and config files for the refresh tests.

The catalogues use the vocabulary of docs/vocabulary.md and are projected through the real
embedded store, decoder and SHACL gate; variants break exactly one thing (a tier the
decoder refuses, a label the shapes require, an overclaimed hosting layer).
"""

from __future__ import annotations

from pathlib import Path

PREFIXES = """@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix aegis: <http://aegis.gastown.local/ontology/> .

aegis:InternalIdentifierPattern rdfs:subClassOf aegis:TextRule .
aegis:Policy rdfs:subClassOf aegis:Directive .
"""


def text_rule(i: int, prefix: str = "ACME", *, tier: str = "block", label: bool = True) -> str:
    lines = [f"aegis:rule_{prefix.lower()}_{i} a aegis:InternalIdentifierPattern ;"]
    if label:
        lines.append(f'    rdfs:label "no {prefix} ticket {i}" ;')
    lines += [
        f'    aegis:regex "\\\\b{prefix}{i}-[0-9]+\\\\b" ;',
        f'    aegis:enforcementTier "{tier}" ;',
        '    aegis:identifierClass "ticket" ;',
        f'    rdfs:comment "Ticket ids of queue {prefix}{i} stay in the tracker." .',
    ]
    return "\n".join(lines) + "\n"


def overclaiming_policy() -> str:
    """A structural policy that claims tool-layer hosting (a hosting overclaim)."""
    return """
aegis:sel_rust_comments a aegis:Selector ;
    aegis:name "rust-line-comments" ;
    aegis:evidenceSource "(line_comment) @c" ;
    aegis:language "rust" ;
    aegis:tier "tree-sitter" .

aegis:pred_no_ticket a aegis:Predicate ;
    aegis:name "no-ticket-in-comment" ;
    aegis:evidenceSource "\\\\bACME-[0-9]+\\\\b" ;
    aegis:matchType "must-not-match" ;
    aegis:tier "tree-sitter" .

aegis:policy_no_ticket a aegis:Policy ;
    rdfs:label "no-ticket-in-comment" ;
    aegis:targets "CodeModule" ;
    aegis:claim "no rust comment cites a ticket" ;
    aegis:boundary "action" ;
    aegis:selector aegis:sel_rust_comments ;
    aegis:predicate aegis:pred_no_ticket ;
    aegis:effect "deny" ;
    aegis:constraintClass "hard" ;
    aegis:verificationPoint "PAG" ;
    aegis:hostedAtLayer "tool" .
"""


def write_catalogue(directory: Path, n: int = 3, *, prefix: str = "ACME", tier: str = "block",
                    label: bool = True, extra: str = "") -> Path:
    """A catalogue of ``n`` text rules in ``directory/catalogue.ttl``; returns the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    body = PREFIXES + "\n".join(text_rule(i, prefix, tier=tier, label=label) for i in range(n)) + extra
    (directory / "catalogue.ttl").write_text(body)
    return directory


def configure(root: Path, endpoint: str, **quipu) -> Path:
    """``root/.bobbin/config.toml`` with ``[yupana.quipu] endpoint`` and the given keys."""
    lines = ["[yupana.quipu]", "enabled = true", f"endpoint = {endpoint!r}".replace("'", '"')]
    for key, value in quipu.items():
        lines.append(f"{key} = {value!r}".replace("'", '"') if isinstance(value, str) else f"{key} = {value}")
    path = root / ".bobbin" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
