"""The season store: SQLite, the source of truth of a season.

A match's result is written in one transaction, after its log is already on disk; a match
that was in flight when the run died has no row and is simply played again on resume.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.league.schedule import ScheduledMatch

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entrants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    folder TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    manifest TEXT NOT NULL,
    UNIQUE (folder, content_hash)
);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    chance TEXT NOT NULL,            -- the label its deals derive under from the season key
    grp INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    round INTEGER,                   -- 1-based round of the season (NULL: before rounds)
    seats TEXT NOT NULL,             -- JSON list of entrant ids, by seat
    status TEXT NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'done', 'failed')),
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    finished_at REAL,
    seconds REAL,
    decisions INTEGER,
    rounds INTEGER,
    round_limit_reached INTEGER,
    log_path TEXT
);
CREATE TABLE IF NOT EXISTS results (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL,
    entrant_id INTEGER NOT NULL REFERENCES entrants(id),
    place INTEGER NOT NULL,
    score INTEGER NOT NULL,
    rounds_won INTEGER NOT NULL,
    strikes INTEGER NOT NULL,
    disqualified INTEGER NOT NULL,
    faults TEXT NOT NULL,            -- JSON list of {kind, reason}
    PRIMARY KEY (match_id, seat)
);
"""


@dataclass(frozen=True)
class SeatResult:
    seat: int
    place: int
    score: int
    rounds_won: int
    strikes: int
    disqualified: bool
    faults: tuple[dict[str, object], ...]


@dataclass(frozen=True)
class MatchRecord:
    """What a finished match leaves in the store."""

    match_id: str
    seconds: float
    decisions: int
    rounds: int
    round_limit_reached: bool
    log_path: str
    seats: tuple[SeatResult, ...]


@dataclass(frozen=True)
class StoredResult:
    match_id: str
    entrant_id: int
    seat: int
    place: int
    score: int
    rounds_won: int
    strikes: int
    disqualified: bool
    faults: tuple[dict[str, object], ...]


class StoreError(Exception):
    """A store this version cannot use; the message says why and what to do."""


class SeasonStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # The store holds the season key: only the organiser may read it (SQLite gives its
        # -wal and -shm files the database file's permissions).
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        self.db = sqlite3.connect(path, isolation_level=None)  # explicit transactions
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(SCHEMA)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(matches)")}
        if "chance" not in columns:
            self.db.close()
            raise StoreError(
                f"{path}: made by an older UNO Arena, whose deals came from public seeds; "
                "start the season again in a new [output] folder (its results stay here)")
        if "round" not in columns:  # stores made before rounds were recorded
            self.db.execute("ALTER TABLE matches ADD COLUMN round INTEGER")

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- set-up --------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def entrant_id(self, name: str, version: str, folder: str, content_hash: str,
                   manifest: dict[str, object]) -> int:
        """The id of this exact bot version (a changed folder is a new entrant version)."""
        with self.transaction() as db:
            row = db.execute("SELECT id FROM entrants WHERE folder = ? AND content_hash = ?",
                             (folder, content_hash)).fetchone()
            if row:
                return int(row[0])
            cursor = db.execute(
                "INSERT INTO entrants (name, version, folder, content_hash, manifest) "
                "VALUES (?, ?, ?, ?, ?)",
                (name, version, folder, content_hash, json.dumps(manifest, sort_keys=True)))
            assert cursor.lastrowid is not None
            return cursor.lastrowid

    def schedule(self, matches: Sequence[ScheduledMatch], entrant_ids: Sequence[int]) -> None:
        """Record the schedule; matches not yet played take the current entrant versions."""
        with self.transaction() as db:
            for match in matches:
                seats = json.dumps([entrant_ids[e] for e in match.seats])
                db.execute(
                    "INSERT INTO matches (match_id, chance, grp, deal, round, seats) "
                    "VALUES (?,?,?,?,?,?) "
                    "ON CONFLICT (match_id) DO UPDATE SET seats = excluded.seats "
                    "WHERE matches.status != 'done'",
                    (match.match_id, match.chance, match.group, match.deal,
                     match.round or None, seats))

    # -- results -------------------------------------------------------------------------

    def pending(self) -> list[str]:
        return [row[0] for row in self.db.execute(
            "SELECT match_id FROM matches WHERE status != 'done' ORDER BY match_id")]

    def seats_of(self, match_id: str) -> list[int]:
        row = self.db.execute("SELECT seats FROM matches WHERE match_id = ?",
                              (match_id,)).fetchone()
        return list(json.loads(row[0]))

    def record(self, record: MatchRecord) -> bool:
        """Write a finished match in one transaction; False if it was already recorded."""
        with self.transaction() as db:
            row = db.execute("SELECT status, seats FROM matches WHERE match_id = ?",
                             (record.match_id,)).fetchone()
            if row is None:
                raise KeyError(f"match {record.match_id} is not in the schedule")
            if row[0] == "done":
                return False
            entrants = json.loads(row[1])
            db.execute(
                "UPDATE matches SET status = 'done', error = NULL, attempts = attempts + 1, "
                "finished_at = ?, seconds = ?, decisions = ?, rounds = ?, "
                "round_limit_reached = ?, log_path = ? WHERE match_id = ?",
                (time.time(), record.seconds, record.decisions, record.rounds,
                 int(record.round_limit_reached), record.log_path, record.match_id))
            db.executemany(
                "INSERT INTO results VALUES (?,?,?,?,?,?,?,?,?)",
                [(record.match_id, s.seat, entrants[s.seat], s.place, s.score, s.rounds_won,
                  s.strikes, int(s.disqualified), json.dumps(list(s.faults)))
                 for s in record.seats])
            return True

    def record_failure(self, match_id: str, error: str) -> None:
        with self.transaction() as db:
            db.execute("UPDATE matches SET status = 'failed', error = ?, "
                       "attempts = attempts + 1, finished_at = ? "
                       "WHERE match_id = ? AND status != 'done'",
                       (error[:2000], time.time(), match_id))

    def counts(self) -> dict[str, int]:
        counts = {"scheduled": 0, "done": 0, "failed": 0}
        for status, count in self.db.execute(
                "SELECT status, COUNT(*) FROM matches GROUP BY status"):
            counts[status] = count
        return counts

    def results(self) -> list[StoredResult]:
        """Every seat's result, in schedule order (match id), then seat."""
        return [
            StoredResult(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]),
                         tuple(json.loads(r[8])))
            for r in self.db.execute(
                "SELECT match_id, entrant_id, seat, place, score, rounds_won, strikes, "
                "disqualified, faults FROM results ORDER BY match_id, seat")
        ]

    def entrants(self) -> list[dict[str, Any]]:
        return [
            {"id": r[0], "name": r[1], "version": r[2], "folder": r[3], "hash": r[4],
             "manifest": json.loads(r[5])}
            for r in self.db.execute(
                "SELECT id, name, version, folder, content_hash, manifest FROM entrants "
                "ORDER BY id")
        ]

    def matches(self) -> list[dict[str, Any]]:
        columns = ("match_id", "chance", "grp", "deal", "round", "seats", "status", "error",
                   "attempts", "finished_at", "seconds", "decisions", "rounds",
                   "round_limit_reached", "log_path")
        rows = self.db.execute(f"SELECT {', '.join(columns)} FROM matches ORDER BY match_id")
        out = []
        for row in rows:
            item = dict(zip(columns, row, strict=True))
            item["seats"] = json.loads(str(item["seats"]))
            out.append(item)
        return out
