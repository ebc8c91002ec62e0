"""A landing certification means this commit, this ref, certified (issue 23 §6), through the real
CLI: real git repositories and pushes (the Landing harness of test_landing.py), the real spool.

``landing verify --sha/--ref/--repo`` and ``--require certified``; the chained spool (``seq``,
``prev``) that shows a deleted refusal or a copied certification; results attributed only when
the working tree is still the pushed commit after the commands ran."""

from __future__ import annotations

import json

import pytest
from commands.test_landing import UNIT, Landing, catalogue


@pytest.fixture
def land(tmp_path, env) -> Landing:
    land = Landing(tmp_path, env)
    land.keygen()
    land.catalogue(catalogue())
    land.install()
    return land


def verify(land: Landing, *args: str) -> tuple[int, dict]:
    done = land.yupana("landing", "verify", "--json", *args)
    return done.returncode, json.loads(done.stdout)


def push_change(land: Landing, text: str, *, fail: bool = False) -> str:
    if fail:
        land.fail_flag.write_text("")
    else:
        land.fail_flag.unlink(missing_ok=True)
    land.write("src/app.py", text)
    sha = land.commit(f"change {text!r}")
    done = land.push()
    assert done.returncode == 0, done.stderr.decode()  # advise: a refusal proceeds
    return sha


def test_a_certification_of_one_commit_is_not_one_of_another(land):
    a = push_change(land, "x = 2\n")
    land.write("src/app.py", "x = 3\n")
    b = land.commit("not pushed")
    assert verify(land, "--sha", a)[0] == 0
    assert verify(land, "--sha", "HEAD~1", "--ref", "main", "--repo", "widgets")[0] == 0  # git names it
    code, doc = verify(land, "--sha", b)
    assert code == 1 and doc["records"][0]["problem"] == "missing" and b[:12] in doc["records"][0]["message"]
    # A's record, offered as a file for B
    record = land.base / "a.json"
    record.write_text(land.landing_spool.read_text().splitlines()[-1])
    code, doc = verify(land, str(record), "--sha", b)
    assert code == 1 and doc["records"][0]["problem"] == "mismatch"
    assert f"certifies commit {a[:12]}, not {b[:12]}" in doc["records"][0]["message"]
    assert verify(land, str(record), "--sha", a)[0] == 0
    for wrong in (("--ref", "refs/heads/release"), ("--repo", "gadgets")):
        assert verify(land, str(record), *wrong)[1]["records"][0]["problem"] == "mismatch"


def test_a_refused_push_does_not_verify_as_certified(land):
    sha = push_change(land, "x = 2\n", fail=True)
    [record] = land.certifications()
    assert record["kind"] == "landing-refused" and record["signed"] is True
    assert verify(land, "--last")[0] == 0  # a genuine, signed refusal: the signature verifies
    code, doc = verify(land, "--last", "--require", "certified")
    assert code == 1 and doc["records"][0]["problem"] == "not-certified" and "refused" in doc["records"][0]["message"]
    code, doc = verify(land, "--sha", sha)  # asking about a commit means asking whether it is certified
    assert code == 1 and doc["require"] == "certified" and doc["records"][0]["problem"] == "not-certified"
    text = land.yupana("landing", "verify", "--sha", sha).stdout.decode()
    assert "not-certified: the push was refused, not certified" in text


def test_records_are_chained_and_a_deleted_refusal_or_a_copied_certification_is_caught(land):
    push_change(land, "x = 2\n")
    push_change(land, "x = 3\n", fail=True)
    push_change(land, "x = 4\n")
    records = land.certifications()
    assert [r["kind"] for r in records] == ["landing-certified", "landing-refused", "landing-certified"]
    assert [r["seq"] for r in records] == [1, 2, 3] and records[0]["prev"] is None
    assert all(r["prev"].startswith("sha256:") for r in records[1:])
    code, doc = verify(land, "--all")
    assert code == 0 and doc["chain"] == {"checked": 3, "problems": []}

    lines = land.landing_spool.read_text().splitlines(keepends=True)
    land.landing_spool.write_text(lines[0] + lines[2])  # the refusal deleted
    code, doc = verify(land, "--all")
    assert code == 1 and doc["verified"] == 2  # each remaining record is genuine, the spool is not
    assert doc["chain"]["problems"] == ["seq 1 is followed by seq 3: 1 record(s) missing (deleted)"]
    done = land.yupana("landing", "verify", "--last")
    assert done.returncode == 1 and "chain is broken" in done.stdout.decode()

    land.landing_spool.write_text(lines[0] + lines[1] + lines[2] * 3)  # a certification repeated three times
    code, doc = verify(land, "--all")
    assert code == 1 and doc["chain"]["problems"] == ["seq 3 appears again: a record was duplicated"] * 2

    land.landing_spool.write_text(lines[1] + lines[2])  # the oldest deleted
    code, doc = verify(land, "--sha", records[2]["sha"])
    assert code == 1 and doc["chain"]["problems"] == ["the spool begins at seq 2: the 1 record(s) before it are missing"]

    from tests.commands.test_json_schemas import check

    check("landing.verify", land.yupana("landing", "verify", "--sha", records[0]["sha"], "--json"))
    land.landing_spool.write_text("".join(lines))
    assert verify(land, "--all")[0] == 0
    check("landing.verify", land.yupana("landing", "verify", "--all", "--require", "certified", "--json"))


def test_the_chain_continues_across_rotation(land):
    push_change(land, "x = 2\n")
    land.landing_spool.rename(str(land.landing_spool) + ".old")  # as the 64 MiB rotation leaves it
    push_change(land, "x = 3\n")
    [record] = land.certifications()
    assert record["seq"] == 2
    assert verify(land, "--all")[0] == 0


def test_results_are_attributed_only_when_the_tree_is_still_the_pushed_commit_after_the_commands(tmp_path, env):
    land = Landing(tmp_path, env)
    land.keygen()
    land.catalogue(catalogue(command=UNIT + "; echo tampered >> README.txt"))
    land.install()
    land.write("src/app.py", "x = 2\n")
    land.commit("change")
    done = land.push()
    assert done.returncode == 0, done.stderr.decode()
    assert land.ran() == ["unit"]
    [record] = land.certifications()
    assert record["kind"] == "landing-unknown"
    reason = record["requirements"][1]["reason"]
    assert record["requirements"][1]["outcome"] == "unknown"
    assert reason.startswith("the results are not the pushed commit's: after the commands ran, the working tree "
                             "differs from the pushed commit") and "README.txt" in reason
    assert verify(land, "--last")[0] == 0  # a true record of an UNKNOWN


def test_concurrent_pushes_never_share_a_place_in_the_chain(tmp_path, env):
    import subprocess
    import sys

    spool = tmp_path / "landing.jsonl"
    code = ("import sys\nfrom yupana.commands.landing import chain\n"
            "for i in range(15):\n"
            "    _, error = chain.append({'kind': 'landing-unknown', 'ts': i, 'writer': sys.argv[2]}, dict, sys.argv[1])\n"
            "    assert error is None, error\n")
    writers = [subprocess.Popen([sys.executable, "-c", code, str(spool), str(n)], env=env) for n in range(4)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    records = [json.loads(line) for line in spool.read_text().splitlines()]
    assert [r["seq"] for r in records] == list(range(1, 61))
    from yupana.commands.landing import chain

    assert chain.check(records, None) == []


def test_status_shows_the_newest_place_in_the_chain(land):
    push_change(land, "x = 2\n")
    push_change(land, "x = 3\n")
    done = land.yupana("status", "--json", "--offline")
    assert json.loads(done.stdout)["landing"]["spool"]["last_seq"] == 2


def test_a_rotation_under_the_lock_keeps_the_chain_whole(tmp_path, env):
    import subprocess
    import sys

    spool = tmp_path / "landing.jsonl"
    code = ("import sys\nfrom yupana.state import spool\nfrom yupana.commands.landing import chain\n"
            "spool.ROTATE_BYTES = 400\n"
            "for i in range(9):\n"
            "    _, error = chain.append({'kind': 'landing-unknown', 'ts': i}, dict, sys.argv[1])\n"
            "    assert error is None, error\n")
    done = subprocess.run([sys.executable, "-c", code, str(spool)], env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    old = [json.loads(line) for line in (tmp_path / "landing.jsonl.old").read_text().splitlines()]
    new = [json.loads(line) for line in spool.read_text().splitlines()]
    assert new[-1]["seq"] == 9 and new[0]["seq"] == old[-1]["seq"] + 1
    from yupana.commands.landing import chain

    assert chain.check(new, old[-1]) == [] and chain.check(new, None) != []
