"""yupana.project_root: the walk a hook makes to find the project governing a path."""

from __future__ import annotations

import os

from yupana import project_root
from yupana.project_root import CWD, FILE, NONE, REAL


def _project(path) -> None:
    (path / ".bobbin").mkdir(parents=True)
    (path / ".bobbin" / "config.toml").write_text("")


def test_the_outermost_config_above_the_file_is_the_root_and_those_below_are_nested_layers(tmp_path):
    _project(tmp_path / "repo")
    _project(tmp_path / "repo" / "svc")
    _project(tmp_path / "repo" / "svc" / "not")
    new = str(tmp_path / "repo" / "svc" / "not" / "yet" / "there.rs")
    found = project_root.for_file(new, str(tmp_path))
    assert (found.root, found.found) == (str(tmp_path / "repo"), FILE)
    assert found.nested == (str(tmp_path / "repo" / "svc"), str(tmp_path / "repo" / "svc" / "not"))
    found = project_root.for_file(str(tmp_path / "repo" / "lib.rs"), str(tmp_path / "repo" / "svc"))
    assert (found.root, found.found, found.nested) == (str(tmp_path / "repo"), FILE, ())


def test_a_fifo_or_a_dangling_link_named_config_toml_still_marks_a_project(tmp_path):
    (tmp_path / "a" / ".bobbin").mkdir(parents=True)
    os.mkfifo(tmp_path / "a" / ".bobbin" / "config.toml")
    (tmp_path / "b" / ".bobbin").mkdir(parents=True)
    (tmp_path / "b" / ".bobbin" / "config.toml").symlink_to(tmp_path / "nowhere")
    assert project_root.nearest(str(tmp_path / "a" / "src")) == str(tmp_path / "a")
    assert project_root.nearest(str(tmp_path / "b")) == str(tmp_path / "b")


def test_a_file_reached_through_a_symlink_is_governed_by_its_real_paths_project(tmp_path):
    _project(tmp_path / "repo")
    (tmp_path / "repo" / "src").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "s").symlink_to(tmp_path / "repo" / "src")
    found = project_root.for_file(str(tmp_path / "elsewhere" / "s" / "config.rs"), str(tmp_path / "elsewhere"))
    assert (found.root, found.found) == (str(tmp_path / "repo"), REAL)


def test_a_directory_named_config_toml_is_not_a_project(tmp_path):
    (tmp_path / "repo" / ".bobbin" / "config.toml").mkdir(parents=True)
    assert project_root.nearest(str(tmp_path / "repo" / "src")) is None


def test_nothing_above_the_file_falls_back_to_the_cwd_then_to_the_git_top(tmp_path):
    _project(tmp_path / "governed")
    lone = str(tmp_path / "lone" / "src" / "a.rs")
    found = project_root.for_file(lone, str(tmp_path / "governed" / "deep"))
    assert (found.root, found.found) == (str(tmp_path / "governed"), CWD)
    found = project_root.for_file(lone, str(tmp_path), git_top=lambda p: str(tmp_path / "lone"))
    assert (found.root, found.found) == (str(tmp_path / "lone"), NONE)
    found = project_root.for_file(lone, str(tmp_path), git_top=lambda p: None)
    assert (found.root, found.found) == (str(tmp_path), NONE)


def test_the_walk_is_memoised_within_a_process(tmp_path):
    _project(tmp_path / "repo")
    memo: dict = {}
    deep = str(tmp_path / "repo" / "a" / "b")
    assert project_root.nearest(deep, memo) == str(tmp_path / "repo")
    assert memo[str(tmp_path / "repo" / "a")] == (str(tmp_path / "repo"),)
    os.remove(tmp_path / "repo" / ".bobbin" / "config.toml")
    assert project_root.nearest(deep, memo) == str(tmp_path / "repo")  # this process only
    assert project_root.nearest(deep) is None


def test_without_a_file_the_walk_starts_at_the_cwd(tmp_path):
    _project(tmp_path / "repo")
    found = project_root.for_dir(str(tmp_path / "repo" / "src" / "deep"))
    assert (found.root, found.found) == (str(tmp_path / "repo"), CWD)
    found = project_root.for_dir(str(tmp_path / "elsewhere"))
    assert (found.root, found.found) == (str(tmp_path / "elsewhere"), NONE)
