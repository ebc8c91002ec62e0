import pytest

from yupana.globs import GlobError, compile_glob, match_any, matches


@pytest.mark.parametrize(
    "pattern,path,expected",
    [
        ("src/**", "src/a/b.rs", True),
        ("src/**", "src/a.rs", True),
        ("src/**", "srcx/a.rs", False),
        ("src/*", "src/a/b.rs", True),  # * crosses / (require_literal_separator is off)
        ("**/*.rs", "a.rs", True),
        ("**/*.rs", "x/y/a.rs", True),
        ("**/*.rs", "x/y/a.py", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "ab", False),
        ("*.rs", "src/x.rs", True),
        ("src/config.rs", "src/config.rs", True),
        ("src/config.rs", "src/config.rsx", False),
        ("[!a]b", "cb", True),
        ("[!a]b", "ab", False),
        ("[]]x", "]x", True),
        ("f?o", "f/o", True),
        ("[a-c]*", "bz", True),
        ("[a-c]*", "dz", False),
        ("**", "anything/at/all", True),
        ("[*]", "*", True),
        ("[*]", "x", False),
        (".*", ".hidden", True),
        ("*", ".hidden", True),
        ("src/\\x", "src/\\x", True),
    ],
)
def test_matches_the_rust_glob_dialect(pattern, path, expected):
    assert matches(compile_glob(pattern), path) is expected


@pytest.mark.parametrize("bad", ["***", "a**", "**b", "a/**b", "[abc", "", "[z-a]"])
def test_malformed_globs_are_errors_that_say_why(bad):
    with pytest.raises(GlobError) as err:
        compile_glob(bad)
    assert str(err.value)


def test_match_any():
    compiled = [compile_glob("src/**"), compile_glob("tests/**")]
    assert match_any(compiled, "tests/x.py")
    assert not match_any(compiled, "docs/x.md")


def test_pathological_patterns_stay_fast():
    tokens = compile_glob("*a*a*a*a*a*a*a*b")
    assert not matches(tokens, "a" * 200)
