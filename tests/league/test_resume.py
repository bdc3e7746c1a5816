"""A season killed with SIGKILL at random moments resumes to exactly the results and
ratings of an uninterrupted run, never recording a match twice.

The kills are placed by progress (a random number of matches recorded, then a random
fraction of a match), not by the clock, so a faster machine or platform still kills every
run mid-season."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.league.driver import leaderboard
from arena.league.store import SeasonStore

ROOT = Path(__file__).resolve().parents[2]

SEASON = """
[season]
name = "{name}"
table_size = 2
matches_per_group = 8
parallelism = 2
entrants = ["{bots}/random", "{bots}/greedy", "{bots}/strategist"]

[rules]
target_score = 500

[sandbox]
backend = "plain"

[output]
folder = "{folder}"
"""


MATCHES = 24
"""3 pairs, 8 matches each."""


def season_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(SEASON.format(name=name, bots=ROOT / "sample_bots" / "python",
                                  folder=tmp_path / name))
    return path


KEY = bytes(range(32)).hex()
"""Both seasons are dealt from this key, so their results can be compared."""


def start(path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "arena.cli", "season", "run", str(path),
                             "--key", KEY],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


def done(folder: Path) -> int:
    """Matches recorded so far (read while the season runs)."""
    path = folder / "season.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'"
                                  ).fetchone()[0])
    except sqlite3.OperationalError:  # the store is being created
        return 0


def snapshot(folder: Path) -> tuple[list[tuple[object, ...]], list[tuple[int, float, float]]]:
    store = SeasonStore(folder / "season.sqlite")
    try:
        results = [(r.match_id, r.seat, r.entrant_id, r.place, r.score, r.rounds_won,
                    r.strikes, r.disqualified) for r in store.results()]
        board = leaderboard(store)
        ratings = [(s.entrant_id, round(s.mu, 9), round(s.sigma, 9)) for s in board.standings]
        counts = store.counts()
        assert counts["done"] == MATCHES and counts["scheduled"] == 0 and counts["failed"] == 0
    finally:
        store.close()
    return results, ratings


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_gives_identical_results(tmp_path: Path) -> None:
    reference = start(season_file(tmp_path, "reference"))
    assert reference.wait(timeout=300) == 0, reference.stderr.read() if reference.stderr else ""
    expected = snapshot(tmp_path / "reference")

    path = season_file(tmp_path, "killed")
    folder = tmp_path / "killed"
    rng = random.Random(5)
    kills = 0
    for _ in range(4):
        run = start(path)
        target = done(folder) + rng.randint(0, 3)
        deadline = time.monotonic() + 120
        while done(folder) < target and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.4))  # about a match: mid-start, mid-play, mid-write
        if run.poll() is not None:
            break
        os.killpg(run.pid, signal.SIGKILL)  # the driver and its workers, mid-whatever
        run.wait()
        kills += 1
    assert kills >= 3, "the season finished before it could be killed three times"
    assert done(folder) < MATCHES
    final = start(path)
    assert final.wait(timeout=300) == 0, final.stderr.read() if final.stderr else ""
    assert snapshot(tmp_path / "killed") == expected
    # Every match has exactly one complete log and no partial file is left by the last run.
    logs = tmp_path / "killed" / "logs"
    assert len(list(logs.glob("*.jsonl.gz"))) == MATCHES
    assert not list(logs.glob("*.partial"))
