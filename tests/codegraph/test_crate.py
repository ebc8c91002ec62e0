"""Crates: the manifest reader (no tomllib on the hot path) and the file walk."""

from __future__ import annotations

import pytest

from tests.codegraph.conftest import DATA, REGISTRY
from yupana.codegraph import crate


def test_heck_manifest():
    name, deps, roots = crate.parse_manifest((DATA / "heck" / "Cargo.toml").read_text())
    assert (name, deps, roots) == ("heck", {"unicode_segmentation"}, set())
    assert crate.manifest_edition((DATA / "heck" / "Cargo.toml").read_text()) == "2018"


def test_real_manifest_with_target_tables_and_dev_dependencies():
    manifest = REGISTRY / "tokio-1.24.2" / "Cargo.toml"
    if not manifest.exists():
        pytest.skip("tokio sources not installed")
    name, deps, _ = crate.parse_manifest(manifest.read_text())
    assert name == "tokio"
    assert {"bytes", "mio", "libc", "tokio_test", "loom", "signal_hook_registry", "autocfg"} <= deps


def test_manifest_forms():
    text = """
[package]
name = "my-crate"
edition = "2021"  # comment
keywords = [
  "a", "b",
]
[lib]
path = "lib/root.rs"
[dependencies]
serde = { version = "1", features = [
    "derive",
] }
anyhow.workspace = true
"quoted-dep" = "1"
[target.'cfg(unix)'.dependencies]
nix = "0.26"
[dev-dependencies.pretty_assertions]
version = "1"
[features]
default = ["serde"]
"""
    name, deps, roots = crate.parse_manifest(text)
    assert name == "my_crate" and roots == {"lib/root.rs"}
    assert deps == {"serde", "anyhow", "quoted_dep", "nix", "pretty_assertions"}
    assert crate.manifest_edition(text) == "2021"


def test_walk_skips_target_hidden_and_nested_crates(tmp_path):
    (tmp_path / "src" / "a").mkdir(parents=True)
    (tmp_path / "src" / "a" / "b.rs").write_text("")
    (tmp_path / "src" / "lib.rs").write_text("")
    (tmp_path / "target" / "debug").mkdir(parents=True)
    (tmp_path / "target" / "debug" / "gen.rs").write_text("")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.rs").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Cargo.toml").write_text("[package]\nname='sub'\n")
    (tmp_path / "sub" / "lib.rs").write_text("")
    files, dirs, complete = crate.walk(str(tmp_path))
    assert sorted(files) == ["src/a/b.rs", "src/lib.rs"] and complete
    assert set(dirs) == {"", "src", "src/a"}


def test_find_the_nearest_package(heck):
    (heck / "src" / "x.rs").write_text("")
    c = crate.find(str(heck / "src" / "x.rs"), str(heck))
    assert (c.dir, c.rel, c.name, c.has_manifest) == (str(heck), "", "heck", True)
    loose = heck / "scripts"
    loose.mkdir()
    (heck / "Cargo.toml").unlink()
    c = crate.find(str(loose / "t.rs"), str(heck))
    assert (c.dir, c.has_manifest, c.deps) == (str(heck), False, set())
