"""The season store: a match is recorded once, in one transaction; failures are
retried; a changed bot folder is a new entrant version; rescheduling keeps what is done."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.league import driver
from arena.league import store as store_module
from arena.league.schedule import ScheduledMatch, schedule
from arena.league.store import MatchRecord, SeasonStore, SeatResult
from arena.sandbox.manifest import load_manifest

MATCHES = schedule(3, 2, 2)
"""Six matches: every pair of three entrants twice, seats swapped."""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SeasonStore]:
    opened = SeasonStore(tmp_path / "season" / "season.sqlite")
    yield opened
    opened.close()


def register(store: SeasonStore, names: tuple[str, ...] = ("alpha", "beta", "gamma")
             ) -> list[int]:
    return [store.entrant_id(name, "1.0", f"/bots/{name}", f"hash-{name}", {"name": name})
            for name in names]


def record_of(match: ScheduledMatch, winner_seat: int = 0, seats: int = 2) -> MatchRecord:
    return MatchRecord(
        match_id=match.match_id, seconds=1.5, decisions=120, rounds=3,
        round_limit_reached=False, log_path=f"logs/{match.match_id}.jsonl.gz",
        seats=tuple(SeatResult(seat=seat, place=1 if seat == winner_seat else 2,
                               score=500 if seat == winner_seat else 40, rounds_won=2,
                               strikes=0, disqualified=False, faults=())
                    for seat in range(seats)))


def row(store: SeasonStore, match_id: str) -> dict[str, object]:
    return next(m for m in store.matches() if m["match_id"] == match_id)


def result_rows(store: SeasonStore) -> list[tuple[object, ...]]:
    return store.db.execute("SELECT * FROM results ORDER BY match_id, seat").fetchall()


@pytest.fixture
def scheduled(store: SeasonStore) -> list[int]:
    ids = register(store)
    store.schedule(MATCHES, ids)
    return ids


# -- schedule -----------------------------------------------------------------------------


def test_schedule_records_every_match_with_entrant_ids(store: SeasonStore,
                                                       scheduled: list[int]) -> None:
    assert store.counts() == {"scheduled": 6, "done": 0, "failed": 0}
    assert store.pending() == [m.match_id for m in MATCHES]
    for match in MATCHES:
        assert store.seats_of(match.match_id) == [scheduled[e] for e in match.seats]
        stored = row(store, match.match_id)
        assert (stored["chance"], stored["grp"], stored["deal"]) == (
            match.chance, match.group, match.deal)


def test_scheduling_again_adds_nothing(store: SeasonStore, scheduled: list[int]) -> None:
    before = store.matches()
    store.schedule(MATCHES, scheduled)
    assert store.matches() == before


def test_rescheduling_keeps_the_seats_of_done_matches(store: SeasonStore,
                                                      scheduled: list[int]) -> None:
    done, failed = MATCHES[0], MATCHES[1]
    assert store.record(record_of(done))
    store.record_failure(failed.match_id, "bot crashed")
    before = store.seats_of(done.match_id)
    # alpha's folder changed: a new entrant version replaces it where nothing is recorded.
    new_alpha = store.entrant_id("alpha", "1.1", "/bots/alpha", "hash-alpha-2", {})
    ids = [new_alpha, *scheduled[1:]]
    store.schedule(MATCHES, ids)
    assert store.seats_of(done.match_id) == before
    assert scheduled[0] in before
    for match in MATCHES[1:]:
        assert store.seats_of(match.match_id) == [ids[e] for e in match.seats]
    assert row(store, done.match_id)["status"] == "done"
    assert row(store, failed.match_id)["status"] == "failed", "rescheduling is not a retry"
    # The recorded result still belongs to the version that played it.
    assert {r.entrant_id for r in store.results()} == set(before)


# -- record -------------------------------------------------------------------------------


def test_record_writes_the_match_and_every_seat(store: SeasonStore,
                                                scheduled: list[int]) -> None:
    match = MATCHES[0]
    assert store.record(record_of(match, winner_seat=1)) is True
    stored = row(store, match.match_id)
    assert stored["status"] == "done" and stored["attempts"] == 1 and stored["error"] is None
    assert (stored["seconds"], stored["decisions"], stored["rounds"]) == (1.5, 120, 3)
    assert stored["round_limit_reached"] == 0
    # The log beside the store, by its match (whatever path was recorded: a copied season
    # reads its own logs).
    assert stored["log_path"] == str(store.path.parent / "logs" / f"{match.match_id}.jsonl.gz")
    results = store.results()
    assert [(r.match_id, r.seat, r.entrant_id, r.place, r.score) for r in results] == [
        (match.match_id, 0, scheduled[match.seats[0]], 2, 40),
        (match.match_id, 1, scheduled[match.seats[1]], 1, 500),
    ]
    assert store.counts() == {"scheduled": 5, "done": 1, "failed": 0}
    assert match.match_id not in store.pending()


def test_recording_a_match_twice_returns_false_and_adds_no_row(
        store: SeasonStore, scheduled: list[int]) -> None:
    match = MATCHES[2]
    assert store.record(record_of(match, winner_seat=0)) is True
    matches_before, results_before = store.matches(), result_rows(store)
    # Even a different outcome for the same match is refused: the first one stands.
    assert store.record(record_of(match, winner_seat=1)) is False
    assert store.matches() == matches_before
    assert result_rows(store) == results_before
    assert len(results_before) == 2


def test_record_is_one_transaction(store: SeasonStore, scheduled: list[int]) -> None:
    """A record that fails half-way (here: a seat written twice) leaves no trace at all."""
    match = MATCHES[0]
    good = record_of(match)
    broken = dataclasses.replace(good, seats=(*good.seats, good.seats[0]))
    with pytest.raises(sqlite3.IntegrityError):
        store.record(broken)
    stored = row(store, match.match_id)
    assert stored["status"] == "scheduled" and stored["attempts"] == 0
    assert stored["log_path"] is None
    assert result_rows(store) == []
    # The store is usable afterwards and the match can still be recorded.
    assert store.record(record_of(match)) is True
    assert len(result_rows(store)) == 2


def test_record_of_a_seat_outside_the_table_leaves_no_trace(store: SeasonStore,
                                                            scheduled: list[int]) -> None:
    with pytest.raises(IndexError):
        store.record(record_of(MATCHES[0], seats=3))
    assert row(store, MATCHES[0].match_id)["status"] == "scheduled"
    assert result_rows(store) == []


def test_record_of_an_unscheduled_match_is_refused(store: SeasonStore,
                                                   scheduled: list[int]) -> None:
    stranger = ScheduledMatch("m99999", (0, 1), 1, 0, 0)
    with pytest.raises(KeyError, match="m99999"):
        store.record(record_of(stranger))
    assert result_rows(store) == []


def test_records_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "season.sqlite"
    first = SeasonStore(path)
    first.schedule(MATCHES, register(first))
    first.record(record_of(MATCHES[3]))
    expected = first.results(), first.matches()
    first.close()
    second = SeasonStore(path)
    try:
        assert (second.results(), second.matches()) == expected
    finally:
        second.close()


def test_results_come_in_schedule_order(store: SeasonStore, scheduled: list[int]) -> None:
    for match in reversed(MATCHES):
        store.record(record_of(match))
    assert [(r.match_id, r.seat) for r in store.results()] == [
        (m.match_id, seat) for m in MATCHES for seat in (0, 1)]


# -- failures -----------------------------------------------------------------------------


def test_failure_then_success_leaves_the_match_done(store: SeasonStore,
                                                    scheduled: list[int]) -> None:
    match = MATCHES[1]
    store.record_failure(match.match_id, "worker failed: BrokenProcessPool()")
    stored = row(store, match.match_id)
    assert stored["status"] == "failed" and stored["attempts"] == 1
    assert "BrokenProcessPool" in str(stored["error"])
    assert match.match_id in store.pending(), "failed matches are played again on resume"
    assert store.counts()["failed"] == 1

    assert store.record(record_of(match)) is True
    stored = row(store, match.match_id)
    assert stored["status"] == "done" and stored["error"] is None and stored["attempts"] == 2
    assert store.counts() == {"scheduled": 5, "done": 1, "failed": 0}
    assert len(result_rows(store)) == 2


def test_failure_after_success_changes_nothing(store: SeasonStore,
                                               scheduled: list[int]) -> None:
    match = MATCHES[4]
    store.record(record_of(match))
    before = store.matches()
    store.record_failure(match.match_id, "too late")
    assert store.matches() == before


def test_long_errors_are_truncated(store: SeasonStore, scheduled: list[int]) -> None:
    store.record_failure(MATCHES[0].match_id, "x" * 10_000)
    assert len(str(row(store, MATCHES[0].match_id)["error"])) == 2000


# -- entrants -----------------------------------------------------------------------------


def test_a_changed_bot_folder_is_a_new_entrant_version(store: SeasonStore,
                                                       tmp_path: Path) -> None:
    folder = tmp_path / "bots" / "alpha"
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text('name = "alpha"\nversion = "1.0"\nlanguage = "python"\n'
                                     'run = ["python3", "bot.py"]\n')
    (folder / "bot.py").write_text("print('v1')\n")

    def current_id() -> int:
        bot = load_manifest(folder)
        return store.entrant_id(bot.name, bot.version, str(bot.folder), bot.content_hash(),
                                {"name": bot.name})

    first = current_id()
    assert current_id() == first, "the same folder contents: the same entrant"
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0cache")
    assert current_id() == first, "byte-code caches are not part of the bot"

    (folder / "bot.py").write_text("print('v2')\n")
    second = current_id()
    assert second != first
    (folder / "bot.py").write_text("print('v1')\n")
    assert current_id() == first, "back to the old contents: the old entrant"

    entrants = store.entrants()
    assert [e["id"] for e in entrants] == [first, second]
    assert entrants[0]["hash"] != entrants[1]["hash"]
    assert {e["folder"] for e in entrants} == {str(folder.resolve())}


def test_the_same_contents_in_another_folder_is_another_entrant(store: SeasonStore) -> None:
    one = store.entrant_id("alpha", "1.0", "/bots/one", "same-hash", {})
    two = store.entrant_id("alpha", "1.0", "/bots/two", "same-hash", {})
    assert one != two


def test_meta_values(store: SeasonStore) -> None:
    assert store.meta("fingerprint") is None
    store.set_meta("fingerprint", "abc")
    store.set_meta("fingerprint", "def")
    assert store.meta("fingerprint") == "def"


# -- older stores and damage ----------------------------------------------------------------

OLD_MATCHES = """CREATE TABLE matches (
    match_id TEXT PRIMARY KEY, chance TEXT NOT NULL, grp INTEGER NOT NULL,
    deal INTEGER NOT NULL, seats TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'scheduled',
    error TEXT, attempts INTEGER NOT NULL DEFAULT 0, finished_at REAL, seconds REAL,
    decisions INTEGER, rounds INTEGER, round_limit_reached INTEGER, log_path TEXT)"""


def old_store(path: Path, matches: str = OLD_MATCHES, chance: str = "'m00001'") -> None:
    """A store as an older version wrote it: no log hash column."""
    from arena.league.store import SCHEMA

    db = sqlite3.connect(path)
    db.executescript(SCHEMA.replace("CREATE TABLE IF NOT EXISTS matches", "CREATE TABLE unused"))
    db.execute(matches)
    column = "chance" if "chance TEXT" in matches else "seed"
    db.execute(f"INSERT INTO matches (match_id, {column}, grp, deal, seats, status, log_path) "
               f"VALUES ('m00001', {chance}, 0, 0, '[1, 2]', 'done', 'logs/m00001.jsonl.gz')")
    db.commit()
    db.close()


def test_a_store_of_public_seeds_is_refused(tmp_path: Path) -> None:
    """Stores from before the season key dealt from public seeds: their seasons cannot go
    on under a key, and nothing pretends they can."""
    from arena.league.store import StoreError

    path = tmp_path / "season.sqlite"
    old_store(path, OLD_MATCHES.replace("chance TEXT NOT NULL", "seed INTEGER NOT NULL"), "7")
    for read_only in (True, False):
        with pytest.raises(StoreError, match="whose deals came from public seeds"):
            SeasonStore(path, read_only=read_only)


def test_an_older_store_is_read_as_it_is_and_migrated_by_a_run(tmp_path: Path) -> None:
    path = tmp_path / "season.sqlite"
    old_store(path)
    reader = SeasonStore(path, read_only=True)
    try:
        assert reader.matches()[0]["log_sha256"] is None  # read without changing it
    finally:
        reader.close()
    columns = [row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(matches)")]
    assert "log_sha256" not in columns
    writer = SeasonStore(path)
    try:
        assert writer.matches()[0]["log_sha256"] is None
        writer.db.execute("UPDATE matches SET log_sha256 = 'abc' WHERE match_id = 'm00001'")
        assert writer.matches()[0]["log_sha256"] == "abc"
    finally:
        writer.close()


def test_a_recorded_log_hash_is_kept(store: SeasonStore, scheduled: list[int]) -> None:
    store.record(dataclasses.replace(record_of(MATCHES[0]), log_sha256="f" * 64))
    assert row(store, MATCHES[0].match_id)["log_sha256"] == "f" * 64


@pytest.mark.parametrize(("content", "said"), [
    (b"", r"the season store is empty \(0 bytes\)"),
    (b"not a database at all" * 100, "not a season store"),
], ids=["empty", "garbage"])
def test_a_damaged_store_is_refused_and_left_alone(tmp_path: Path, content: bytes,
                                                   said: str) -> None:
    from arena.league.store import StoreError

    path = tmp_path / "season.sqlite"
    path.write_bytes(content)
    for read_only in (False, True):
        with pytest.raises(StoreError, match=said) as raised:
            SeasonStore(path, read_only=read_only)
        assert str(path) in str(raised.value)
    assert path.read_bytes() == content


def test_another_sqlite_database_is_not_a_season_store(tmp_path: Path) -> None:
    from arena.league.store import StoreError

    path = tmp_path / "season.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE other (x)").connection.close()
    with pytest.raises(StoreError, match="not a season store"):
        SeasonStore(path)
    assert [r[0] for r in sqlite3.connect(path).execute(
        "SELECT name FROM sqlite_master")] == ["other"]


def test_a_reader_never_creates_a_store(tmp_path: Path) -> None:
    from arena.league.store import StoreMissing

    with pytest.raises(StoreMissing):
        SeasonStore(tmp_path / "runs" / "season.sqlite", read_only=True)
    assert not (tmp_path / "runs").exists()


def test_a_new_store_is_created_whole(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "season.sqlite"
    SeasonStore(path).close()
    assert sorted(p.name for p in path.parent.iterdir()) == ["season.sqlite"]


# -- what is left to play ------------------------------------------------------------------


def test_pending_matches_are_read_a_chunk_at_a_time_in_schedule_order(
        store: SeasonStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A resumed run reads what is left chunk by chunk (no set of every match id):
    done matches straddle the chunks' and the store queries' edges, a failed one is played
    again, and the order is the schedule's."""
    monkeypatch.setattr(driver, "PENDING_CHUNK", 7)
    monkeypatch.setattr(store_module, "SQL_VARIABLES", 3)
    matches = schedule(6, 2, 2)  # 30 matches
    ids = register(store, tuple(f"bot{i}" for i in range(6)))
    store.schedule(matches, ids)
    done = {0, 1, 6, 7, 13, 14, 20, 29}
    for index in done:
        store.record(record_of(matches[index]))
    store.record_failure(matches[21].match_id, "crashed")
    queries: list[int] = []
    pending_among = store.pending_among

    def counted(match_ids: list[str]) -> set[str]:
        queries.append(len(match_ids))
        return pending_among(match_ids)

    monkeypatch.setattr(store, "pending_among", counted)
    left = list(driver.pending_matches(store, iter(matches)))
    assert left == [m for i, m in enumerate(matches) if i not in done]
    assert queries == [7, 7, 7, 7, 2]
    assert driver.entrants_to_play(driver.pending_matches(store, matches), 6) == set(range(6))
