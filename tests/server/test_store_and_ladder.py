"""The league store, the matchmaker, the phases and the league file, without a server."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import errno
import random
import shutil
import sqlite3
import stat
import threading
import time
from pathlib import Path

import pytest
from league_servers import ROOT, write_league

from arena.league.store import MatchRecord, SeatResult, StoreError
from arena.rating.outcome import Outcome
from arena.rating.trueskill_ratings import MU, Standing, rate_season
from arena.server import ladder
from arena.server.config import League, LeagueError, load_league
from arena.server.store import FINAL_ATTEMPTS, Conflict, LeagueStore, Result


def _record(match_id: str, winner: int) -> MatchRecord:
    return MatchRecord(match_id, 1.0, 10, 1, False, f"/logs/{match_id}", tuple(
        SeatResult(seat, 1 if seat == winner else 2, 100 if seat == winner else 0,
                   int(seat == winner), 0, False, ()) for seat in range(2)), "0" * 64)


def _version(store: LeagueStore, author: int, bot: str, active: bool = True,
             keep: int = 1) -> int:
    version = store.add_version(author, bot, "1.0", f"hash-{bot}", "sha", f"/bots/{bot}", 5)
    if active:
        store.activate(version.id, keep)
    return version.id


def _author(store: LeagueStore, name: str) -> int:
    token = store.add_author(name)
    found = store.authenticate(token)
    assert found is not None
    return found.id


# -- the store ----------------------------------------------------------------------------


def test_tokens_are_kept_hashed_and_checked(store: LeagueStore, league: League) -> None:
    token = store.add_author("alice")
    found = store.authenticate(token)
    assert found is not None and found.name == "alice"
    number, secret = token.split(".")
    assert store.authenticate(f"{number}.{secret[:-1]}x") is None
    assert store.authenticate(f"99.{secret}") is None
    assert store.authenticate("garbage") is None
    assert secret.encode() not in league.store_path.read_bytes()
    assert stat.S_IMODE(league.store_path.stat().st_mode) == 0o600
    with pytest.raises(Conflict):
        store.add_author("alice")


def test_a_result_counts_once_and_only_over_a_running_match(store: LeagueStore) -> None:
    alice, bob = _author(store, "alice"), _author(store, "bob")
    seats = (_version(store, alice, "a"), _version(store, bob, "b"))
    match_id = store.start_ladder_match(seats)
    assert store.record(_record(match_id, 0), seats)
    assert not store.record(_record(match_id, 1), seats)  # a second result: refused
    assert [r.place for r in store.results_of(match_id)] == [1, 2]
    killed = store.start_ladder_match(seats)
    assert store.recover()["discarded"] == 1
    assert store.match(killed).status == "discarded"  # type: ignore[union-attr]
    assert not store.record(_record(killed, 0), seats)  # a late result of a discarded one
    assert store.results_of(killed) == []


def test_recover_requeues_validation_and_replays_final_matches(store: LeagueStore) -> None:
    alice, bob = _author(store, "alice"), _author(store, "bob")
    first = _version(store, alice, "a", active=False)
    second = _version(store, bob, "b", active=False)
    store.set_status(first, "building")
    store.set_status(second, "checking")
    store.schedule_final([("final-m1", "final/g1", (first, second), 0, 0, 1)], b"k" * 32)
    assert store.start_final_match("final-m1")
    assert not store.start_final_match("final-m1")  # never started twice
    assert store.recover() == {"discarded": 0, "rescheduled": 1, "requeued": 2}
    assert store.match("final-m1").status == "scheduled"  # type: ignore[union-attr]
    assert {store.version(v).status for v in (first, second)} == {"queued"}  # type: ignore[union-attr]


def test_a_final_match_the_host_fails_is_tried_again(store: LeagueStore) -> None:
    """A final match lost to the host's trouble (a worker killed) must not be lost for good,
    nor the final, complete without it, publish its key: it is scheduled
    again, up to FINAL_ATTEMPTS tries; a ladder match's failure stays one."""
    alice, bob = _author(store, "alice"), _author(store, "bob")
    a, b = _version(store, alice, "a"), _version(store, bob, "b")
    store.schedule_final([("final-m1", "final/g1", (a, b), 0, 0, 1)], b"k" * 32)
    for attempt in range(1, FINAL_ATTEMPTS):
        assert store.start_final_match("final-m1")
        store.record_failure("final-m1", "worker failed: killed")
        match = store.match("final-m1")
        assert match is not None and match.status == "scheduled", attempt
    assert store.start_final_match("final-m1")
    store.record_failure("final-m1", "worker failed: killed")
    match = store.match("final-m1")
    assert match is not None and match.status == "failed"
    ladder_match = store.start_ladder_match((a, b))
    store.record_failure(ladder_match, "worker failed: killed")
    assert store.match(ladder_match).status == "failed"  # type: ignore[union-attr]
    store.record_failure(ladder_match, "again")  # not running: nothing changes
    assert store.match(ladder_match).error == "worker failed: killed"  # type: ignore[union-attr]


def test_a_final_with_a_failed_match_publishes_no_key_until_the_organiser_decides(
        store: LeagueStore, league: League, capsys: pytest.CaptureFixture[str]) -> None:
    from arena.cli import main
    from arena.server.service import LeagueService

    alice, bob = _author(store, "alice"), _author(store, "bob")
    a, b = _version(store, alice, "a"), _version(store, bob, "b")
    store.schedule_final([("final-m1", "final/g1", (a, b), 0, 0, 1),
                          ("final-m2", "final/g2", (b, a), 0, 0, 1)], b"k" * 32)
    assert store.start_final_match("final-m2")
    store.record(_record("final-m2", 0), (b, a))
    for _ in range(FINAL_ATTEMPTS):
        assert store.start_final_match("final-m1")
        store.record_failure("final-m1", "worker failed: killed")
    service = LeagueService(league)
    assert service._final_jobs(store, 2) == []
    assert store.meta("final_complete") is None and store.meta("final_key_revealed") is None
    assert "1 final match(es) failed" in (store.meta("final_note") or "")
    league_file = ["--league", str(league.path)]
    assert main(["server", "final", "retry", *league_file]) == 0
    assert "1 failed final match(es) scheduled again" in capsys.readouterr().out
    assert store.match("final-m1").status == "scheduled"  # type: ignore[union-attr]
    for _ in range(FINAL_ATTEMPTS):  # fresh tries, all failed again
        assert store.start_final_match("final-m1")
        store.record_failure("final-m1", "worker failed: killed")
    assert store.match("final-m1").status == "failed"  # type: ignore[union-attr]
    assert service._final_jobs(store, 2) == [] and store.meta("final_complete") is None
    assert main(["server", "final", "close", *league_file]) == 0
    assert service._final_jobs(store, 2) == []
    assert store.meta("final_complete") is not None
    assert store.meta("final_key_revealed")
    assert main(["server", "final", "again", *league_file]) == 2


def test_the_build_of_a_version_that_failed_its_check_is_removed(
        store: LeagueStore, league: League) -> None:
    """The 512 MB a build leaves would stay for good when its bot then fails its check; a
    build another version plays from stays."""
    from arena.server.validating import Validators

    builds = league.data / "builds"
    failed, shared = builds / ("a" * 64), builds / ("b" * 64)
    for folder in (failed, shared):
        (folder / "out").mkdir(parents=True)
        folder.with_name(f"{folder.name}.sha256").write_text("x\n")
    version = _version(store, _author(store, "alice"), "a")
    with store.transaction() as db:
        db.execute("UPDATE versions SET play_folder = ? WHERE id = ?", (str(shared), version))
    sources = league.data / "bots" / ("c" * 64)
    sources.mkdir(parents=True)
    validators = Validators(league, threading.Event(), lambda loop: None)
    for folder in (failed, shared, sources):
        validators._drop_build(store, folder)
    assert not failed.exists() and not (builds / f"{'a' * 64}.sha256").exists()
    assert shared.is_dir() and sources.is_dir()


def test_an_upload_a_killed_server_was_taking_is_settled_at_start(store: LeagueStore
                                                                  ) -> None:
    """Its row would stay ``receiving`` for good; one still arriving (younger than
    ABANDONED_SECONDS) is left to finish."""
    from arena.server.uploads import ABANDONED_SECONDS

    author = _author(store, "alice")
    old = store.reserve_upload(author, 0.0, 10)
    new = store.reserve_upload(author, 0.0, 10)
    with store.transaction() as db:
        db.execute("UPDATE uploads SET at = ? WHERE id = ?",
                   (time.time() - ABANDONED_SECONDS - 60, old))
    store.recover()
    outcomes = dict(store.db.execute("SELECT id, outcome FROM uploads").fetchall())
    assert outcomes[old] == "refused: the server stopped while taking it"
    assert outcomes[new] == "receiving"


def test_versions_retire_names_belong_to_authors(store: LeagueStore) -> None:
    alice, bob = _author(store, "alice"), _author(store, "bob")
    one = _version(store, alice, "a")
    two = _version(store, alice, "a")
    assert [(v.number, v.status) for v in store.versions()] == [(1, "retired"), (2, "active")]
    assert store.version(two).predecessor == one  # type: ignore[union-attr]
    three = _version(store, alice, "a", keep=2)
    assert [v.status for v in store.versions()] == ["retired", "active", "active"]
    assert store.version(three).number == 3  # type: ignore[union-attr]
    with pytest.raises(Conflict, match="another author"):
        store.add_version(bob, "a", "1", "h", "s", "/f", 5)
    # A name differing in case only would read as the other bot in every list.
    for author in (bob, alice):
        with pytest.raises(Conflict, match="'A' reads like the bot 'a'"):
            store.add_version(author, "A", "1", "h", "s", "/f", 5)
    for name in "bcd":
        store.add_version(bob, name, "1", "h", "s", "/f", 3)
    with pytest.raises(Conflict, match="max_bots_per_author"):
        store.add_version(bob, "e", "1", "h", "s", "/f", 3)


def test_organiser_actions_keep_results(store: LeagueStore) -> None:
    alice, bob = _author(store, "alice"), _author(store, "bob")
    seats = (_version(store, alice, "a"), _version(store, bob, "b"))
    store.record(_record(store.start_ladder_match(seats), 0), seats)
    store.act("a", "disqualify", "shared code with b")
    bot = store.bot("a")
    assert bot is not None and (bot.state, bot.reason) == ("disqualified",
                                                           "shared code with b")
    assert len(store.results()) == 2
    store.act("a", "readmit")
    store.act("b", "withdraw")
    assert [(a["bot"], a["action"]) for a in store.actions()] == [
        ("a", "disqualify"), ("a", "readmit"), ("b", "withdraw")]
    with pytest.raises(Conflict):
        store.act("a", "readmit")
    with pytest.raises(Conflict):
        store.act("nobody", "withdraw")


def test_uploads_sent_at_once_are_counted_as_they_arrive(store: LeagueStore,
                                                        league: League) -> None:
    """Twenty uploads sent at once would each pass an hourly limit checked before any of
    them is recorded. Reserving a place is one transaction: three of twenty
    threads get one."""
    alice = _author(store, "alice")
    stores = [LeagueStore(league.store_path) for _ in range(20)]  # a connection a thread
    start = threading.Barrier(20)

    def reserve(mine: LeagueStore) -> int | None:
        start.wait()
        return mine.reserve_upload(alice, time.time() - 3600, 3)

    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        got = list(pool.map(reserve, stores))
    assert sum(upload is not None for upload in got) == 3
    assert store.uploads_since(alice, time.time() - 3600) == 3
    placed = [upload for upload in got if upload is not None]
    store.settle_upload(placed[0], "refused: a test")
    assert store.db.execute("SELECT outcome FROM uploads WHERE id = ?",
                            (placed[0],)).fetchone() == ("refused: a test",)
    version = store.add_version(alice, "a", "1", "h", "s", "/bots/a", 5, placed[1])
    assert store.db.execute("SELECT outcome FROM uploads WHERE id = ?",
                            (placed[1],)).fetchone() == (f"version {version.id}",)
    assert store.uploads_since(alice, time.time() - 3600) == 3  # named, not counted again


@pytest.mark.parametrize("name", ["", " ", "a\nb", "right\u202eleft", "x" * 41, "-bob",
                                  "bob ", "<b>"])
def test_an_author_name_pages_cannot_show_as_it_is_is_refused(store: LeagueStore,
                                                              name: str) -> None:
    """Empty, blank, a newline, a right-to-left override, 100 kB."""
    with pytest.raises(Conflict, match="an author's name is 1 to 40 letters"):
        store.add_author(name)


def test_what_authors_read_of_a_build_names_no_server_path(league: League) -> None:
    """A refused ``runtimes`` entry would otherwise put the data folder's path in the check
    report."""
    from arena.server.validating import Validators

    shown = Validators(league, threading.Event(), lambda loop: None).shown(
        f"refused {league.data}/bots/abc/x: no such runtime (in {league.data.resolve()}"
        "/builds)")
    assert shown == "refused <league data>/bots/abc/x: no such runtime (in <league " \
        "data>/builds)"
    assert str(league.data) not in shown


def test_a_disqualified_bot_takes_no_new_version(store: LeagueStore) -> None:
    """Its new versions would be validated, then never played."""
    alice = _author(store, "alice")
    _version(store, alice, "a")
    store.act("a", "disqualify", "it read the other bots' files")
    with pytest.raises(Conflict, match=r"the bot 'a' is disqualified \(it read the other "
                                       r"bots' files\): it takes no new versions"):
        store.add_version(alice, "a", "2", "h2", "s", "/bots/a2", 5)
    store.act("a", "readmit")
    assert store.add_version(alice, "a", "2", "h2", "s", "/bots/a2", 5).number == 2


def test_a_damaged_store_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(Exception, match="empty"):
        LeagueStore(empty)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE x (y)").connection.commit()
    with pytest.raises(Exception, match="not a league store"):
        LeagueStore(other)


def test_a_store_made_before_the_indexes_gains_them(league: League) -> None:
    """Stores of earlier versions had no index on the matches' state nor on the versions'
    columns but their logs: opened, they get them (the ladder's counts and every page's
    versions read them rather than the whole table)."""
    LeagueStore(league.store_path).close()
    with sqlite3.connect(league.store_path) as db:
        db.execute("DROP INDEX matches_by_state")
        db.execute("DROP INDEX matches_by_kind")
        db.execute("DROP INDEX versions_without_logs")
    store = LeagueStore(league.store_path)
    plan = store.db.execute("EXPLAIN QUERY PLAN SELECT COUNT(*) FROM matches WHERE kind = "
                            "'ladder' AND status = 'running'").fetchall()
    assert "matches_by_state" in str(plan)
    assert {row[0] for row in store.db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index'")} >= {
        "matches_by_state", "matches_by_kind", "versions_without_logs"}


def test_versions_are_read_without_their_logs_unless_asked(store: LeagueStore) -> None:
    """Every page reads the versions; their logs (up to ~100 KB each) only what shows
    them: a version's own page and its author's API."""
    alice = _author(store, "alice")
    ids = [_version(store, alice, bot) for bot in ("a", "b")]
    store.set_status(ids[0], "failed", build_log="x" * 100_000, check_report="FAIL y")
    listed = store.versions()
    assert [(v.build_log, v.check_report) for v in listed] == [(None, None), (None, None)]
    assert [v.id for v in listed] == ids and listed[0].status == "failed"
    own = store.version(ids[0])
    assert own is not None and own.build_log == "x" * 100_000 and own.check_report == "FAIL y"
    assert [v.build_log for v in store.versions(logs=True)] == ["x" * 100_000, ""]
    query = store.db.execute("EXPLAIN QUERY PLAN SELECT v.id, v.status, v.predecessor FROM "
                             "versions v ORDER BY v.bot_id, v.number").fetchall()
    assert "COVERING INDEX versions_without_logs" in str(query)
    store.db.execute("UPDATE versions SET check_report = X'00ff' WHERE id = ?", (ids[1],))
    with pytest.raises(StoreError, match=f"version {ids[1]}: its build log or check report "
                                         "is not text"):
        store.versions(logs=True)


# -- the matchmaker -----------------------------------------------------------------------


def test_new_versions_place_first_and_authors_never_meet_themselves(
        store: LeagueStore, league: League) -> None:
    alice, bob, carol = (_author(store, n) for n in ("alice", "bob", "carol"))
    a1, a2 = _version(store, alice, "a1"), _version(store, alice, "a2")
    b = _version(store, bob, "b")
    for _ in range(3):
        seats = (a1, b)
        store.record(_record(store.start_ladder_match(seats), 0), seats)
    c = _version(store, carol, "c")  # new: its placement matches come first
    board = ladder.ladder_ratings(store, league)
    tables = ladder.pick_tables(store, league, board, slots=2, salt=1)
    assert c in tables[0]
    for table in tables:
        authors = [store.version(v).author_id for v in table]  # type: ignore[union-attr]
        assert len(set(authors)) == len(authors)
    used = [v for table in tables for v in table]
    assert len(used) == len(set(used))  # a version plays one match at a time
    assert {a2, b} & set(tables[0]) or {a2, b} & set(tables[1])


def test_running_matches_and_withdrawn_bots_limit_the_tables(
        store: LeagueStore, league: League) -> None:
    alice, bob, carol = (_author(store, n) for n in ("alice", "bob", "carol"))
    a, b, c = _version(store, alice, "a"), _version(store, bob, "b"), _version(store, carol, "c")
    store.start_ladder_match((a, b))
    board = ladder.ladder_ratings(store, league)
    assert ladder.pick_tables(store, league, board, slots=2, salt=0) == []  # c alone is free
    store.recover()
    store.act("c", "withdraw")
    assert [set(t) for t in ladder.pick_tables(store, league, board, 2, 0)] == [{a, b}]
    del c


def test_new_version_rating_policies(store: LeagueStore, tmp_path: Path) -> None:
    alice, bob = _author(store, "alice"), _author(store, "bob")
    old, other = _version(store, alice, "a"), _version(store, bob, "b")
    for _ in range(4):
        store.record(_record(store.start_ladder_match((old, other)), 0), (old, other))
    new = _version(store, alice, "a")
    store.record(_record(store.start_ladder_match((new, other)), 0), (new, other))
    fresh = load_league(write_league(tmp_path / "fresh"))
    carried = load_league(write_league(tmp_path / "carry",
                                       ladder='new_version_rating = "carry_mean"'))
    boards = {name: {s.entrant_id: s for s in ladder.ladder_ratings(store, lg).standings}
              for name, lg in (("fresh", fresh), ("carry", carried))}
    old_mu = boards["fresh"][old].mu
    assert old_mu > MU + 3
    # Both won their first match: the fresh one from the prior, the carried one from the
    # old version's mean (each with the prior's uncertainty).
    assert MU < boards["fresh"][new].mu < old_mu
    assert boards["carry"][new].mu > old_mu
    assert boards["carry"][new].sigma == pytest.approx(boards["fresh"][new].sigma, abs=0.5)
    assert boards["fresh"][old].history == boards["carry"][old].history


def test_rate_season_inherit_starts_from_the_predecessors_mean() -> None:
    results = [Outcome("m1", 1, 0, 1), Outcome("m1", 2, 1, 2),
               Outcome("m2", 3, 0, 1), Outcome("m2", 2, 1, 2)]
    plain = {s.entrant_id: s for s in rate_season(results, [1, 2, 3]).standings}
    carried = {s.entrant_id: s for s in rate_season(results, [1, 2, 3],
                                                    inherit={3: 1}).standings}
    assert plain[1].mu == carried[1].mu
    assert carried[3].mu > plain[3].mu  # started at entrant 1's mu, not 25
    assert carried[3].sigma == pytest.approx(plain[3].sigma, abs=0.5)


def _full_replay(store: LeagueStore, league: League) -> list[Standing]:
    """The ladder's ratings as every result rated again (what ``ladder_ratings`` was)."""
    versions = store.versions()
    inherit = ({v.id: v.predecessor for v in versions if v.predecessor is not None}
               if league.ladder.new_version_rating == "carry_mean" else {})
    return list(rate_season(ladder.outcomes(store.results("ladder")),
                            [v.id for v in versions], inherit=inherit).standings)


@pytest.mark.parametrize("policy", ["fresh", "carry_mean"])
def test_the_ladder_rates_each_result_once_and_equals_a_full_replay(
        store: LeagueStore, tmp_path: Path, policy: str) -> None:
    """Matches recorded out of order (two at a time, finishing in any order), failed,
    discarded by a restart; new versions arriving with a predecessor; after each change
    the ladder's ratings (going on from its settled matches) equal, to the last bit, every
    result rated again."""
    league = load_league(write_league(tmp_path / policy,
                                      ladder=f'new_version_rating = "{policy}"'))
    rng = random.Random(policy)
    authors = [_author(store, name) for name in ("alice", "bob", "carol")]
    current = {bot: _version(store, author, bot) for author, bot in zip(
        authors, ("a", "b", "c"), strict=True)}
    running: list[tuple[str, tuple[int, ...]]] = []
    read = replayed = 0
    results = store.results

    def counted(*args: object, **kwargs: object) -> list[Result]:
        nonlocal read
        found = results(*args, **kwargs)  # type: ignore[arg-type]
        read += len(found)
        return found

    for step in range(120):
        move = rng.random()
        if move < 0.45 or not running:
            seats = tuple(rng.sample(sorted(current.values()), 2))
            running.append((store.start_ladder_match(seats), seats))
        elif move < 0.85:
            match_id, seats = running.pop(rng.randrange(len(running)))
            assert store.record(_record(match_id, rng.randrange(2)), seats)
        elif move < 0.9:
            match_id, _ = running.pop(rng.randrange(len(running)))
            store.record_failure(match_id, "the host's trouble")
        elif move < 0.95:
            store.release_matches()  # a restart: every running ladder match discarded
            running.clear()
        else:
            bot = rng.choice(("a", "b", "c"))
            current[bot] = _version(store, authors["abc".index(bot)], bot)
        ladder._cache.clear()  # the first-level cache: what is tested is the settled one
        store.results = counted  # type: ignore[method-assign]
        board = ladder.ladder_ratings(store, league)
        store.results = results  # type: ignore[method-assign]
        everything = _full_replay(store, league)
        replayed += 2 * store.done_count("ladder")
        assert list(board.standings) == everything, step
    assert store.done_count("ladder") > 30
    # Each result read about once (again while a match before it is still running), not
    # every result at every change.
    assert read < replayed / 4, (read, replayed)


def test_the_ladder_rates_again_a_store_put_in_the_place_of_another(
        league: League, tmp_path: Path) -> None:
    """Same path, same number of settled matches, other results: not taken for the one
    it replaced (each store draws its own ladder key)."""
    def played(winner: int) -> LeagueStore:
        store = LeagueStore(league.store_path)
        a, b = _version(store, _author(store, "alice"), "a"), \
            _version(store, _author(store, "bob"), "b")
        for _ in range(3):
            store.record(_record(store.start_ladder_match((a, b)), winner), (a, b))
        return store

    first = played(0)
    before = ladder.ladder_ratings(first, league)
    first.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{league.store_path}{suffix}").unlink(missing_ok=True)
    second = played(1)
    after = ladder.ladder_ratings(second, league)  # no cache cleared: as a server would
    assert list(after.standings) == _full_replay(second, league)
    assert [s.entrant_id for s in after.standings] == \
        [s.entrant_id for s in before.standings][::-1]


def test_the_ladder_rates_again_a_backup_restored_and_played_on(league: League,
                                                                 tmp_path: Path) -> None:
    """The same store (its key) restored from a backup taken before its first match and
    played on under the same match ids, other results, while the server runs: neither
    cache takes it for the store it was (a set-aside checkpoint must not come back once the
    counts match again)."""
    store = LeagueStore(league.store_path)
    seats = (_version(store, _author(store, "alice"), "a"),
             _version(store, _author(store, "bob"), "b"))
    store.close()
    backup = tmp_path / "backup.sqlite"
    shutil.copy(league.store_path, backup)
    store = LeagueStore(league.store_path)
    for _ in range(3):
        store.record(_record(store.start_ladder_match(seats), 0), seats)
    before = ladder.ladder_ratings(store, league)
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{league.store_path}{suffix}").unlink(missing_ok=True)
    shutil.copy(backup, league.store_path)
    store = LeagueStore(league.store_path)
    first = store.start_ladder_match(seats)  # L000001 runs longest: nothing is settled
    for _ in range(2):
        store.record(_record(store.start_ladder_match(seats), 1), seats)
        assert list(ladder.ladder_ratings(store, league).standings) == \
            _full_replay(store, league)
    store.record(_record(first, 1), seats)  # three done again, up to L000003
    after = ladder.ladder_ratings(store, league)
    assert list(after.standings) == _full_replay(store, league)
    assert after.standings[0].entrant_id == seats[1] != before.standings[0].entrant_id


def test_results_of_many_matches_are_read_in_parts(store: LeagueStore) -> None:
    """/api/matches reads the results of up to 1,000 matches at once: SQLite before 3.32
    binds at most 999 values to a statement."""
    store.db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    seats = (_version(store, _author(store, "alice"), "a"),
             _version(store, _author(store, "bob"), "b"))
    played = [store.start_ladder_match(seats) for _ in range(3)]
    for match_id in played:
        store.record(_record(match_id, 0), seats)
    asked = [f"L{n:06d}" for n in range(1200, 0, -1)]  # 1,200 ids, three of them played
    found = store.results(match_ids=asked)
    assert [(r.match_id, r.seat) for r in found] == [(m, seat) for m in played
                                                     for seat in (0, 1)]


# -- phases and the final ------------------------------------------------------------------


def test_phases_follow_times_and_the_organiser_only_forward(
        store: LeagueStore, tmp_path: Path) -> None:
    league = load_league(write_league(tmp_path / "timed"))
    timed = League(**{**league.__dict__, "phases": type(league.phases)(
        dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.datetime(2026, 1, 2, tzinfo=dt.UTC))})
    at = dt.datetime(2025, 12, 31, tzinfo=dt.UTC)
    assert ladder.current_phase(store, timed, at) == "open"
    assert ladder.current_phase(store, timed, at + dt.timedelta(days=1, hours=1)) == "frozen"
    assert ladder.current_phase(store, timed, at + dt.timedelta(days=3)) == "final"
    assert ladder.advance(store, league, "frozen") == "frozen"
    assert ladder.current_phase(store, timed, at) == "frozen"  # the later of the two
    with pytest.raises(ValueError, match="only move on"):
        ladder.advance(store, league, "open")
    with pytest.raises(ValueError, match="unknown phase"):
        ladder.advance(store, league, "closed")


def test_final_plays_the_newest_active_version_of_each_entered_bot(
        store: LeagueStore, league: League) -> None:
    alice, bob, carol = (_author(store, n) for n in ("alice", "bob", "carol"))
    _version(store, alice, "a")
    a2 = _version(store, alice, "a")
    b = _version(store, bob, "b")
    _version(store, carol, "c")
    store.act("c", "disqualify", "broke the rules")
    entrants = ladder.final_entrants(store)
    assert [v.id for v in entrants] == [a2, b]
    planned = ladder.final_schedule(league, entrants)
    assert len(planned) == league.final.matches_per_group  # one pair
    assert {m[2] for m in planned} == {(a2, b), (b, a2)}  # duplicate deals: both orders
    labels = [m[1] for m in planned]
    assert all(labels.count(label) == 2 for label in labels)


# -- the league file -------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "error"), [
    ("[league]\n", "name is required"),
    ('[league]\nname = "x"\n[wat]\n', "unknown table"),
    ('[league]\nname = "x"\nport = "80"\n', "port must be an integer"),
    ('[league]\nname = "x"\n[ladder]\nnew_version_rating = "keep"\n', "carry_mean"),
    ('[league]\nname = "x"\n[ladder]\nparalel = 2\n', "unknown field"),
    ('[league]\nname = "x"\n[final]\nmatches_per_group = 3\n', "multiple of the table"),
    ('[league]\nname = "x"\n[phases]\nopen_until = 2026-01-02T00:00:00Z\n'
     'frozen_until = 2026-01-01T00:00:00Z\n', "before open_until"),
    ('[league]\nname = "x"\n[phases]\nopen_until = "tomorrow"\n', "date and time"),
    ('[league]\nname = "x"\n[sandbox]\nbackend = "vm"\n', "bubblewrap"),
    ('[league]\nname = "x"\n[rules]\ntarget_scor = 10\n', "[rules]"),
    ("[league\n", "not valid TOML"),
])
def test_league_file_errors_name_the_field(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "LEAGUE.toml"
    path.write_text(text)
    with pytest.raises(LeagueError, match=error.replace("[", r"\[")) as raised:
        load_league(path)
    assert str(path) in str(raised.value)


def test_the_sample_league_file_loads() -> None:
    league = load_league(ROOT / "sample_bots" / "league.toml")
    assert league.name == "sample-league"
    assert league.data == ROOT / "runs" / "sample-league"  # git ignores runs/
    assert league.ladder.new_version_rating == "fresh"
    assert league.final.duplicate_deals and league.final.matches_per_group == 4


def test_a_version_whose_folder_is_gone_leaves_the_ladder(
        store: LeagueStore, league: League, tmp_path: Path) -> None:
    """Its match is recorded failed (with why), the version failed (its author sees why),
    and the matchmaker does not pick it again (no loop of failing matches)."""
    from arena.server.service import LeagueService

    alice, bob = _author(store, "alice"), _author(store, "bob")
    good = store.add_version(alice, "a", "1", "h", "s", str(ROOT / "sample_bots" / "python"
                                                           / "random"), 3)
    gone = store.add_version(bob, "b", "1", "h", "s", str(tmp_path / "deleted"), 3)
    for version in (good, gone):
        store.activate(version.id, 1)
    service = LeagueService(league)
    assert service._ladder_jobs(store, slots=2, salt=0) == []  # the match could not start
    [match] = store.matches()
    assert match.status == "failed" and "cannot start the match" in str(match.error)
    assert store.version(gone.id).status == "failed"  # type: ignore[union-attr]
    said = store.version(gone.id).build_log  # type: ignore[union-attr]
    assert "cannot be used" in str(said) and str(tmp_path) not in str(said)  # no host path
    assert store.version(good.id).status == "active"  # type: ignore[union-attr]
    assert service._ladder_jobs(store, slots=2, salt=1) == []
    assert len(store.matches()) == 1  # and no other was tried


def test_a_host_short_of_file_descriptors_fails_the_match_not_the_versions(
        store: LeagueStore, league: League, monkeypatch: pytest.MonkeyPatch) -> None:
    """A flood of half-open connections can use up the server's file descriptors; the next
    match's EMFILE fails the match, not its versions for good: they play again once the
    host has descriptors."""
    from arena.server import service as service_module

    alice, bob = _author(store, "alice"), _author(store, "bob")
    versions = [store.add_version(author, bot, "1", "h", "s", str(
        ROOT / "sample_bots" / "python" / "random"), 3) for author, bot in ((alice, "a"),
                                                                            (bob, "b"))]
    for version in versions:
        store.activate(version.id, 1)
    service = service_module.LeagueService(league)
    real = service_module.load_manifest

    def out_of_descriptors(folder: Path) -> object:
        raise OSError(errno.EMFILE, "Too many open files", str(folder))

    monkeypatch.setattr(service_module, "load_manifest", out_of_descriptors)
    assert service._ladder_jobs(store, slots=2, salt=0) == []
    [match] = store.matches()
    assert match.status == "failed" and "Too many open files" in str(match.error)
    assert [store.version(v.id).status for v in versions] == ["active", "active"]  # type: ignore[union-attr]
    monkeypatch.setattr(service_module, "load_manifest", real)
    [job] = service._ladder_jobs(store, slots=2, salt=1)  # the host has descriptors again
    assert sorted(bot.name for bot in job.bots) == ["random", "random"]


def test_opponents_are_the_closest_in_rating_within_the_author_limit(
        store: LeagueStore, tmp_path: Path) -> None:
    league = load_league(write_league(tmp_path / "limits", ladder="max_running_per_author = 1"))
    alice, bob, carol, dave = (_author(store, n) for n in ("alice", "bob", "carol", "dave"))
    strong, middle, weak = (_version(store, a, n) for a, n in
                            ((alice, "strong"), (bob, "middle"), (carol, "weak")))
    for winner, loser in ((strong, middle), (middle, weak), (strong, weak)) * 2:
        store.record(_record(store.start_ladder_match((winner, loser)), 0), (winner, loser))
    newcomer = _version(store, dave, "new")
    board = ladder.ladder_ratings(store, league)
    mus = {s.entrant_id: s.mu for s in board.standings}
    assert mus[strong] > mus[middle] > mus[weak]
    tables = ladder.pick_tables(store, league, board, slots=2, salt=0)
    # The newcomer places first, against the one rated closest to its prior (mu 25).
    closest = min((strong, middle, weak), key=lambda v: abs(mus[v] - MU))
    assert set(tables[0]) == {newcomer, closest}
    # One running match per author at most: a second pair cannot be seated while the
    # remaining two are free only if their authors are not playing.
    playing = {store.version(v).author_id for v in tables[0]}  # type: ignore[union-attr]
    for table in tables[1:]:
        assert not playing & {store.version(v).author_id for v in table}  # type: ignore[union-attr]
    for table in tables:
        store.start_ladder_match(table)
    # dave's second bot and erin's are free; dave has a match running already, so only
    # a league allowing two per author seats them.
    extra = _version(store, dave, "second")
    erin = _version(store, _author(store, "erin"), "erin")
    board = ladder.ladder_ratings(store, league)
    assert ladder.pick_tables(store, league, board, 2, 1) == []
    looser = load_league(write_league(tmp_path / "two", ladder="max_running_per_author = 2"))
    assert [set(t) for t in ladder.pick_tables(store, looser, board, 2, 1)] == [
        {extra, erin}]


def test_the_match_loop_survives_a_failure_and_releases_its_matches(
        store: LeagueStore, league: League, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure while recording (a full disk, say) stops the loop; it starts again after
    a pause, discards the match it was playing (never half-counted) and plays on."""
    import time

    from arena.server import service as service_module
    from arena.server.service import LeagueService

    monkeypatch.setattr(service_module, "RETRY_SECONDS", 0.1)
    for author, bot in (("alice", "greedy"), ("bob", "random")):
        version = store.add_version(_author(store, author), bot, "1", bot, "s",
                                    str(ROOT / "sample_bots" / "python" / bot), 3)
        store.activate(version.id, 1)
    service = LeagueService(league)
    failures = []
    real_record = LeagueService._record

    def record_once_failing(self: LeagueService, db: LeagueStore, outcome: object) -> None:
        if not failures:
            failures.append(outcome)
            raise OSError(28, "No space left on device")
        real_record(self, db, outcome)  # type: ignore[arg-type]

    monkeypatch.setattr(LeagueService, "_record", record_once_failing)
    service.start()
    try:
        deadline = time.monotonic() + 60
        while store.done_count("ladder") < 2:
            assert time.monotonic() < deadline, "the ladder did not go on"
            time.sleep(0.1)
    finally:
        service.stop()
    statuses = {m.match_id: m.status for m in store.matches()}
    assert statuses["L000001"] == "discarded"
    assert store.results_of("L000001") == []
    assert service.errors and "No space left" in service.errors[0]


def test_a_final_too_large_to_schedule_says_so_on_its_page(store: LeagueStore,
                                                           league: League) -> None:
    """The final plays every group of the active bots: at 4-player tables 60 bots are
    487,635 groups. It is not scheduled (the service would spend hours, then the memory,
    on it); the final's page says why and what to change."""
    import dataclasses

    from arena.server.service import LeagueService

    four = dataclasses.replace(league, ladder=dataclasses.replace(league.ladder, table_size=4),
                               final=dataclasses.replace(league.final, matches_per_group=1))
    for index in range(60):  # an author may have a few bots: 12 authors of 5
        if index % 5 == 0:
            author = _author(store, f"author{index // 5}")
        _version(store, author, f"bot{index}")
    entrants = ladder.final_entrants(store)
    assert len(entrants) == 60
    with pytest.raises(ladder.FinalTooLarge, match="487,635 groups of 4"):
        ladder.final_schedule(four, entrants)
    assert LeagueService(four)._final_jobs(store, 2) == []
    note = store.meta("final_note") or ""
    assert "the final cannot be scheduled" in note and "lower matches_per_group" in note
    assert not store.matches("WHERE kind = 'final'")
    # At two seats the same bots make a final of 1,770 pairs.
    assert len(ladder.final_schedule(league, entrants)) == 1770 * league.final.matches_per_group


@pytest.mark.parametrize(("number", "expected"), [
    (1, "L000001"), (999_999, "L999999"), (1_000_000, "L~1000000"),
    (9_999_999, "L~9999999"), (10_000_000, "L~~10000000")])
def test_ladder_ids_past_a_million(number: int, expected: str) -> None:
    from arena.server.store import ladder_id

    assert ladder_id(number) == expected


def test_ladder_ids_sort_as_text_in_the_order_given(store: LeagueStore) -> None:
    """Lists, pages (``after``) and the settled mark compare ids as text: past a million
    matches ``L1000000`` must not sort before ``L999999``."""
    from arena.server.store import ladder_id

    numbers = [1, 2, 99_999, 999_998, 999_999, 1_000_000, 1_000_001, 9_999_999, 10_000_000,
               123_456_789]
    assert sorted(ladder_id(n) for n in reversed(numbers)) == [ladder_id(n) for n in numbers]
    alice, bob = _author(store, "alice"), _author(store, "bob")
    seats = (_version(store, alice, "a"), _version(store, bob, "b"))
    with store.transaction() as db:
        db.executemany("INSERT INTO matches (match_id, kind, label, seats, status, created_at) "
                       "VALUES (?, 'ladder', ?, ?, 'discarded', 0)",
                       [(ladder_id(n), ladder_id(n), f"[{seats[0]}, {seats[1]}]")
                        for n in (999_998, 1_000_000, 999_999)])
    running = store.start_ladder_match(seats)  # the fourth: 4 < a million, so L000004
    assert running == "L000004"
    listed = [m.match_id for m in store.matches("WHERE kind = 'ladder'")]
    assert listed == ["L000004", "L999998", "L999999", "L~1000000"]
    assert store.settled("ladder")[0] is None  # L000004 still runs, before every other
    assert store.record(_record(running, 0), seats)
    assert store.settled("ladder")[0] == "L~1000000"


def test_equal_ratings_share_a_rank_listed_by_submission_not_name(
        store: LeagueStore, league: League) -> None:
    """Every new bot starts at the same rating: a name sorting first ("0...", "AAA") must
    not be shown at rank 1 of them, the others 2, 3..."""
    alice, bob = _author(store, "alice"), _author(store, "bob")
    ids = [_version(store, alice, "zeta"), _version(store, bob, "0first"),
           _version(store, bob, "AAA")]
    rows = ladder.ladder_rows(store, ladder.ladder_ratings(store, league))
    assert [(row.rank, row.version.id) for row in rows] == [(1, i) for i in ids]
    seats = (ids[0], ids[1])
    match_id = store.start_ladder_match(seats)
    assert store.record(_record(match_id, 0), seats)  # zeta beats 0first
    rows = ladder.ladder_rows(store, ladder.ladder_ratings(store, league))
    assert [row.version.bot for row in rows] == ["zeta", "AAA", "0first"]
    assert [row.rank for row in rows] == [1, 2, 3]


def test_names_that_look_alike_are_one_name_on_the_server(store: LeagueStore) -> None:
    """aIice-bot (capital I), a1ice-bot, alice_bot are refused beside alice-bot, and the
    author "\u0430lice" (Cyrillic a) beside alice."""
    alice, bob = _author(store, "alice"), _author(store, "bob")
    store.add_version(alice, "alice-bot", "1.0", "h1", "s", "/bots/a", 5)
    for alike in ("aIice-bot", "a1ice-bot", "alice_bot", "alice.bot", "ALICE-BOT"):
        with pytest.raises(Conflict, match="reads like the bot 'alice-bot'"):
            store.add_version(bob, alike, "1.0", "h2", "s", "/bots/b", 5)
    store.add_version(bob, "alice-bot-2", "1.0", "h3", "s", "/bots/c", 5)  # another name
    for author, refusal in (("Alice", "reads like it"), ("a1ice", "reads like it"),
                            ("\u0430lice", "mixes Cyrillic and Latin"),
                            ("al  ice", "two spaces"), ("alice\u3164", "U\\+3164")):
        with pytest.raises(Conflict, match=refusal):
            store.add_author(author)
    assert store.add_author("Alicia")
