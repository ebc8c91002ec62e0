"""Facts extracted from real Rust files: symbols, containers, arity, uses, mods, macro bodies."""

from __future__ import annotations

import pytest

from tests.codegraph.conftest import DATA, REGISTRY
from yupana.codegraph import extract, scan

LIB = (DATA / "heck" / "src" / "lib.rs").read_bytes()
SNAKE = (DATA / "heck" / "src" / "snake.rs").read_bytes()


def _syms(facts) -> dict[str, list]:
    out: dict[str, list] = {}
    for s in facts.syms:
        out.setdefault(s[extract.NAME], []).append(s)
    return out


def test_items_kinds_arity_and_lines():
    facts = scan.file_facts(LIB)
    syms = _syms(facts)
    (transform,) = syms["transform"]
    assert transform[extract.KIND] == "fn" and transform[extract.ARITY] == 4 and transform[extract.LINE] == 75
    assert syms["lowercase"][0][extract.ARITY] == 2
    assert {s[extract.KIND] for s in syms["WordMode"]} == {"enum"}
    assert {s[extract.CONTAINER] for s in syms["Boundary"]} == {"WordMode"}  # a variant of the enum
    assert {s[extract.NAME] for s in facts.syms if s[extract.KIND] == "mod"} >= {"kebab", "snake", "title"}
    assert ("snake::AsSnakeCase", "AsSnakeCase", 57) in facts.uses
    assert ("snake::AsSnakeCase", "AsSnekCase", 57) in facts.uses
    assert {m[0] for m in facts.mods} == {"kebab", "lower_camel", "shouty_kebab", "shouty_snake", "snake", "title",
                                          "upper_camel"}


def test_methods_know_their_type_and_trait():
    syms = _syms(scan.file_facts(SNAKE))
    by_container = {(s[extract.CONTAINER], s[extract.TRAIT], s[extract.KIND]) for s in syms["to_snake_case"]}
    assert by_container == {("ToSnakeCase", None, "method"), ("str", "ToSnakeCase", "method")}
    (fmt,) = syms["fmt"]
    assert (fmt[extract.CONTAINER], fmt[extract.TRAIT]) == ("AsSnakeCase", "Display")


def test_references_are_attributed_to_the_enclosing_symbol():
    facts = scan.file_facts(SNAKE)
    syms = facts.syms
    fmt = next(i for i, s in enumerate(syms) if s[extract.NAME] == "fmt")
    refs_of_fmt = {(n, q) for n, q, i in facts.refs if i == fmt}
    assert ("transform", None) in refs_of_fmt and ("lowercase", None) in refs_of_fmt
    assert ("as_ref", ".") in refs_of_fmt


def test_macro_rules_bodies_are_maybe_names_and_bindings_are_locals():
    facts = scan.file_facts(SNAKE)
    assert "to_snake_case" in facts.maybe  # used inside the `t!` test macro body
    assert {"f", "s"} <= scan.file_facts(LIB).locals


def test_item_macros_are_parsed_again_as_items():
    mod = REGISTRY / "tokio-1.24.2" / "src" / "runtime" / "mod.rs"
    if not mod.exists():
        pytest.skip("tokio sources not installed (apt-get install librust-tokio-dev)")
    facts = scan.file_facts(mod.read_bytes())
    names = {s[extract.NAME] for s in facts.syms}
    assert {"builder", "handle", "blocking"} <= names  # declared inside cfg_rt! { … }
    assert ("self::builder::Builder", "Builder", 225) in facts.uses


def test_cfg_if_groups_are_items():
    lib = REGISTRY / "libc-0.2.139" / "src" / "unix" / "mod.rs"
    if not lib.exists():
        pytest.skip("libc sources not installed (apt-get install librust-libc-dev)")
    facts = scan.file_facts(lib.read_bytes())
    globs = {p for p, b, _ in facts.uses if b == "*"}
    assert any(p.endswith("linux_like") for p in globs), globs
