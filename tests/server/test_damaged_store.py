"""A league store damaged inside a whole database (a value of another type, JSON that does
not parse or of another shape, a seat naming no version, a missing key): every read says
which row and column, as a StoreError naming the file and what to do; the server answers
503 without its paths, says what is wrong once in its log, and answers again once the
value is repaired, with no restart."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from league_servers import Server, free_port, sample_versions, write_league

from arena.league.store import MatchRecord, SeatResult, StoreError
from arena.server.config import load_league
from arena.server.store import LeagueStore

FIRST_RESULT = "(SELECT min(rowid) FROM results)"


def _played(store: LeagueStore) -> str:
    """Two authors' sample bots, one match recorded (its loser struck once)."""
    seats = sample_versions(store)
    match_id = store.start_ladder_match(seats)
    fault: dict[str, object] = {"kind": "timeout", "reason": "no answer"}
    assert store.record(MatchRecord(match_id, 1.0, 10, 1, False, "/nowhere.jsonl.gz", (
        SeatResult(0, 1, 100, 1, 0, False, ()),
        SeatResult(1, 2, 0, 0, 1, False, (fault,))), "0" * 64), seats)
    return match_id


def _matches(store: LeagueStore) -> object:
    return store.matches()


def _results(store: LeagueStore) -> object:
    return store.results()


DAMAGES: list[tuple[str, str, Callable[[LeagueStore], Any], str]] = [
    ("seats that are not JSON", "UPDATE matches SET seats = 'garbage'", _matches,
     "match 'L000001': its seats are not JSON"),
    ("seats an object", """UPDATE matches SET seats = '{"a": 1}'""", _matches,
     "match 'L000001': its seats are not a JSON list of version ids"),
    ("seats nested past the parser", f"UPDATE matches SET seats = '{'[' * 100_000}'",
     _matches, "its seats are not JSON (nested deeper than the parser goes"),
    ("seats of booleans", "UPDATE matches SET seats = '[true, false]'", _matches,
     "not a JSON list of version ids"),
    ("no seats", "UPDATE matches SET seats = '[]'", _matches,
     "not a JSON list of version ids"),
    ("a seat naming no version", "UPDATE matches SET seats = '[1, 999]'", _matches,
     "match 'L000001' seats version 999, which the store does not hold"),
    ("seconds as text", "UPDATE matches SET seconds = 'abc'", _matches,
     "match 'L000001': its seconds is 'abc', not a number or NULL"),
    ("a score as text", f"UPDATE results SET score = 'abc' WHERE rowid = {FIRST_RESULT}",
     _results, "match 'L000001', seat 0: its score is 'abc', not an integer"),
    ("faults that are not JSON", "UPDATE results SET faults = '[{' WHERE seat = 1",
     _results, "match 'L000001', seat 1: its faults are not JSON"),
    ("faults of numbers", "UPDATE results SET faults = '[1, 2]' WHERE seat = 1", _results,
     "match 'L000001', seat 1: its faults are not a JSON list of objects"),
    ("a label as bytes", "UPDATE versions SET label = X'00ff' WHERE id = 1",
     lambda store: store.versions(), "version 1: its label is b'\\x00\\xff', not text"),
    ("a reason as bytes", "UPDATE bots SET reason = X'05' WHERE id = 2",
     lambda store: store.bots(), "bot 2: its reason is b'\\x05', not text or NULL"),
    ("a key that is not hex", "UPDATE meta SET value = 'zz' WHERE key = 'ladder_key'",
     lambda store: store.key("ladder_key"), "the ladder_key is not 32 bytes in hex"),
    ("a short key", "UPDATE meta SET value = 'abcd' WHERE key = 'ladder_key'",
     lambda store: store.key("ladder_key"), "the ladder_key is not 32 bytes in hex"),
    ("no key", "DELETE FROM meta WHERE key = 'ladder_key'",
     lambda store: store.key("ladder_key"), "the ladder_key is missing"),
    ("a setting as bytes", "UPDATE meta SET value = X'07' WHERE key = 'phase'",
     lambda store: store.meta("phase"), "the setting 'phase' is b'\\x07', not text"),
]


@pytest.mark.parametrize(("damage", "sql", "read", "said"), DAMAGES,
                         ids=[d[0] for d in DAMAGES])
def test_a_damaged_value_is_named_by_the_read_that_meets_it(
        tmp_path: Path, damage: str, sql: str, read: Callable[[LeagueStore], Any],
        said: str) -> None:
    path = load_league(write_league(tmp_path)).store_path
    with contextlib.closing(LeagueStore(path)) as store:
        _played(store)
        read(store)  # whole, it reads
        store.db.execute(sql)
        with pytest.raises(StoreError) as raised:
            read(store)
    message = str(raised.value)
    assert message.startswith(f"{path}: the league store is damaged")
    assert said in message, message
    assert "restore it from a backup" in message


def test_the_server_answers_503_says_why_once_and_recovers_once_repaired(
        tmp_path: Path) -> None:
    server = Server(write_league(tmp_path / "league"), free_port())
    server.data.mkdir(parents=True)
    store_path = server.data / "league.sqlite"
    with contextlib.closing(LeagueStore(store_path)) as store:
        _played(store)
    server.start()
    try:
        server.add_author("carol")
        db = sqlite3.connect(store_path, isolation_level=None)
        db.execute("UPDATE results SET faults = '[1, 2]' WHERE seat = 1")
        with server.client("carol") as client:
            for _ in range(3):
                api = client.get("/api/matches")
                assert api.status_code == 503
                assert "the league's store cannot be read" in api.json()["error"]
                page = client.get("/matches")
                assert page.status_code == 503 and "cannot be read" in page.text
                assert str(tmp_path) not in api.text + page.text  # no server paths shown
            db.execute("""UPDATE results SET faults = '[{"kind": "timeout"}]' WHERE seat = 1""")
            assert client.get("/api/matches").status_code == 200
            assert client.get("/matches").status_code == 200
        db.close()
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=30)
        server.process = None
    finally:
        server.stop()
    said = "match 'L000001', seat 1: its faults are not a JSON list of objects"
    log = server.log.read_text()
    requests = [line for line in log.splitlines() if "cannot be answered" in line]
    assert len(requests) == 1 and said in requests[0] and str(store_path) in requests[0]
