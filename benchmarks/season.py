"""League throughput, measured side by side in one run.

1. The sample season (``sample_bots/season.toml``: its six entrants in Python, JavaScript,
   C++ and bash, 150 two-player matches to 500) with 1 worker and with 2 workers, as
   ``arena season run`` plays it: matches per minute and the speed-up (target >= 1.8 on
   2 cores). The 2 workers fill the 2 cores, so each is pinned to a core of its own
   (``arena.league.executor.core_plan``); the 1 worker is not, and its match uses both.
2. Seconds for 150 two-player matches to 500 (target < 90 s on 2 cores): the 2-worker run
   of the sample season is exactly that.
3. What explains the speed-up: the same season with 2 unpinned workers (``pin_cores =
   false``), and with 1 worker confined to a single core. Twice the single-core rate is
   what two cores give when each does what one core does alone; the 1-worker run is faster
   than one core because a match keeps more than one core busy (its bots start side by
   side, gRPC polls beside the event loop).

Builds (npm ci, cmake) run once before the clock starts, as a season reuses them. With
``--python-only`` the season keeps only its three Python entrants (30 matches, no build
tools needed). ``--rounds N`` repeats the runs, interleaved, and reports medians.
Run: ``python -m benchmarks.season [--sandbox plain|bubblewrap] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from arena.league.driver import run_season
from arena.league.executor import LocalExecutor, usable_cores
from arena.league.season import Season, load_season
from arena.sandbox import limits_from, prepare

ROOT = Path(__file__).resolve().parents[1]


def fresh(season: Season, folder: Path, **changes: object) -> Season:
    return dataclasses.replace(season, folder=folder, **changes)  # type: ignore[arg-type]


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (all processes: referee, bots, sandbox)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(f) for f in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def timed(season: Season, executor: LocalExecutor, cores: set[int] | None = None
          ) -> tuple[float, int, float]:
    """(wall seconds, matches played, cores kept busy on average); ``cores`` confines the
    driver, and so its workers and their matches, to those cores."""
    allowed = os.sched_getaffinity(0)
    if cores is not None:
        os.sched_setaffinity(0, cores)
    try:
        busy = busy_seconds()
        started = time.perf_counter()
        summary = run_season(season, executor)
        elapsed = time.perf_counter() - started
    finally:
        os.sched_setaffinity(0, allowed)
    if summary.failed:
        raise SystemExit(f"{summary.failed} matches failed: {summary.failures[:1]}")
    return elapsed, summary.played, (busy_seconds() - busy) / elapsed


def built(season: Season, folder: Path) -> Season:
    """The season with every entrant's build done (in ``folder``), so the timed runs
    measure matches, not npm or cmake."""
    limits = limits_from(season.sandbox)
    entrants = tuple(
        dataclasses.replace(prepare(bot, season.sandbox.backend, limits, folder), build=())
        for bot in season.entrants)
    return dataclasses.replace(season, entrants=entrants)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", default=None, help="override the season's backend")
    parser.add_argument("--python-only", action="store_true",
                        help="only the three Python entrants (30 matches, no builds)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat the runs (medians)")
    args = parser.parse_args()
    base = load_season(ROOT / "sample_bots" / "season.toml")
    if args.python_only:
        python = tuple(bot for bot in base.entrants if bot.language == "python")
        base = dataclasses.replace(base, entrants=python)
    if args.sandbox:
        base = dataclasses.replace(base, sandbox=dataclasses.replace(base.sandbox,
                                                                     backend=args.sandbox))
    work = Path(tempfile.mkdtemp(prefix="arena-bench-season-"))
    try:
        measure(base, work, args.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)


RUNS: dict[str, tuple[int, bool, bool]] = {
    # name: (workers, pin_cores, confined to one core)
    "1 worker": (1, True, False),
    "2 workers": (2, True, False),
    "2 workers, unpinned": (2, False, False),
    "1 worker, one core": (1, True, True),
}


def measure(base: Season, work: Path, rounds: int) -> None:
    started = time.perf_counter()
    base = built(base, work)
    print(f"{len(base.entrants)} entrants "
          f"({', '.join(sorted({bot.language for bot in base.entrants}))}), sandbox "
          f"{base.sandbox.backend}; {len(usable_cores())} cores; builds took "
          f"{time.perf_counter() - started:.1f} s (not timed below)")
    one_core = {usable_cores()[0]}
    rates: dict[str, list[float]] = {name: [] for name in RUNS}
    seconds: dict[str, list[float]] = {name: [] for name in RUNS}
    played = 0
    for round_ in range(rounds):
        for name, (workers, pin, confined) in RUNS.items():
            folder = work / f"{round_}-{name.replace(' ', '').replace(',', '-')}"
            elapsed, played, busy = timed(fresh(base, folder), LocalExecutor(workers, pin),
                                          one_core if confined else None)
            seconds[name].append(elapsed)
            rates[name].append(played / elapsed * 60)
            print(f"{name:20s} {played} matches: {elapsed:6.1f} s, {rates[name][-1]:6.1f} "
                  f"matches/min, {busy:.2f} cores busy on average", flush=True)
            shutil.rmtree(folder, ignore_errors=True)
    rate = {name: statistics.median(values) for name, values in rates.items()}
    if rounds > 1:
        print(f"medians of {rounds} rounds: " + ", ".join(
            f"{name} {value:.1f}/min" for name, value in rate.items()))
    speedup = rate["2 workers"] / rate["1 worker"]
    print(f"speed-up with 2 workers: {speedup:.2f} (target >= 1.8: "
          f"{'met' if speedup >= 1.8 else 'NOT met'})")
    print(f"  2 workers pinned / unpinned: {rate['2 workers'] / rate['2 workers, unpinned']:.2f}")
    print(f"  2 workers / twice the single-core rate: "
          f"{rate['2 workers'] / (2 * rate['1 worker, one core']):.2f} (the cores' scaling)")
    print(f"  1 worker / 1 worker on one core: "
          f"{rate['1 worker'] / rate['1 worker, one core']:.2f} (what a lone match gains from "
          f"the second core; the speed-up cannot pass 2 / this unless matches get cheaper "
          f"side by side)")
    big_seconds = statistics.median(seconds["2 workers"])
    what = "the sample season's 2-worker run above"
    if played != 150:
        # 3 Python entrants: 3 pairs, 50 matches each.
        big_seconds, _, _ = timed(fresh(base, work / "150", matches_per_group=50),
                                  LocalExecutor(2))
        what = "3 Python entrants, 50 matches per pair, 2 workers"
    print(f"150 two-player matches to 500: {big_seconds:.1f} s (target < 90 s: "
          f"{'met' if big_seconds < 90 else 'NOT met'}), {150 / big_seconds * 60:.0f} "
          f"matches/min; {what}")


if __name__ == "__main__":
    main()
