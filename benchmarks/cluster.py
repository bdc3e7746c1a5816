"""The Dask executor's overhead: the same season with the local executor and with a
2-worker LocalCluster, matches per minute and their ratio (target overhead <= 10%).

Run: ``python -m benchmarks.cluster``.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

from arena.league.cluster import DaskExecutor
from arena.league.driver import run_season
from arena.league.executor import Executor, LocalExecutor
from arena.league.season import load_season

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    base = load_season(ROOT / "sample_bots" / "season.toml")
    python = tuple(bot for bot in base.entrants if bot.language == "python")
    base = dataclasses.replace(base, entrants=python, matches_per_group=20)
    work = Path(tempfile.mkdtemp(prefix="arena-bench-cluster-"))
    rates = {}
    executors: dict[str, Executor] = {"local (2 processes)": LocalExecutor(2),
                                      "dask LocalCluster (2 workers)": DaskExecutor(None, 2)}
    for index, (name, executor) in enumerate(executors.items()):
        season = dataclasses.replace(base, folder=work / str(index))
        started = time.perf_counter()
        summary = run_season(season, executor)
        elapsed = time.perf_counter() - started
        rates[name] = summary.played / elapsed * 60
        print(f"{name:32s} {summary.played} matches in {elapsed:6.1f} s: "
              f"{rates[name]:6.1f} matches/min ({summary.failed} failed)")
    local, dask = rates.values()
    overhead = 1 - dask / local
    print(f"cluster / local throughput: {dask / local:.2f} (overhead {overhead:.0%}; "
          f"target <= 10%: {'met' if overhead <= 0.10 else 'NOT met'})")


if __name__ == "__main__":
    main()
