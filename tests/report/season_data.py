"""The season the report tests render, and what its store and logs hold."""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.league.driver import leaderboard, season_ratings
from arena.league.store import SeasonStore, StoredResult
from arena.rating import SeasonRatings
from arena.rating.trueskill_ratings import Leaderboard
from arena.referee.log import read_log

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots" / "python"
BOTS = ("random", "greedy", "strategist")

SEASON = """\
[season]
name = "report-test"
table_size = 2
matches_per_group = 2
entrants = [{entrants}]

[rules]
target_score = 200

[sandbox]
backend = "plain"

[output]
folder = "{folder}"
report = "{report}"
"""


@dataclass(frozen=True)
class SeasonRun:
    toml: Path
    folder: Path
    store: Path
    report: Path
    report_output: str
    """What ``arena report`` printed."""


@dataclass(frozen=True)
class StoreView:
    """Everything the pages should show, read straight from the store and the logs."""

    entrants: dict[int, dict[str, Any]]
    results: list[StoredResult]
    matches: list[dict[str, Any]]
    board: Leaderboard
    counts: dict[str, int]
    key_commitment: str
    season_key: str
    ratings: SeasonRatings

    def names(self, match: dict[str, Any]) -> list[str]:
        return [self.entrants[e]["name"] for e in match["seats"]]

    def done(self) -> list[dict[str, Any]]:
        return [m for m in self.matches if m["status"] == "done"]

    def log(self, match: dict[str, Any]) -> list[dict[str, Any]]:
        return list(read_log(Path(match["log_path"])))


def read_store(path: Path) -> StoreView:
    store = SeasonStore(path)
    try:
        return StoreView({e["id"]: e for e in store.entrants()}, store.results(),
                         store.matches(), leaderboard(store), store.counts(),
                         store.meta("key_commitment") or "", store.meta("season_key") or "",
                         season_ratings(store))
    finally:
        store.close()


def copy_season(folder: Path, dest: Path) -> Path:
    """A copy of the season (store and logs) whose store points at the copied logs."""
    dest.mkdir(parents=True)
    shutil.copytree(folder / "logs", dest / "logs",
                    ignore=lambda _, names: [n for n in names if not n.endswith(".gz")])
    for log in (dest / "logs").glob("*.gz"):  # same mtimes: nothing but the folder differs
        original = (folder / "logs" / log.name).stat()
        os.utime(log, ns=(original.st_atime_ns, original.st_mtime_ns))
    store = dest / "season.sqlite"
    source = sqlite3.connect(folder / "season.sqlite")
    target = sqlite3.connect(store)
    try:
        source.backup(target)
        rows = target.execute("SELECT match_id, log_path FROM matches").fetchall()
        for match_id, log_path in rows:
            if log_path:
                target.execute("UPDATE matches SET log_path = ? WHERE match_id = ?",
                               (str(dest / "logs" / Path(log_path).name), match_id))
        target.commit()
    finally:
        source.close()
        target.close()
    return store


def step_seat(record: dict[str, Any]) -> int | None:
    for key in ("seat", "dealer", "challenger"):
        if key in record:
            return int(record[key])
    return None


def log_rounds(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log's events and faults split into rounds; what precedes round 1 opens it."""
    rounds: list[dict[str, Any]] = []
    before: list[dict[str, Any]] = []
    for record in records:
        if record["type"] == "fault":
            step = {"e": "Fault", "s": record["seat"], "record": record}
        elif record["type"] == "event":
            step = {"e": record["event"], "s": step_seat(record), "record": record}
        else:
            continue
        if step["e"] == "RoundStarted":
            rounds.append({"number": record["round"], "dealer": record["dealer"],
                           "steps": [*before, step]})
            before = []
        elif rounds:
            rounds[-1]["steps"].append(step)
        else:
            before.append(step)
    assert not before
    return rounds
