"""The Dask executor: a LocalCluster gives the local executor's results, and a
season survives a worker killed mid-season or during the entrant check with no match lost
or doubled, even when the worker held the only copy of a shipped bot."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from arena.league.cluster import DaskExecutor, pack_bot, unpack_bot
from arena.league.driver import RunSummary, leaderboard, run_season
from arena.league.executor import JobOutcome, LocalExecutor
from arena.league.season import load_season
from arena.league.store import SeasonStore

from .fast_matches import BOTS as FAST_BOTS
from .fast_matches import fast_jobs

ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))
"""Seasons compared with each other are dealt from the same key."""
BOTS = ROOT / "sample_bots" / "python"

SEASON = f"""
[season]
name = "{{name}}"
table_size = 2
matches_per_group = {{per_group}}
parallelism = 2
entrants = ["{BOTS}/random", "{BOTS}/greedy", "{BOTS}/strategist"]

[rules]
target_score = {{target}}

[sandbox]
backend = "plain"

[output]
folder = "{{folder}}"
"""


def season_at(tmp_path: Path, name: str, per_group: int = 2, target: int = 200):  # type: ignore[no-untyped-def]
    path = tmp_path / f"{name}.toml"
    path.write_text(SEASON.format(name=name, per_group=per_group, target=target,
                                  folder=tmp_path / name))
    return load_season(path)


def results_of(folder: Path) -> tuple[list[tuple[object, ...]], list[tuple[int, float]]]:
    store = SeasonStore(folder / "season.sqlite")
    try:
        results = [(r.match_id, r.seat, r.entrant_id, r.place, r.score, r.rounds_won)
                   for r in store.results()]
        ratings = [(s.entrant_id, round(s.mu, 9)) for s in leaderboard(store).standings]
    finally:
        store.close()
    return results, ratings


def test_pack_and_unpack_a_bot_by_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.league.cluster as cluster

    monkeypatch.setattr(cluster, "CACHE", tmp_path / "cache")
    folder = unpack_bot("abc123", pack_bot(BOTS / "greedy"))
    assert (folder / "bot.py").read_bytes() == (BOTS / "greedy" / "bot.py").read_bytes()
    assert unpack_bot("abc123", b"not even read") == folder  # unpacked once per hash


@pytest.mark.slow
def test_local_cluster_gives_the_local_executors_results(tmp_path: Path) -> None:
    local = season_at(tmp_path, "local")
    summary = run_season(local, LocalExecutor(2), key=KEY)
    assert summary.played == 6 and summary.failed == 0
    on_cluster = season_at(tmp_path, "cluster")
    summary = run_season(on_cluster, DaskExecutor(None, workers=2), key=KEY)
    assert summary.played == 6 and summary.failed == 0
    assert results_of(tmp_path / "cluster") == results_of(tmp_path / "local")
    # Logs and bot output came back from the workers into the season folder.
    assert len(list((tmp_path / "cluster" / "logs").glob("*.jsonl.gz"))) == 6
    assert list((tmp_path / "cluster" / "logs").glob("m00001/*.stderr.log"))


def holders(client: Any, futures: Iterable[Any]) -> dict[str, set[str]]:
    """Each future's key -> the workers holding its result."""
    return {key: set(workers) for key, workers in client.who_has(list(futures)).items()}


def kill_workers(client: Any, addresses: Iterable[str]) -> list[int]:
    """SIGKILL the workers at ``addresses`` (as the OOM killer would; their nannies start
    new ones, at new addresses); their pids."""
    pids = list(client.run(os.getpid, workers=sorted(addresses)).values())
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return pids


def wait_until_gone(client: Any, addresses: Iterable[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while set(addresses) & set(client.scheduler_info()["workers"]):
        assert time.monotonic() < deadline, "the scheduler never saw the workers die"
        time.sleep(0.05)


def sole_copy_holders(client: Any, futures: Iterable[Any]) -> set[str]:
    """The workers holding every copy of the shipped bot with the fewest copies: killing
    them leaves no copy of it on the cluster."""
    held = holders(client, futures)
    assert held and all(held.values()), f"a shipped bot is on no worker: {held}"
    return min(held.values(), key=len)


def check_store(season: Any, matches: int) -> None:
    store = SeasonStore(season.store_path)
    try:
        assert store.counts() == {"scheduled": 0, "done": matches, "failed": 0}
        assert len(store.results()) == 2 * matches  # two seats per match, each recorded once
    finally:
        store.close()


@pytest.mark.slow
def test_a_bot_lost_with_every_worker_holding_it_is_recomputed(tmp_path: Path) -> None:
    """The fix itself: scattered data is lost for good with its last worker (every task
    needing it cancelled); a shipped bot is a task the scheduler computes again."""
    executor = DaskExecutor(None, workers=2, pin_cores=False)
    client = executor._connect()
    try:
        shipped = executor._ship(client, {bot.content_hash(): bot for bot in FAST_BOTS})
        client.gather(list(shipped.values()))
        held = holders(client, shipped.values())
        doomed = set().union(*held.values())
        kill_workers(client, doomed)
        wait_until_gone(client, doomed)
        # Every copy went with those workers: the scheduler says it lost them and computes
        # them again (it would say "lose scattered data" and cancel them if scattered).
        lost: set[str] = set()
        for address in doomed:
            for _, event in client.get_events(address):
                if isinstance(event, dict) and event.get("action") == "remove-worker":
                    assert not event["lost-scattered-tasks"]
                    lost |= set(event["lost-computed-tasks"])
        assert lost == set(held)
        # Real bot processes (no in-process seats): the matches need the unpacked folders.
        jobs = fast_jobs(tmp_path, 2)
        outcomes = list(executor.run(jobs))
        assert [o.error for o in outcomes] == [None, None]
        assert sorted(o.match_id for o in outcomes) == [j.match_id for j in jobs]
    finally:
        executor.shutdown()


@pytest.mark.slow
def test_a_worker_killed_mid_season_loses_and_doubles_nothing(tmp_path: Path) -> None:
    season = season_at(tmp_path, "killed", per_group=4, target=500)
    executor = DaskExecutor(None, workers=2)
    killed: list[int] = []
    left: list[int] = []

    def kill_at_the_second_result(outcome: JobOutcome, summary: RunSummary) -> None:
        # Mid-season by the season's progress, not the clock: 2 of 12 matches recorded,
        # a window of matches in flight, the rest not yet submitted. The worker(s) killed
        # hold the only copy of a bot.
        if killed or summary.played < 2:
            return
        client = executor.client
        killed.extend(kill_workers(client, sole_copy_holders(client,
                                                             executor.shipped.values())))
        left.append(summary.scheduled - summary.already_done - summary.played)

    summary = run_season(season, executor, on_outcome=kill_at_the_second_result)
    assert killed, "no worker was killed"
    assert left and left[0] >= 6, "the worker was not killed mid-season"
    assert summary.played == 12 and summary.failed == 0
    check_store(season, 12)


@pytest.mark.slow
def test_a_worker_killed_during_the_entrant_check_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    season = season_at(tmp_path, "probe-killed", per_group=2, target=200)
    executor = DaskExecutor(None, workers=2)
    client = executor._connect()
    submit = client.submit
    killed: list[int] = []
    probing: list[str] = []

    def submit_then_kill(function: Any, *args: Any, key: str = "", **kwargs: Any) -> Any:
        """Once the entrant check is running on a worker, kill that worker and every worker
        holding a copy of some bot."""
        future = submit(function, *args, key=key, **kwargs)
        if key.startswith("probe-") and not killed:
            deadline = time.monotonic() + 60
            while not future.done() and not any(key in keys for keys in
                                                client.processing().values()):
                assert time.monotonic() < deadline, "the probe never started"
                time.sleep(0.01)
            running = {w for w, keys in client.processing().items() if key in keys}
            doomed = running | sole_copy_holders(client, executor.shipped.values())
            killed.extend(kill_workers(client, doomed))
            probing.extend(running)
        return future

    monkeypatch.setattr(client, "submit", submit_then_kill)
    summary = run_season(season, executor)
    assert killed, "no worker was killed"
    assert probing, "the probe ended before its worker was killed"
    assert summary.played == 6 and summary.failed == 0
    check_store(season, 6)
