"""Two checkouts' referees side by side: does a change make a decision cheaper?

``benchmarks.referee`` measures one tree against a ping-pong; a change to the referee is
judged here instead, the old tree and the new one taking turns on the same machine, so
that the machine's drift (figures move by a fifth between runs minutes apart) falls on
both alike. Each turn plays ``--matches`` 2-player matches to 500 (strategist against
greedy, real processes, the match log written) in a fresh interpreter of each tree, the
same seeds for both, alternating which goes first; it prints each turn's wall time per
decision in play (start-up excluded), the medians, and the new tree's ratio to the old.

Run: ``python -m benchmarks.referee_trees OLD_CHECKOUT NEW_CHECKOUT [--rounds 10]
[--matches 5]`` (e.g. ``git worktree add /tmp/old HEAD~3`` for the old one).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

TURN = """
import sys, tempfile
from pathlib import Path
from benchmarks.referee import _play
logs = Path(tempfile.mkdtemp(prefix="arena-trees-"))
decisions, seconds = 0, 0.0
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    outcome = _play(seed, logs, logs / f"m{seed}.jsonl.gz")
    decisions += outcome.decisions
    seconds += outcome.play_seconds
print(seconds / decisions)
"""


def turn(tree: Path, first_seed: int, matches: int) -> float:
    """Seconds a decision in play, ``matches`` matches played by ``tree``'s referee."""
    run = subprocess.run(
        [sys.executable, "-c", TURN, str(first_seed), str(first_seed + matches)],
        cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True,
        text=True, check=False)
    if run.returncode != 0:
        raise SystemExit(f"{tree}: {run.stderr.strip()[-2000:]}")
    return float(run.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--matches", type=int, default=5)
    args = parser.parse_args()
    trees = [args.old.resolve(), args.new.resolve()]
    for tree in trees:
        if not (tree / "benchmarks" / "referee.py").is_file():
            raise SystemExit(f"{tree} is not a checkout of this project")
    times: dict[Path, list[float]] = {tree: [] for tree in trees}
    for index in range(args.rounds):
        for tree in trees if index % 2 == 0 else trees[::-1]:
            times[tree].append(turn(tree, 1000 + index * args.matches, args.matches))
        print(f"turn {index + 1}: old {times[trees[0]][-1] * 1e6:.0f} us, "
              f"new {times[trees[1]][-1] * 1e6:.0f} us a decision", flush=True)
    old, new = (statistics.median(times[tree]) for tree in trees)
    per_turn = statistics.median(b / a for a, b in zip(*times.values(), strict=True))
    print(f"\nmedian of {args.rounds} turns: old {old * 1e6:.0f} us, new {new * 1e6:.0f} us "
          f"a decision; new / old {new / old:.3f} (median of the turns' ratios "
          f"{per_turn:.3f})")


if __name__ == "__main__":
    main()
