"""The Dask executor's overhead: the same season with the local executor and with a
2-worker LocalCluster, matches per minute and their ratio (target overhead <= 10%).

The cluster is started first and timed on its own, as a league's cluster is up before a
season starts; the two executors then run the same season alternately (``--rounds``).

Run: ``python -m benchmarks.cluster [--rounds N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from distributed import LocalCluster

from arena.league.cluster import DaskExecutor
from arena.league.driver import run_season
from arena.league.executor import Executor, LocalExecutor
from arena.league.season import load_season

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="alternating runs of each")
    args = parser.parse_args()
    base = load_season(ROOT / "sample_bots" / "season.toml")
    python = tuple(bot for bot in base.entrants if bot.language == "python")
    base = dataclasses.replace(base, entrants=python, matches_per_group=20)
    work = Path(tempfile.mkdtemp(prefix="arena-bench-cluster-"))
    # A league's cluster is up before a season starts (workers join a running scheduler),
    # so its start-up is timed on its own rather than charged to the season's throughput.
    started = time.perf_counter()
    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    print(f"LocalCluster with 2 workers up in {time.perf_counter() - started:.1f} s")
    executors: dict[str, Callable[[], Executor]] = {
        "local (2 processes)": lambda: LocalExecutor(2),
        "dask (2 workers)": lambda: DaskExecutor(cluster.scheduler_address),
    }
    rates: dict[str, list[float]] = {name: [] for name in executors}
    try:
        for round_ in range(args.rounds):
            for name, make in executors.items():
                season = dataclasses.replace(base, folder=work / f"{round_}-{len(rates[name])}"
                                             f"-{name.split()[0]}")
                started = time.perf_counter()
                summary = run_season(season, make())
                elapsed = time.perf_counter() - started
                rates[name].append(summary.played / elapsed * 60)
                print(f"{name:20s} {summary.played} matches in {elapsed:6.1f} s: "
                      f"{rates[name][-1]:6.1f} matches/min ({summary.failed} failed)")
    finally:
        cluster.close()
    local, dask = (statistics.median(r) for r in rates.values())
    overhead = 1 - dask / local
    print(f"median of {args.rounds}: local {local:.1f}, dask {dask:.1f} matches/min")
    print(f"cluster / local throughput: {dask / local:.2f} (overhead {overhead:.0%}; "
          f"target <= 10%: {'met' if overhead <= 0.10 else 'NOT met'})")


if __name__ == "__main__":
    main()
