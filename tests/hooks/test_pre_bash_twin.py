"""pre-bash on a damaged hot twin (issue 23 §5): the memory policies' section failing its
checksum is the loud `unreadable` miss — never an internal error, never the policy read from
damaged bytes — and the twin is removed, so the next call denies again."""

from __future__ import annotations

from pathlib import Path

from prebash import configure, hook, meminfo, memory_policy, output, write_cache

from yupana.state import cache, hot_view


def test_a_damaged_memory_plane_is_the_loud_miss_then_rebuilt(env):
    configure(env, mode="enforce")
    write_cache(env, memory_policies=[memory_policy(gib=8.0)])
    extra = meminfo(env, available_gib=2.0)
    assert output(hook(env, "cargo test", extra_env=extra))["hookSpecificOutput"]["permissionDecision"] == "deny"
    hot = Path(cache.hot_path_for(str(env.cache_path)))
    data = bytearray(hot.read_bytes())
    twin = hot_view.HotFile(data=bytes(data))
    off, n = twin.header["sections"][hot_view.PLANE + "memory_policies"]
    data[twin.base + off + n // 2] ^= 0x08
    hot.write_bytes(bytes(data))
    env.spool_path.unlink()
    out = output(hook(env, "cargo test", extra_env=extra))
    assert "hookSpecificOutput" not in out and "damaged" in out["systemMessage"]
    assert [(r["fail_kind"], r.get("miss")) for r in env.records("fail_open")] == [("projection", "unreadable")]
    assert not hot.exists()
    again = output(hook(env, "cargo test", extra_env=extra))
    assert again["hookSpecificOutput"]["permissionDecision"] == "deny"
