"""The validation queue (``arena.server.queue``): first in first out across authors with
one version of an author at a time, the quick lane's own validator, where each version
stands, and identical sources taking an earlier result; what authors read names no server
path."""

from __future__ import annotations

import sys
from pathlib import Path

from arena.server.config import League
from arena.server.shown import ServerPaths
from arena.server.store import LeagueStore


def _author(store: LeagueStore, name: str) -> int:
    found = store.authenticate(store.add_author(name))
    assert found is not None
    return found.id


def _queued(store: LeagueStore, author: int, bot: str, lane: str, key: str = "") -> int:
    version = store.add_version(author, bot, "1", f"hash-{bot}", "sha", f"/b/{bot}", 9)
    store.classify(version.id, lane, key or f"key-{bot}")
    return version.id


def _take_all(store: LeagueStore, quick_only: bool = False) -> list[int]:
    """Versions in the order a validator takes them, each finished before the next claim."""
    taken = []
    while (claimed := store.claim(quick_only)) is not None:
        taken.append(claimed[0])
        store.stage(claimed[0], "failed")
    return taken


def test_validators_take_the_oldest_version_of_any_lane_first_in_first_out(
        store: LeagueStore) -> None:
    alice, bob = _author(store, "alice"), _author(store, "bob")
    rust = _queued(store, alice, "rust", "build")
    python = _queued(store, bob, "python", "quick")
    go = _queued(store, bob, "go", "build")
    assert _take_all(store) == [rust, python, go]


def test_the_quick_lanes_validator_takes_quick_checks_only(store: LeagueStore) -> None:
    """So a bot with no build step never waits behind someone else's compile."""
    alice, bob, carol = (_author(store, name) for name in ("alice", "bob", "carol"))
    rust = _queued(store, alice, "rust", "build")
    java = _queued(store, bob, "java", "build")
    assert store.claim() == (rust, "build")  # the one validator compiles
    assert store.claim(quick_only=True) is None, "no quick check queued"
    quick = _queued(store, carol, "python", "quick")
    assert store.claim(quick_only=True) == (quick, "quick")
    assert _take_all(store, quick_only=True) == [], "java is a build"
    store.stage(rust, "failed")
    assert store.claim() == (java, "build")


def test_an_author_has_one_version_validated_at_a_time(store: LeagueStore) -> None:
    """Three builds of one author do not keep another's version waiting behind them."""
    mallory, alice = _author(store, "mallory"), _author(store, "alice")
    slow = [_queued(store, mallory, f"slow{n}", "build") for n in range(3)]
    fix = _queued(store, alice, "fix", "build")
    first, second = store.claim(), store.claim()
    assert first is not None and second is not None
    assert [first[0], second[0]] == [slow[0], fix]
    assert store.claim() is None, "mallory's next waits for its first"
    store.stage(slow[0], "failed")
    assert store.claim() == (slow[1], "build")


def test_each_version_knows_its_place_in_the_queue(store: LeagueStore) -> None:
    alice, bob, carol, dave = (_author(store, name) for name in ("alice", "bob", "carol",
                                                                  "dave"))
    first = _queued(store, alice, "first", "build")
    second = _queued(store, bob, "second", "build")
    quick = _queued(store, carol, "quick", "quick")
    later_quick = _queued(store, dave, "later", "quick")
    state = store.queue_state(second, 1)
    assert state is not None and state.stage == "queued" and state.lane == "build"
    assert state.position == 2, "behind the older build"
    assert state.estimate_seconds is None, "no build validated yet"
    assert store.queue_state(quick, 1).position == 1  # type: ignore[union-attr]
    assert store.queue_state(later_quick, 1).position == 2  # type: ignore[union-attr]
    assert store.claim(quick_only=True) == (quick, "quick")
    taken = store.queue_state(quick, 1)
    assert taken is not None and taken.stage == "building" and taken.position is None
    assert taken.stage_started_at is not None
    store.stage(quick, "checking")
    assert store.queue_state(quick, 1).stage == "checking"  # type: ignore[union-attr]
    store.stage(quick, "failed")
    assert store.queue_state(quick, 1) is None
    assert store.queue_state(later_quick, 1).position == 1  # type: ignore[union-attr]
    assert store.claim() == (first, "build")
    store.stage(first, "failed")
    state = store.queue_state(second, 1)
    assert state is not None and state.position == 1
    assert state.estimate_seconds is not None and state.estimate_seconds >= 0


def test_identical_sources_find_the_earlier_result(store: LeagueStore) -> None:
    alice, bob = _author(store, "alice"), _author(store, "bob")
    earlier = _queued(store, alice, "a", "build", key="same")
    again = _queued(store, bob, "b", "build", key="same")
    other = _queued(store, bob, "c", "build", key="other")
    assert store.reusable(again) is None, "the earlier one is not validated yet"
    store.claim()
    store.stage(earlier, "failed", build_log="error: no main")
    found = store.reusable(again)
    assert found is not None and found["id"] == earlier and found["status"] == "failed"
    assert found["build_log"] == "error: no main"
    assert store.reusable(other) is None


def test_a_restart_queues_versions_being_validated_again(store: LeagueStore) -> None:
    alice = _author(store, "alice")
    version = _queued(store, alice, "a", "build")
    assert store.claim() == (version, "build")
    store.recover()
    state = store.queue_state(version, 1)
    assert state is not None and state.stage == "queued" and state.position == 1
    assert store.claim() == (version, "build")


def test_what_authors_read_names_no_server_path(league: League) -> None:
    """Every occurrence, on every line: the data folder, the package's folder, Python's
    installation and the home folder."""
    import arena

    package = Path(arena.__file__).resolve().parent.parent
    python = Path(sys.modules["asyncio"].__file__ or "").resolve().parent.parent
    text = (f"refused {league.data}/bots/abc/x: no such runtime\n"
            f"  in {league.data.resolve()}/builds and {league.data}/builds\n"
            f'  File "{package}/arena/referee/check.py", line 3\n'
            f'  File "{python}/asyncio/events.py", line 80\n'
            f"  cd {Path.home()}/work && {Path.home()}x")
    shown = ServerPaths(league.data).mask(text)
    for path in (league.data, league.data.resolve(), package, python):
        assert str(path) not in shown, path
    assert "<league data>/bots/abc/x" in shown and "<league data>/builds and" in shown
    assert "<arena>/arena/referee/check.py" in shown
    assert "<python>/asyncio/events.py" in shown
    if str(Path.home()) != "/":
        assert "~/work" in shown
        assert f"{Path.home()}x" in shown, "only a whole path is a path"
