"""The Dask executor (issue 8): a LocalCluster gives the local executor's results, and a
season survives a worker killed mid-season with no match lost or doubled."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from arena.league.cluster import DaskExecutor, pack_bot, unpack_bot
from arena.league.driver import leaderboard, run_season
from arena.league.executor import LocalExecutor
from arena.league.season import load_season
from arena.league.store import SeasonStore

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


@pytest.mark.slow
def test_a_worker_killed_mid_season_loses_and_doubles_nothing(tmp_path: Path) -> None:
    season = season_at(tmp_path, "killed", per_group=4, target=500)
    executor = DaskExecutor(None, workers=2)
    killed: list[int] = []

    def kill_a_worker() -> None:
        while executor.client is None or not executor.client.scheduler_info()["workers"]:
            time.sleep(0.05)
        time.sleep(1.5)  # mid-season: some matches done, others in flight
        pids = executor.client.run(os.getpid)
        pid = sorted(pids.values())[0]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    killer = threading.Thread(target=kill_a_worker, daemon=True)
    killer.start()
    summary = run_season(season, executor)
    killer.join(timeout=5)
    assert killed, "no worker was killed"
    assert summary.played == 12 and summary.failed == 0
    store = SeasonStore(season.store_path)
    try:
        assert store.counts() == {"scheduled": 0, "done": 12, "failed": 0}
        assert len(store.results()) == 24  # two seats per match, each recorded once
    finally:
        store.close()
