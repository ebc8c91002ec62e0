"""Names every Rust file may use without defining or importing them, and small helpers.

The verifier treats these as resolved. The lists are deliberately the language's own —
primitive types, the 2015/2018/2021 preludes, the crates every edition can name, and the
macros ``std`` exports at its root — not a guess at popular library names: anything else
must come from the file, the crate's index or its ``Cargo.toml``.
"""

from __future__ import annotations

PRIMITIVES = frozenset(
    "bool char str u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64".split())

PATH_KEYWORDS = frozenset(("self", "Self", "super", "crate", "_"))  # `_`: an inferred type

# std::prelude::v1 and rust_2021 (types, traits, functions, variants).
PRELUDE = frozenset("""
Copy Send Sized Sync Unpin Drop Fn FnMut FnOnce drop Box ToOwned Clone PartialEq PartialOrd
Eq Ord AsRef AsMut Into From Default Iterator Extend IntoIterator DoubleEndedIterator
ExactSizeIterator Option Some None Result Ok Err String ToString Vec TryFrom TryInto
FromIterator
""".split())

# Crates every edition can name (alloc/proc_macro/test need `extern crate` in some editions;
# an index that cannot see that treats them as reachable).
WELL_KNOWN_CRATES = frozenset(("std", "core", "alloc", "proc_macro", "test"))

# Macros exported at the root of std/core (callable by bare name in every edition).
STD_MACROS = frozenset("""
println print eprintln eprint format format_args format_args_nl write writeln panic assert
assert_eq assert_ne debug_assert debug_assert_eq debug_assert_ne vec dbg todo unimplemented
unreachable matches cfg env option_env concat stringify include include_str include_bytes file
line column module_path compile_error thread_local try concat_idents trace_macros log_syntax
global_asm asm llvm_asm const_format_args is_x86_feature_detected is_aarch64_feature_detected
is_arm_feature_detected is_riscv_feature_detected is_powerpc_feature_detected
is_powerpc64_feature_detected is_mips_feature_detected is_mips64_feature_detected
""".split())

# Macros whose arguments are plain expressions: their identifiers are checked too.
EXPR_MACROS = frozenset("""
println print eprintln eprint format format_args write writeln panic assert assert_eq
assert_ne debug_assert debug_assert_eq debug_assert_ne vec dbg todo unimplemented unreachable
""".split())

# Macros whose arguments are a format string then expressions (a bare `name =` is a named argument).
FORMAT_MACROS = frozenset("""
println print eprintln eprint format format_args write writeln panic assert assert_eq
assert_ne debug_assert debug_assert_eq debug_assert_ne todo unimplemented unreachable
""".split())

# Tokens that mean a macro argument binds names (closures, patterns, items): not checked.
BINDING_TOKENS = frozenset(("|", "||", "=>", "let", "match", "for", "fn", "@", "if", "while", "loop",
                            "struct", "enum", "impl", "mod", "use", "static", "const", "move", "async"))


def always_known(name: str) -> bool:
    """Primitive, prelude, path keyword or a crate every edition can name."""
    return name in PRELUDE or name in PRIMITIVES or name in PATH_KEYWORDS or name in WELL_KNOWN_CRATES


def word_in(data: bytes | None, name: str) -> bool:
    """Whether ``name`` occurs in ``data`` as a whole identifier-like word."""
    if not data:
        return False
    needle = name.encode("utf-8")
    at = data.find(needle)
    n = len(needle)
    while at >= 0:
        before = data[at - 1:at] if at else b""
        after = data[at + n:at + n + 1]
        if not _word_byte(before) and not _word_byte(after):
            return True
        at = data.find(needle, at + 1)
    return False


def _word_byte(b: bytes) -> bool:
    return bool(b) and (b.isalnum() or b == b"_" or b[0] >= 0x80)


def module_dir(rel: str, roots: set[str] | frozenset = frozenset()) -> str:
    """Directory where ``mod x;`` declared in file ``rel`` (crate-relative) looks for x.

    Crate roots (``lib.rs``, ``main.rs``, ``build.rs``, files under tests/, examples/,
    benches/, src/bin/, and ``roots`` named by Cargo.toml) and ``mod.rs`` files own their
    directory; any other ``a/b.rs`` looks in ``a/b/``.
    """
    head, _, base = rel.rpartition("/")
    if base in ("lib.rs", "main.rs", "mod.rs", "build.rs") or rel in roots or _is_root_target(head, base):
        return head
    stem = base[:-3] if base.endswith(".rs") else base
    return f"{head}/{stem}" if head else stem


def _is_root_target(head: str, base: str) -> bool:
    """tests/x.rs, examples/x.rs, benches/x.rs and src/bin/x.rs are crate roots."""
    return head in ("tests", "examples", "benches", "src/bin")
