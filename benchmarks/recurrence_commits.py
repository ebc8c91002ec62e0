"""How often the recurrence advisory flags a near-duplicate of a denied edit, and how often an
unrelated edit (false advisories), on real edits: this repository's own git history.

    .venv/bin/python benchmarks/recurrence_commits.py [--repo DIR] [--commits N] [--seed S]

Every added hunk (≥ 6 tokens) of the last N commits is an edit. Every third is *denied*
(enters the corpus, bounded as the hook bounds it: the newest 300). A *near-duplicate* of a
denied hunk is what an agent retrying tends to send: one identifier renamed, one literal
changed, and a line dropped or duplicated. *Unrelated* edits are the hunks never denied.
Both are scored with the hook's own functions (``recurrence.embed`` / ``nearest``).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from yupana.evaluate import recurrence
from yupana.state import denials


def hunks(repo: str, commits: int) -> list[str]:
    log = subprocess.run(["git", "-C", repo, "log", f"-{commits}", "--no-merges", "-p", "--unified=0",
                          "--format=format:commit %h", "--", "*.py", "*.md", "*.rs", "*.ttl", "*.rq"],
                         capture_output=True, text=True, check=True).stdout
    out, cur = [], []
    for line in log.splitlines():
        if line.startswith("@@"):
            if cur:
                out.append("\n".join(cur))
            cur = []
        elif line.startswith("+") and not line.startswith("+++"):
            cur.append(line[1:])
    if cur:
        out.append("\n".join(cur))
    return [h[:recurrence.MAX_TEXT] for h in out if len(recurrence.tokens(h)) >= recurrence.MIN_TOKENS]


def perturb(text: str, rng: random.Random) -> str:
    toks = sorted({t for t in recurrence.tokens(text) if len(t) > 3})
    if toks:
        old = rng.choice(toks)
        text = text.replace(old, old + "_v2")
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    if digits:
        i = rng.choice(digits)
        text = text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1:]
    lines = text.split("\n")
    if len(lines) > 2:
        j = rng.randrange(len(lines))
        lines = lines[:j] + lines[j + 1:] if rng.random() < 0.5 else lines[:j + 1] + [lines[j]] + lines[j + 1:]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--commits", type=int, default=400)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    edits = hunks(args.repo, args.commits)
    denied = [e for i, e in enumerate(edits) if i % 3 == 0][-denials.MAX_ENTRIES:]
    unrelated = [e for i, e in enumerate(edits) if i % 3 != 0]
    denied_set = set(denied)
    unrelated = [e for e in unrelated if e not in denied_set]  # an identical hunk would be a true repeat
    corpus = [{"model": recurrence.MODEL_ID, **recurrence.packed(recurrence.embed(e)), "at": 0} for e in denied]
    near = [perturb(e, rng) for e in denied]
    flagged = sum(recurrence.nearest(recurrence.embed(e), corpus) is not None for e in near)
    false = sum(recurrence.nearest(recurrence.embed(e), corpus) is not None for e in unrelated)
    print(f"model {recurrence.MODEL_ID}, threshold {recurrence.THRESHOLD}, {len(edits)} hunks from the last "
          f"{args.commits} commits of {args.repo}")
    print(f"near-duplicates of denied edits flagged: {flagged}/{len(near)} = {flagged / max(1, len(near)):.1%}")
    print(f"unrelated edits flagged (false advisories): {false}/{len(unrelated)} = "
          f"{false / max(1, len(unrelated)):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
