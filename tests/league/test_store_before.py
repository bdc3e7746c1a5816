"""A season store written before the stores shared one results module
(``stores_before/season.sql.gz``: its SQL dump, from the code at commit d02d610) opens as it
is for readers, and for a run, which reads the same results and records more in it."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

from arena.league.store import MatchRecord, SeasonStore, SeatResult, StoredResult

DUMP = Path(__file__).parent / "stores_before" / "season.sql.gz"
FAULT = {"kind": "timeout", "reason": "no answer in 1.0 s"}
RESULTS = [
    StoredResult("m00001", 1, 0, 1, 500, 2, 0, False, ()),
    StoredResult("m00001", 2, 1, 2, 40, 1, 0, False, ()),
    StoredResult("m00002", 2, 0, 2, 0, 0, 1, False, (FAULT,)),
    StoredResult("m00002", 3, 1, 1, 500, 2, 0, False, ()),
    StoredResult("m00003", 3, 0, 1, 500, 2, 0, False, ()),
    StoredResult("m00003", 1, 1, 2, 40, 1, 1, True, (FAULT,)),
]
"""What the code that wrote the store read from it."""


def store_before(tmp_path: Path) -> Path:
    path = tmp_path / "season.sqlite"
    db = sqlite3.connect(path)
    db.executescript(gzip.decompress(DUMP.read_bytes()).decode())
    db.close()
    return path


def test_a_reader_reads_the_results_written_before(tmp_path: Path) -> None:
    path = store_before(tmp_path)
    dumped = path.read_bytes()
    reader = SeasonStore(path, read_only=True)
    try:
        assert reader.results() == RESULTS
        assert reader.counts() == {"scheduled": 2, "done": 3, "failed": 1}
        assert [(m["match_id"], m["status"], m["log_sha256"]) for m in reader.matches()][:4] == [
            ("m00001", "done", "ab" * 32), ("m00002", "done", "ab" * 32),
            ("m00003", "done", "ab" * 32), ("m00004", "failed", None)]
        assert reader.settings() == {"table_size": 2}
    finally:
        reader.close()
    assert path.read_bytes() == dumped


def test_a_run_records_more_results_in_a_store_written_before(tmp_path: Path) -> None:
    store = SeasonStore(store_before(tmp_path))
    try:
        assert store.results() == RESULTS
        assert store.pending() == ["m00004", "m00005", "m00006"]
        record = MatchRecord("m00004", 2.0, 80, 2, False, "logs/m00004.jsonl.gz", (
            SeatResult(0, 2, 10, 0, 0, False, ()), SeatResult(1, 1, 500, 2, 0, False, ())),
            "cd" * 32)
        assert store.record(record)
        assert not store.record(record)
        assert store.results() == [*RESULTS,
                                   StoredResult("m00004", 2, 0, 2, 10, 0, 0, False, ()),
                                   StoredResult("m00004", 1, 1, 1, 500, 2, 0, False, ())]
        played = next(m for m in store.matches() if m["match_id"] == "m00004")
        assert (played["status"], played["error"], played["attempts"]) == ("done", None, 2)
    finally:
        store.close()
