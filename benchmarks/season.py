"""League throughput, measured side by side in one run.

1. The sample season's matches per minute with 1 worker and with 2 workers, and the
   speed-up (target >= 1.8 on 2 cores). Its three Python sample bots (the JavaScript,
   C++ and bash entrants need their builds; they play in the README's demo), 30 matches.
2. Seconds for 150 two-player matches to 500 between the Python sample bots with 2
   workers (target < 90 s on 2 cores).

Run: ``python -m benchmarks.season [--sandbox plain|bubblewrap]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path

from arena.league.driver import run_season
from arena.league.executor import LocalExecutor
from arena.league.season import Season, load_season

ROOT = Path(__file__).resolve().parents[1]


def fresh(season: Season, folder: Path, **changes: object) -> Season:
    return dataclasses.replace(season, folder=folder, **changes)  # type: ignore[arg-type]


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (all processes: referee, bots, sandbox)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(f) for f in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def timed(season: Season, workers: int) -> tuple[float, int, float]:
    """(wall seconds, matches played, cores kept busy on average)."""
    busy = busy_seconds()
    started = time.perf_counter()
    summary = run_season(season, LocalExecutor(workers))
    elapsed = time.perf_counter() - started
    if summary.failed:
        raise SystemExit(f"{summary.failed} matches failed: {summary.failures[:1]}")
    return elapsed, summary.played, (busy_seconds() - busy) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", default=None, help="override the season's backend")
    args = parser.parse_args()
    base = load_season(ROOT / "sample_bots" / "season.toml")
    python = tuple(bot for bot in base.entrants if bot.language == "python")
    base = dataclasses.replace(base, entrants=python)
    if args.sandbox:
        base = dataclasses.replace(base, sandbox=dataclasses.replace(base.sandbox,
                                                                     backend=args.sandbox))
    work = Path(tempfile.mkdtemp(prefix="arena-bench-season-"))
    rates = {}
    cores = {}
    for workers in (1, 2):
        elapsed, played, cores[workers] = timed(fresh(base, work / f"w{workers}"), workers)
        rates[workers] = played / elapsed * 60
        print(f"sample season ({played} matches), {workers} worker(s): {elapsed:6.1f} s, "
              f"{rates[workers]:6.1f} matches/min, {cores[workers]:.2f} cores busy on average")
    speedup = rates[2] / rates[1]
    ceiling = (os.cpu_count() or 1) / cores[1]
    print(f"speed-up with 2 workers: {speedup:.2f} (target >= 1.8: "
          f"{'met' if speedup >= 1.8 else 'NOT met'}); one worker already keeps "
          f"{cores[1]:.2f} cores busy (bots and referee are separate processes), so "
          f"{os.cpu_count()} cores allow about {ceiling:.2f} (a whole-machine reading: "
          "other processes' time counts too)")
    # 150 two-player matches: 3 bots, 3 pairs, 50 per pair.
    big = fresh(base, work / "150", matches_per_group=50)
    elapsed, played, _ = timed(big, 2)
    print(f"{played} two-player matches to 500 with 2 workers: {elapsed:.1f} s "
          f"(target < 90 s: {'met' if elapsed < 90 else 'NOT met'}), "
          f"{played / elapsed * 60:.0f} matches/min; sandbox {base.sandbox.backend}")


if __name__ == "__main__":
    main()
