"""A league store written before the stores shared one results module
(``stores_before/league.sql.gz``: its SQL dump, from the code at commit d02d610) opens,
reads the same results, and records more: the ladder match it left running, and the final's
next match."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

from arena.league.results import MatchRecord, SeatResult
from arena.server.store import LeagueStore, Result

DUMP = Path(__file__).parent / "stores_before" / "league.sql.gz"
FAULT = {"kind": "timeout", "reason": "no answer in 1.0 s"}


def result(match_id: str, seat: int, version: int, place: int, score: int, won: int,
           strikes: int = 0, disqualified: bool = False, faulted: bool = False) -> Result:
    return Result(seat=seat, place=place, score=score, rounds_won=won, strikes=strikes,
                  disqualified=disqualified, faults=(FAULT,) if faulted else (),
                  match_id=match_id, version_id=version)


RESULTS = [
    result("F0001", 0, 1, 1, 500, 2),
    result("F0001", 1, 2, 2, 40, 1, 1, disqualified=True, faulted=True),
    result("L000001", 0, 1, 1, 500, 2),
    result("L000001", 1, 2, 2, 40, 1),
    result("L000002", 0, 2, 2, 0, 0, 1, faulted=True),
    result("L000002", 1, 3, 1, 500, 2),
]
"""What the code that wrote the store read from it."""


def test_a_league_store_written_before_reads_the_same_and_records_more(tmp_path: Path
                                                                       ) -> None:
    path = tmp_path / "league.sqlite"
    db = sqlite3.connect(path)
    db.executescript(gzip.decompress(DUMP.read_bytes()).decode())
    db.close()
    store = LeagueStore(path)
    try:
        assert store.results() == RESULTS
        assert store.results_of("L000002") == RESULTS[4:]
        assert store.status_counts("ladder") == {"done": 2, "running": 1}
        assert store.status_counts("final") == {"done": 1, "scheduled": 1}
        assert len(store.key("ladder_key")) == len(store.key("final_key")) == 32
        record = MatchRecord("L000003", 2.0, 80, 2, False, "/logs/L000003.jsonl.gz", (
            SeatResult(0, 2, 10, 0, 0, False, ()), SeatResult(1, 1, 500, 2, 0, False, ())),
            "cd" * 32)
        assert store.record(record, [1, 3])
        assert not store.record(record, [1, 3])
        assert store.start_final_match("F0002")
        assert store.record(MatchRecord("F0002", 1.0, 50, 1, True, "/logs/F0002.jsonl.gz", (
            SeatResult(0, 1, 300, 1, 0, False, ()), SeatResult(1, 2, 0, 0, 0, False, ()))),
            [2, 1])
        assert store.results(kind="ladder", after="L000002") == [
            result("L000003", 0, 1, 2, 10, 0), result("L000003", 1, 3, 1, 500, 2)]
        assert store.results(match_id="F0002") == [
            result("F0002", 0, 2, 1, 300, 1), result("F0002", 1, 1, 2, 0, 0)]
        assert store.status_counts("final") == {"done": 2}
        assert store.match("F0002") is not None
    finally:
        store.close()
