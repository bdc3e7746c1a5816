"""A played match's result, as both stores keep it: the match's row marked done with what
the match was (its length, its log and the log's SHA-256, so a log edited afterwards is
noticed), and a row a seat in the ``results`` table, written in one transaction: a match is
recorded whole or not at all."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass


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
    """What a finished match leaves in a store."""

    match_id: str
    seconds: float
    decisions: int
    rounds: int
    round_limit_reached: bool
    log_path: str
    seats: tuple[SeatResult, ...]
    log_sha256: str | None = None
    """SHA-256 of the log file's bytes (the report checks the log against it)."""


RESULT_COLUMNS = """finished_at REAL,
    seconds REAL,
    decisions INTEGER,
    rounds INTEGER,
    round_limit_reached INTEGER,
    log_path TEXT,
    log_sha256 TEXT"""
"""The columns of a ``matches`` row that ``record_result`` writes (``log_sha256``: of the
log file's bytes as recorded; NULL in a season store's matches recorded without it)."""


def results_table(player: str, players: str) -> str:
    """The schema of the ``results`` table, a row a seat of a played match: ``player``
    names its column of the seat's player, an id of the table ``players`` (a season's
    entrants, a league's versions)."""
    return f"""CREATE TABLE IF NOT EXISTS results (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL,
    {player} INTEGER NOT NULL REFERENCES {players}(id),
    place INTEGER NOT NULL,
    score INTEGER NOT NULL,
    rounds_won INTEGER NOT NULL,
    strikes INTEGER NOT NULL,
    disqualified INTEGER NOT NULL,
    faults TEXT NOT NULL,            -- JSON list of {{kind, reason}}
    PRIMARY KEY (match_id, seat)
);
"""


def record_result(db: sqlite3.Connection, record: MatchRecord, players: Sequence[int],
                  over: Sequence[str]) -> bool:
    """In the transaction open on ``db``: the match ``record.match_id`` marked done with
    its result, if its status is one of ``over``, and a results row for each seat
    (``players``: the player at each seat). False, and nothing written, if the match is in
    no such status: only a match still to be counted is counted."""
    changed = db.execute(
        "UPDATE matches SET status = 'done', finished_at = ?, seconds = ?, decisions = ?, "
        "rounds = ?, round_limit_reached = ?, log_path = ?, log_sha256 = ? "
        f"WHERE match_id = ? AND status IN ({', '.join('?' * len(over))})",
        (time.time(), record.seconds, record.decisions, record.rounds,
         int(record.round_limit_reached), record.log_path, record.log_sha256,
         record.match_id, *over)).rowcount
    if changed != 1:
        return False
    db.executemany(
        "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(record.match_id, s.seat, players[s.seat], s.place, s.score, s.rounds_won,
          s.strikes, int(s.disqualified), json.dumps(list(s.faults))) for s in record.seats])
    return True
