"""The season store: SQLite, the source of truth of a season.

A match's result is written in one transaction, after its log is already on disk
(``arena.league.results``); a match that was in flight when the run died has no row and is
simply played again on resume.

The store is created whole and opened only when it holds the season's tables
(``arena.league.storage``): an empty file or another database is damage, never a season to
start again. Readers (status, standings, export, report) open it read-only, so they may look
while a run writes (SQLite's WAL).
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from arena.formats import json_value
from arena.league.results import (
    RESULT_COLUMNS,
    MatchRecord,
    SeatResult,
    record_result,
    results_table,
)
from arena.league.schedule import ScheduledMatch
from arena.league.storage import (
    SEASON_STORE,
    StoreError,
    closed_on_error,
    connect,
    create,
    damaged,
    reading,
    store_trouble,
    write_transaction,
)

__all__ = [
    "MATCH_ID", "MIGRATIONS", "SCHEMA", "SQL_VARIABLES", "MatchRecord", "SeasonMatch",
    "SeasonStore", "SeatResult", "StoreError", "StoreMissing", "StoredResult", "damaged",
    "match_log", "store_trouble",
]
"""The season store and what its callers pass and catch (a result, a StoreError)."""

SCHEMA = f"""
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
    {RESULT_COLUMNS}
);
{results_table('entrant_id', 'entrants')}"""

MIGRATIONS = (
    ("matches", "log_sha256", "ALTER TABLE matches ADD COLUMN log_sha256 TEXT"),
    ("matches", "round", "ALTER TABLE matches ADD COLUMN round INTEGER"),
)
"""Columns a store may lack, added when a run opens it: (table, column, statement adding it)."""

SQL_VARIABLES = 500
"""Ids bound in one query, at most (SQLite builds before 3.32 allow 999)."""
TABLES = ("meta", "entrants", "matches", "results")


class StoreMissing(StoreError):
    """No store: the season has not been run."""


def _json_object(text: str) -> dict[str, Any]:
    """A column holding a JSON object (ValueError otherwise)."""
    value = json_value(text)
    if not isinstance(value, dict):
        raise ValueError(f"not a JSON object: {text[:80]!r}")
    return value


def _json_list(text: str, of: type) -> list[Any]:
    """A column holding a JSON list of ``of`` values, each of exactly that type (a JSON
    ``true`` is no entrant id, though Python's bool is an int); ValueError otherwise."""
    value = json_value(text)
    if not isinstance(value, list) or not all(type(v) is of for v in value):
        raise ValueError(f"not a list of {of.__name__}: {text[:80]!r}")
    return value


class StoredResult(NamedTuple):
    """One seat's result (a tuple: a report reads 100,000 of them, a dataclass each cost
    four times as much to make)."""

    match_id: str
    entrant_id: int
    seat: int
    place: int
    score: int
    rounds_won: int
    strikes: int
    disqualified: bool
    faults: tuple[dict[str, object], ...]


def match_log(folder: Path, match_id: str) -> Path:
    """A match's log in a season's output folder (the store's folder)."""
    return folder / "logs" / f"{match_id}.jsonl.gz"


MATCH_ID = re.compile(r"[mt][0-9]{1,12}(?:-[0-9]{1,12})?")
"""The ids the schedule (``m00001``) and the tie-break stage (``t001-0001``) give: they name
files (a log, a page), so a store holding another is damaged, not obeyed."""
_INTEGERS = frozenset({int})
_OPTIONAL_INTEGERS = frozenset({int, type(None)})
_OPTIONAL_NUMBERS = frozenset({int, float, type(None)})


def _check_results(results: list[StoredResult],
                   matches: dict[str, tuple[list[int], str]], held: set[int]) -> None:
    """Every result as this version records it (raises ValueError, read as a damaged
    store): whole numbers, for a played match, by the entrant at that seat, a place among
    the table's; every played match with a result for each of its seats; every seat an
    entrant the store holds (``held``)."""
    columns: list[tuple[Any, ...]] = (list(zip(*results, strict=True))
                                      or [()] * len(StoredResult._fields))
    for column in columns[1:7]:  # entrant, seat, place, score, rounds won, strikes
        if not set(map(type, column)) <= _INTEGERS:
            found = next(r for r in results if not {type(v) for v in r[1:7]} <= _INTEGERS)
            raise ValueError(f"match {found.match_id}'s result for seat {found.seat!r} "
                             "holds a value that is not a whole number")
    counted: dict[str, int] = {}
    for match_id, entrant, seat, place in zip(*columns[:4], strict=True):
        match = matches.get(match_id)
        if match is None or match[1] != "done":
            raise ValueError(f"a result for match {match_id!r}, which "
                             f"{'is not scheduled' if match is None else 'is ' + match[1]}")
        seats = match[0]
        if not (0 <= seat < len(seats) and seats[seat] == entrant and 1 <= place <= len(seats)):
            raise ValueError(f"match {match_id}'s result for seat {seat} (entrant {entrant}, "
                             f"place {place}) does not fit its table {seats}")
        counted[match_id] = counted.get(match_id, 0) + 1
    for match_id, (seats, status) in matches.items():
        if not MATCH_ID.fullmatch(match_id):
            raise ValueError(f"a match id is {match_id[:40]!r}, not one the schedule gives")
        if not held.issuperset(seats):
            raise ValueError(f"match {match_id} seats entrant(s) "
                             f"{', '.join(map(str, sorted(set(seats) - held)))}, which it does "
                             "not hold")
        if status == "done" and counted.get(match_id, 0) != len(seats):
            raise ValueError(f"match {match_id} is played but has {counted.get(match_id, 0)} "
                             f"result(s) for its {len(seats)} seats")


def _check_match(row: tuple[Any, ...], seats: list[int]) -> None:
    """A match as this version records it (raises ValueError): an id of the schedule's
    form and distinct entrants."""
    match_id = row[0]
    if type(match_id) is not str or not MATCH_ID.fullmatch(match_id):
        raise ValueError(f"a match id is {str(match_id)[:40]!r}, not one the schedule gives")
    if len(set(seats)) != len(seats):
        raise ValueError(f"match {match_id} seats an entrant twice: {seats}")


class SeasonMatch(NamedTuple):
    """A match as the store holds it: its fields are the columns of ``matches``."""

    match_id: str
    chance: str
    grp: int
    deal: int
    round: int | None
    seats: list[int]
    status: str
    error: str | None
    attempts: int
    finished_at: float | None
    seconds: float | None
    decisions: int | None
    rounds: int | None
    round_limit_reached: int | None
    log_path: str | None
    log_sha256: str | None


_reading = reading(SEASON_STORE)


class SeasonStore:
    """A season's store; ``read_only`` for readers (StoreMissing if there is none)."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        if not path.exists():
            if read_only:
                raise StoreMissing(f"{path}: no season store")
            create(path, SEASON_STORE, SCHEMA)
        self.db = connect(path, SEASON_STORE, TABLES, read_only=read_only)
        with closed_on_error(self.db, path, SEASON_STORE):
            if not read_only:
                self._migrate()
            self.columns = {row[1] for row in self.db.execute("PRAGMA table_info(matches)")}
            if "chance" not in self.columns:
                raise StoreError(
                    f"{path}: made by an older UNO Arena, whose deals came from public seeds; "
                    "start the season again in a new [output] folder (its results stay here)")

    def _migrate(self) -> None:
        """Add the columns newer versions record to a store an older version created."""
        for table, column, statement in MIGRATIONS:
            present = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            if column not in present:
                self.db.execute(statement)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; a failure to write raises StoreError, nothing half-done."""
        with write_transaction(self.db, self.path) as db:
            yield db

    # -- set-up --------------------------------------------------------------------------

    @_reading
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.set_metas({key: value})

    def set_metas(self, values: dict[str, str]) -> None:
        """Set several meta values in one transaction (all or none)."""
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

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

    def schedule(self, matches: Iterable[ScheduledMatch], entrant_ids: Sequence[int],
                 stamp: str | None = None) -> None:
        """Record the schedule; matches not yet played take the current entrant versions.
        ``stamp`` (what the schedule and the versions were) is kept in the same transaction,
        so that a run finding it unchanged need not record the schedule again."""
        with self.transaction() as db:
            db.executemany(
                "INSERT INTO matches (match_id, chance, grp, deal, round, seats) "
                "VALUES (?,?,?,?,?,?) "
                "ON CONFLICT (match_id) DO UPDATE SET seats = excluded.seats "
                "WHERE matches.status != 'done' AND matches.seats != excluded.seats",
                ((match.match_id, match.chance, match.group, match.deal, match.round or None,
                  json.dumps([entrant_ids[e] for e in match.seats])) for match in matches))
            if stamp is not None:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('schedule_stamp', ?)", (stamp,))

    # -- results -------------------------------------------------------------------------

    @_reading
    def pending(self) -> list[str]:
        return [row[0] for row in self.db.execute(
            "SELECT match_id FROM matches WHERE status != 'done' ORDER BY match_id")]

    @_reading
    def pending_among(self, match_ids: Sequence[str]) -> set[str]:
        """Those of ``match_ids`` not played yet (scheduled, or failed last time)."""
        found: set[str] = set()
        for start in range(0, len(match_ids), SQL_VARIABLES):
            part = match_ids[start:start + SQL_VARIABLES]
            found.update(row[0] for row in self.db.execute(
                "SELECT match_id FROM matches WHERE status != 'done' AND match_id IN "
                f"({','.join('?' * len(part))})", part))
        return found

    @_reading
    def seats_of(self, match_id: str) -> list[int]:
        row = self.db.execute("SELECT seats FROM matches WHERE match_id = ?",
                              (match_id,)).fetchone()
        return _json_list(row[0], int)

    def record(self, record: MatchRecord) -> bool:
        """Write a finished match in one transaction; False if it was already recorded."""
        with self.transaction() as db:
            row = db.execute("SELECT status, seats FROM matches WHERE match_id = ?",
                             (record.match_id,)).fetchone()
            if row is None:
                raise KeyError(f"match {record.match_id} is not in the schedule")
            if row[0] == "done":
                return False
            if db.execute("SELECT 1 FROM results WHERE match_id = ?",
                          (record.match_id,)).fetchone() is not None:
                raise damaged(self.path, f"match {record.match_id} is {row[0]} but has "
                              "results already")
            try:
                entrants = _json_list(row[1], int)
            except ValueError as error:
                raise damaged(self.path, f"match {record.match_id}'s seats: {error}") from None
            if not record_result(db, record, entrants, ("scheduled", "failed")):
                return False
            db.execute("UPDATE matches SET error = NULL, attempts = attempts + 1 "
                       "WHERE match_id = ?", (record.match_id,))
            return True

    def record_failure(self, match_id: str, error: str) -> None:
        with self.transaction() as db:
            db.execute("UPDATE matches SET status = 'failed', error = ?, "
                       "attempts = attempts + 1, finished_at = ? "
                       "WHERE match_id = ? AND status != 'done'",
                       (error[:2000], time.time(), match_id))

    @_reading
    def counts(self) -> dict[str, int]:
        counts = {"scheduled": 0, "done": 0, "failed": 0}
        for status, count in self.db.execute(
                "SELECT status, COUNT(*) FROM matches GROUP BY status"):
            counts[status] = count
        return counts

    @_reading
    def results(self) -> list[StoredResult]:
        """Every seat's result, in schedule order (match id), then seat; checked against
        the matches (a store edited by hand is damaged, not half believed)."""
        results = [
            StoredResult(match_id, entrant, seat, place, score, rounds_won, strikes,
                         bool(disqualified),
                         () if faults == "[]" else tuple(_json_list(faults, dict)))
            for match_id, entrant, seat, place, score, rounds_won, strikes, disqualified, faults
            in self.db.execute(
                "SELECT match_id, entrant_id, seat, place, score, rounds_won, strikes, "
                "disqualified, faults FROM results ORDER BY match_id, seat")
        ]
        rows = self.db.execute("SELECT match_id, seats, status FROM matches").fetchall()
        seats = json_value(f"[{','.join([str(row[1]) for row in rows])}]")
        if not (set(map(type, seats)) <= {list} and {type(e) for s in seats for e in s} <= {int}):
            raise ValueError("a match's seats are not a list of entrant ids")
        held = {row[0] for row in self.db.execute("SELECT id FROM entrants")}
        _check_results(results, {str(row[0]): (table, str(row[2]))
                                 for row, table in zip(rows, seats, strict=True)}, held)
        return results

    @_reading
    def entrants(self) -> list[dict[str, Any]]:
        return [
            {"id": r[0], "name": r[1], "version": r[2], "folder": r[3], "hash": r[4],
             "manifest": _json_object(r[5])}
            for r in self.db.execute(
                "SELECT id, name, version, folder, content_hash, manifest FROM entrants "
                "ORDER BY id")
        ]

    @_reading
    def match_rows(self, status: str | None = None, prefix: str | None = None
                   ) -> list[SeasonMatch]:
        """The matches in id order; only those with ``status``, or whose id starts with
        ``prefix`` (the tie-break stage's), when given."""
        # A store of an older version, read without migrating it, lacks the newer columns.
        selected = [c if c in self.columns else f"NULL AS {c}" for c in SeasonMatch._fields]
        conditions, values = [], []
        if status is not None:
            conditions.append("status = ?")
            values.append(status)
        if prefix is not None:  # a range of the primary key: no scan of the other matches
            conditions.append("match_id >= ? AND match_id < ?")
            values += [prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)]
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        rows = self.db.execute(
            f"SELECT {', '.join(selected)} FROM matches{where} ORDER BY match_id", values
        ).fetchall()
        # Every match's seats in one parse: a report reads 80,000 of them.
        seats = json_value(f"[{','.join([row[5] for row in rows])}]")
        # Each a list of entrant ids (a damaged one raises: see _reading); 11 ms at 80,000.
        if not (set(map(type, seats)) <= {list} and {type(e) for s in seats for e in s} <= {int}):
            raise ValueError("a match's seats are not a list of entrant ids")
        numbers = [SeasonMatch._fields.index(f) for f in ("seconds", "finished_at")]
        whole = [SeasonMatch._fields.index(f) for f in ("decisions", "rounds", "attempts",
                                                         "grp", "deal")]
        for row, entrants in zip(rows, seats, strict=True):
            _check_match(row, entrants)
            if not ({type(row[i]) for i in numbers} <= _OPTIONAL_NUMBERS
                    and {type(row[i]) for i in whole} <= _OPTIONAL_INTEGERS):
                raise ValueError(f"match {row[0]} holds a number that is not one")
        log = SeasonMatch._fields.index("log_path")
        return [SeasonMatch._make((*row[:5], entrants, *row[6:log],
                                   self.log_of(row[0]) if row[log] else None, *row[log + 1:]))
                for row, entrants in zip(rows, seats, strict=True)]

    def log_of(self, match_id: str) -> str:
        """Where a match's log is: beside the store, named by the match (``match_log``),
        not the path recorded with it, so a season copied or restored elsewhere reads its
        own logs."""
        return str(match_log(self.path.parent, match_id))

    def matches(self, status: str | None = None, prefix: str | None = None
                ) -> list[dict[str, Any]]:
        """``match_rows`` as dicts, column name to value."""
        return [row._asdict() for row in self.match_rows(status, prefix)]

    @_reading
    def settings(self) -> dict[str, Any]:
        """The season's settings as its first run recorded them (``{}``: none recorded)."""
        text = self.meta("settings")
        return {} if text is None else _json_object(text)

    @_reading
    def entrant_folders(self) -> list[str] | None:
        """The entrants' folders as the season's last run listed them (None: none listed)."""
        text = self.meta("entrant_folders")
        return None if text is None else _json_list(text, str)

    @_reading
    def played_logs(self) -> list[tuple[str, str | None, str | None]]:
        """Every done match's (match id, log path, log SHA-256), in id order: what a
        report looks at in the logs, without the rest of the rows."""
        sha = "log_sha256" if "log_sha256" in self.columns else "NULL"
        played = [(str(match_id), path and self.log_of(match_id), digest)
                  for match_id, path, digest in self.db.execute(
                      f"SELECT match_id, log_path, {sha} FROM matches WHERE status = 'done' "
                      "ORDER BY match_id")]
        for match_id, _, _ in played:
            if not MATCH_ID.fullmatch(match_id):
                raise ValueError(f"a match id is {match_id[:40]!r}, not one the schedule gives")
        return played

    @_reading
    def chances(self) -> dict[str, str]:
        """The deal label of every match with a result (what the ratings read)."""
        return {str(row[0]): str(row[1]) for row in self.db.execute(
            "SELECT match_id, chance FROM matches WHERE status = 'done'")}

