"""An incremental refresh gives exactly what a full refresh gives.

A catalogue of text rules (two subclasses, shared exemption selectors), structural and
unprojected policies (SHACL info results) is edited at random, step by step — rules
relabelled, retyped, added, removed, linked and unlinked, selectors and the class chain
changed, rules and selectors broken and mended, names made to collide, blank nodes
added — and after every step the same store is refreshed twice through ``refresh_now``:
once keeping the memo of the last refresh (incremental), once without it (full). Both
must agree on the outcome, the error (kind and text), the cache written and the SHACL
results; and the incremental one must have kept rules on the steps that allow it.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from catalogue_kit import configure

from yupana.projection import memo
from yupana.workers import refresher

from .helpers import OTHERS, PREFIXES, STRUCTURAL

OTHER_NS = "http://other.example/"


@dataclass
class Catalogue:
    """A catalogue as data, rendered to Turtle; every edit keeps it loadable."""

    rules: dict[int, dict] = field(default_factory=dict)
    selectors: dict[str, list[str]] = field(default_factory=dict)
    deep_class: bool = True  # aegis:DeepPattern rdfs:subClassOf aegis:InternalIdentifierPattern
    effect: str = "deny"
    broken: list[str] = field(default_factory=list)  # Turtle added for one step
    next_id: int = 0

    def add_rule(self, rng: random.Random) -> None:
        i = self.next_id
        self.next_id += 1
        self.rules[i] = {"cls": rng.choice(["InternalIdentifierPattern", "DeepPattern", "TextRule"]),
                         "labels": [f"rule {i}"], "regex": f"\\\\bT{i}-[0-9]+\\\\b", "tier": rng.choice(["block", "warn"]),
                         "comments": [f"why {i}"] if rng.random() < 0.7 else [],
                         "exempt": [f"^docs/{i % 3}/"] if rng.random() < 0.4 else [],
                         "links": sorted(rng.sample(sorted(self.selectors), k=min(len(self.selectors), rng.choice([0, 0, 1, 2]))))}

    def turtle(self) -> str:
        lines = [PREFIXES, STRUCTURAL.replace("{extra}", f'; aegis:effect "{self.effect}"'), OTHERS,
                 "aegis:InternalIdentifierPattern rdfs:subClassOf aegis:TextRule ."]
        if self.deep_class:
            lines.append("aegis:DeepPattern rdfs:subClassOf aegis:InternalIdentifierPattern .")
        for name, regexes in sorted(self.selectors.items()):
            shown = " , ".join(json.dumps(r) for r in regexes)
            lines.append(f'aegis:{name} a aegis:Selector ; aegis:name "{name}" ; aegis:evidenceSource "paths" ; '
                         f"aegis:exemptPathRegex {shown} .")
        for i, rule in sorted(self.rules.items()):
            parts = [f"a aegis:{rule['cls']}", f"aegis:regex {json.dumps(rule['regex'])}",
                     f'aegis:enforcementTier "{rule["tier"]}"', "aegis:identifierClass \"ticket\""]
            parts += [f"rdfs:label {json.dumps(label)}" for label in rule["labels"]]
            parts += [f"rdfs:comment {json.dumps(c)}" for c in rule["comments"]]
            parts += [f"aegis:exemptPathRegex {json.dumps(e)}" for e in rule["exempt"]]
            parts += [f"aegis:exemptionSelector aegis:{s}" for s in rule["links"]]
            lines.append(f"aegis:rule_{i} " + " ;\n    ".join(parts) + " .")
        return "\n".join(lines + self.broken) + "\n"


def edit(cat: Catalogue, rng: random.Random) -> str:
    """One random edit; returns what it did (for the failure message)."""
    cat.broken = []
    rule_ids = sorted(cat.rules)
    pick = rng.choice(rule_ids)
    kind = rng.choice(["relabel", "regex", "tier", "add", "remove", "link", "unlink", "selector", "selector_add",
                       "retype", "class_chain", "policy", "nothing", "nothing", "break_rule", "break_selector",
                       "blank", "collide", "new_selector"])
    rule = cat.rules[pick]
    if kind == "relabel":
        rule["labels"] = rule["labels"] + [f"also {rng.randrange(100)}"]
    elif kind == "regex":
        rule["regex"] = f"\\\\bR{rng.randrange(10**6)}\\\\b"
    elif kind == "tier":
        rule["tier"] = "warn" if rule["tier"] == "block" else "block"
    elif kind == "add":
        cat.add_rule(rng)
    elif kind == "remove" and len(cat.rules) > 5:
        del cat.rules[pick]
    elif kind == "link":
        rule["links"] = sorted(set(rule["links"]) | {rng.choice(sorted(cat.selectors))})
    elif kind == "unlink":
        rule["links"] = rule["links"][1:]
    elif kind == "selector":
        name = rng.choice(sorted(cat.selectors))
        cat.selectors[name] = [f"^gen/{rng.randrange(1000)}/"]
    elif kind == "selector_add":
        name = rng.choice(sorted(cat.selectors))
        cat.selectors[name] = sorted(set(cat.selectors[name]) | {f"^more/{rng.randrange(1000)}/"})
    elif kind == "new_selector":
        cat.selectors[f"sel_{rng.randrange(10**6)}"] = ["^fresh/"]
    elif kind == "retype":
        rule["cls"] = rng.choice(["InternalIdentifierPattern", "DeepPattern", "TextRule"])
    elif kind == "class_chain":
        cat.deep_class = not cat.deep_class
    elif kind == "policy":
        cat.effect = "warn" if cat.effect == "deny" else "deny"
    elif kind == "break_rule":
        cat.broken.append(f'aegis:rule_{pick} aegis:enforcementTier "never" .')
    elif kind == "break_selector":
        cat.broken.append(f'aegis:{rng.choice(sorted(cat.selectors))} aegis:exemptPathRegex "(" .')
    elif kind == "blank":
        cat.broken.append(f"aegis:rule_{pick} rdfs:comment [ rdfs:label \"x\" ] .")
    elif kind == "collide":
        cat.broken.append(f'<{OTHER_NS}rule_{pick}> a aegis:TextRule ; aegis:regex "x" ; '
                          f'aegis:enforcementTier "warn" ; rdfs:label "clash" .')
    return f"{kind} rule_{pick}"


@pytest.fixture
def two_caches(tmp_path, env, monkeypatch):
    for key in [k for k in os.environ if k.startswith(("YUPANA_", "SHANTY_", "BOBBIN_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(env.home))
    monkeypatch.setenv("XDG_STATE_HOME", str(env.state))
    root = tmp_path / "project"
    (root / "cat").mkdir(parents=True)
    configure(root, "file:cat", refresh_deadline_secs=120)
    incremental, full = tmp_path / "incremental" / "projection.json", tmp_path / "full" / "projection.json"

    def refresh(path: Path, keep_memo: bool):
        monkeypatch.setenv("YUPANA_PROJECTION_CACHE_PATH", str(path))
        if not keep_memo:
            memo.discard(memo.path_for(str(path)))
        return refresher.refresh_now(str(root))

    return root, incremental, full, refresh


def blank(text: str | None) -> str | None:
    """``text`` with blank-node labels made alike (a store labels them anew on every load)."""
    return re.sub(r"_:[0-9A-Za-z]+", "_:b", text) if text else text


def cache_body(path: Path) -> dict:
    body = json.loads(path.read_text())
    body.pop("written_at")
    return body


def results(outcome) -> list:
    return [r.as_dict() for r in outcome.gate.results] if outcome.gate is not None else None


@pytest.mark.parametrize("seed", [1, 2])
def test_incremental_refresh_equals_full_refresh_on_random_edits(two_caches, seed):
    root, incremental, full, refresh = two_caches
    rng = random.Random(seed)
    cat = Catalogue(selectors={"sel_fixtures": ["^tests/fixtures/"], "sel_vendor": ["^vendor/", "^third_party/"]})
    for _ in range(30):
        cat.add_rule(rng)
    kept_steps = 0
    history = []
    for step in range(24):
        history.append(edit(cat, rng) if step else "first")
        (root / "cat" / "catalogue.ttl").write_text(cat.turtle())
        a = refresh(incremental, keep_memo=True)
        b = refresh(full, keep_memo=False)
        where = f"after {history}"
        assert (a.status, a.error_kind, blank(a.error)) == (b.status, b.error_kind, blank(b.error)), where
        assert results(a) == results(b), where
        if a.ok:
            assert cache_body(incremental) == cache_body(full), where
            assert a.incremental["rules_kept"] + a.incremental["rules_read"] == a.counts["text_rules"]
            kept_steps += a.incremental["rules_kept"] > 0
        assert b.incremental is None or b.incremental["rules_kept"] == 0
    assert kept_steps >= 8  # most successful steps kept most rules


def test_a_shapes_change_validates_everything_again(two_caches, tmp_path, monkeypatch):
    root, incremental, _, _refresh = two_caches
    rng = random.Random(7)
    cat = Catalogue(selectors={"sel_fixtures": ["^tests/fixtures/"]})
    for _ in range(10):
        cat.add_rule(rng)
    (root / "cat" / "catalogue.ttl").write_text(cat.turtle())
    shapes = tmp_path / "shapes"
    shutil.copytree(Path(refresher.__file__).parents[2] / "shapes", shapes)
    monkeypatch.setenv("YUPANA_PROJECTION_CACHE_PATH", str(incremental))
    first = refresher.refresh_now(str(root), shapes_dir=str(shapes))
    again = refresher.refresh_now(str(root), shapes_dir=str(shapes))
    assert first.ok and again.ok and again.incremental["rules_kept"] >= 9
    with open(shapes / "text-rules.ttl", "a") as fh:
        fh.write("\n# an edit\n")
    changed = refresher.refresh_now(str(root), shapes_dir=str(shapes))
    assert changed.ok and changed.incremental == {"rules_kept": 0, "rules_read": 10,
                                                   "full_reason": "the memo was written for another shapes"}


@pytest.mark.parametrize("damage", ["garbage", "empty", "directory"])
def test_an_unreadable_memo_means_a_full_refresh(two_caches, damage):
    root, incremental, _, refresh = two_caches
    rng = random.Random(3)
    cat = Catalogue(selectors={"sel_fixtures": ["^tests/fixtures/"]})
    for _ in range(6):
        cat.add_rule(rng)
    (root / "cat" / "catalogue.ttl").write_text(cat.turtle())
    assert refresh(incremental, keep_memo=True).ok
    written = cache_body(incremental)
    path = Path(memo.path_for(str(incremental)))
    if damage == "directory":
        path.unlink()
        path.mkdir()
    else:
        path.write_bytes(b"not marshal at all" if damage == "garbage" else b"")
    outcome = refresh(incremental, keep_memo=True)
    assert outcome.ok and outcome.incremental["rules_kept"] == 0 and outcome.incremental["full_reason"]
    assert cache_body(incremental) == written


LEGACY_WARNING = """
aegis:LegacySelectorNameShape a sh:NodeShape ;
    sh:target [
        a sh:SPARQLTarget ;
        sh:prefixes aegis: ;
        sh:select \"\"\"
            SELECT DISTINCT ?this WHERE {
                ?rule a/rdfs:subClassOf* aegis:TextRule ; aegis:exemptionSelector ?this .
            }
        \"\"\" ;
    ] ;
    sh:property [
        sh:path aegis:name ;
        sh:pattern "^(?!legacy)" ;
        sh:severity sh:Warning ;
        sh:message "a legacy selector" ;
    ] .
"""


def test_a_selector_only_kept_rules_link_is_still_validated(two_caches, tmp_path, monkeypatch):
    # The warning targets "a selector some text rule links": with every rule kept, the
    # gate still needs one linking rule beside the selector to find it.
    root, incremental, full, _ = two_caches
    shapes = tmp_path / "shapes"
    shutil.copytree(Path(refresher.__file__).parents[2] / "shapes", shapes)
    with open(shapes / "exemption-selectors.ttl", "a") as fh:
        fh.write(LEGACY_WARNING)
    rng = random.Random(11)
    cat = Catalogue(selectors={"legacy": ["^old/"], "sel_fixtures": ["^tests/fixtures/"]})
    for _ in range(8):
        cat.add_rule(rng)
    cat.rules[0]["links"] = ["legacy"]
    (root / "cat" / "catalogue.ttl").write_text(cat.turtle())
    outcomes = []
    for path, keep in ((incremental, True), (incremental, True), (full, False)):
        monkeypatch.setenv("YUPANA_PROJECTION_CACHE_PATH", str(path))
        if not keep:
            memo.discard(memo.path_for(str(path)))
        outcomes.append(refresher.refresh_now(str(root), shapes_dir=str(shapes)))
    first, again, whole = outcomes
    assert again.ok and again.incremental["rules_kept"] >= 6  # all but one linking rule per selector
    warned = [r for r in again.gate.results if r.message == "a legacy selector"]
    assert [r.focus for r in warned] == ["http://aegis.gastown.local/ontology/legacy"]
    assert results(again) == results(whole) == results(first)


def test_against_a_real_oxigraph_server_an_update_is_read_and_the_rest_kept(two_caches, tmp_path, oxigraph_server,
                                                                             quipu_server):
    # Digests over HTTP, reads proven complete by the digest rows' counts (a SPARQL 1.1 store
    # may cap silently), and a SPARQL update between refreshes; then the quipu dialect.
    import urllib.parse
    import urllib.request

    root, incremental, full, refresh = two_caches
    rng = random.Random(5)
    cat = Catalogue(selectors={"sel_fixtures": ["^tests/fixtures/"], "sel_vendor": ["^vendor/"]})
    for _ in range(40):
        cat.add_rule(rng)
    ttl = tmp_path / "oxigraph.ttl"
    ttl.write_text(cat.turtle())
    url = oxigraph_server(ttl, fresh=True)
    configure(root, url, refresh_deadline_secs=120)
    first = refresh(incremental, keep_memo=True)
    assert first.ok and first.incremental["full_reason"] == "no memo of a prior refresh", first.reason()
    again, steady = refresh(incremental, keep_memo=True), refresh(incremental, keep_memo=True)
    # The first refresh gated the rules chunk by chunk as it read them, all but the first rule
    # linking each selector: what is left to validate since is those very triples.
    assert again.incremental["rules_kept"] >= 38 and again.gate.chunks == 0
    assert steady.incremental == again.incremental and steady.gate.chunks == 0  # the same triples: not validated again
    assert results(steady) == results(again) == results(first)
    update = ('PREFIX aegis: <http://aegis.gastown.local/ontology/> '
              'DELETE { aegis:rule_3 aegis:enforcementTier ?t } INSERT { aegis:rule_3 aegis:enforcementTier "warn" , "block" } '
              'WHERE { aegis:rule_3 aegis:enforcementTier ?t }')
    request = urllib.request.Request(url.rsplit("/query", 1)[0] + "/update",
                                     data=urllib.parse.urlencode({"update": update}).encode())
    urllib.request.urlopen(request, timeout=30).read()
    broken = refresh(incremental, keep_memo=True)
    assert broken.error_kind == "projection" and "rule_3: aegis:enforcementTier: has 2 values" in broken.error
    fixed = ('PREFIX aegis: <http://aegis.gastown.local/ontology/> DELETE DATA { aegis:rule_3 aegis:enforcementTier "block" }')
    request = urllib.request.Request(url.rsplit("/query", 1)[0] + "/update",
                                     data=urllib.parse.urlencode({"update": fixed}).encode())
    urllib.request.urlopen(request, timeout=30).read()
    mended = refresh(incremental, keep_memo=True)
    whole = refresh(full, keep_memo=False)
    assert mended.ok and mended.incremental["rules_read"] <= 3 and whole.incremental["rules_kept"] == 0
    assert cache_body(incremental) == cache_body(full) and results(mended) == results(whole)
    assert next(r for r in cache_body(incremental)["text_rules"] if r["name"] == "rule_3")["tier"] == "warn"
    server = quipu_server(ttl)
    configure(root, server.url, dialect="quipu", refresh_deadline_secs=120)
    quipu_first, quipu_again = refresh(incremental, keep_memo=True), refresh(incremental, keep_memo=True)
    assert quipu_first.ok and quipu_again.ok and quipu_again.incremental["rules_kept"] >= 38


def test_stock_virtuoso_digests_and_keeps_unchanged_rules(yupana, env, tmp_path, virtuoso_server):
    # Virtuoso answers SHA256/GROUP_CONCAT in a stable order: a second refresh keeps every rule
    # but the one linking the selector, and writes what the first wrote.
    from tests.projection.test_store_limits import loaded, project_root, rules_with_exemptions

    server = virtuoso_server()
    graph = loaded(server, tmp_path, "incremental", rules_with_exemptions(50))
    root = project_root(tmp_path, server.url, default_graph=graph)
    first = json.loads(yupana("project", "--json", cwd=root, timeout=180).stdout)
    written = cache_body(env.cache_path)
    second = json.loads(yupana("project", "--json", cwd=root, timeout=180).stdout)
    assert first["status"] == second["status"] == "refreshed" and second["warnings"] == []
    assert second["incremental"] == {"rules_kept": 49, "rules_read": 1, "full_reason": None}
    assert cache_body(env.cache_path) == written
