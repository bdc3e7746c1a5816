"""A 200-entrant season's start: from ``run_season`` to the first match submitted.

The season of ``benchmarks.scale`` (200 entrants, 2 seats, duplicate deals, 4 matches a pair:
79,600 matches), its store already created (the resume path, nothing played yet). No bot
starts: a stand-in executor stops the run when it would submit its first match, having
taken from the driver's job iterator either

* eager: every job, and a future for each (``{pool.submit(play_job, job): job for job in
  jobs}``, what both executors did before they kept a window), or
* windowed: the executors' first window (``first_jobs``: 2 jobs a worker).

Side by side: wall time, and the tracemalloc peak in a second run (tracemalloc slows Python
down several times). Both include ``open_store`` (fingerprint of the schedule, store
checks), shown on its own too.

Run: ``python -m benchmarks.window [--workers 2]``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks.scale import make_season, timed, traced


class FirstSubmission(Exception):
    """The stand-in executor got as far as submitting its first match."""


class StandIn:
    def __init__(self, eager: bool, workers: int) -> None:
        self.eager = eager
        self.workers = workers
        self.taken = 0

    def probe(self, jobs: Sequence[Any]) -> list[str | None]:
        return [None for _ in jobs]

    def run(self, jobs: Iterable[Any]) -> Iterator[Any]:
        from arena.league.executor import first_jobs

        if self.eager:
            futures: dict[concurrent.futures.Future[Any], Any] = {
                concurrent.futures.Future(): job for job in jobs}
            self.taken = len(futures)
        else:
            self.taken = len(first_jobs(iter(jobs), self.workers))
        raise FirstSubmission
        yield  # a generator, as the executors' run is

    def shutdown(self) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    from arena.league.driver import PENDING_CHUNK, open_store, pending_matches, run_season
    from arena.league.season import load_season
    from arena.league.store import SeasonStore

    work = Path(tempfile.mkdtemp(prefix="arena-bench-window-"))
    try:
        season = load_season(make_season(work, 100))
        created, opened = timed(lambda: open_store(season))
        opened[0].close()
        print(f"200 entrants, {len(opened[2]):,} matches; store created in {created:.1f} s")
        seconds, opened = timed(lambda: open_store(season))
        opened[0].close()
        _, peak, opened = traced(lambda: open_store(season))
        opened[0].close()
        print(f"{'open_store':<12} {seconds:6.2f} s   tracemalloc peak {peak:6.1f} MiB   "
              "(included below)")
        store = SeasonStore(season.store_path, read_only=True)
        schedule = opened[2]
        seconds, _ = timed(lambda: set(store.pending()))
        _, peak, _ = traced(lambda: set(store.pending()))
        print(f"{'pending ids':<12} {seconds:6.2f} s   tracemalloc peak {peak:6.1f} MiB   "
              "(a set of every match to play, as the driver held before)")
        seconds, _ = timed(lambda: sum(1 for _ in pending_matches(store, schedule)))
        _, peak, _ = traced(lambda: sum(1 for _ in pending_matches(store, schedule)))
        store.close()
        print(f"{'pending read':<12} {seconds:6.2f} s   tracemalloc peak {peak:6.1f} MiB   "
              f"(the driver's read, {PENDING_CHUNK:,} matches at a time, whole schedule)")
        for label, eager in (("windowed", False), ("eager", True)):
            def start(eager: bool = eager) -> int:
                executor = StandIn(eager, args.workers)
                try:
                    run_season(season, executor, key=bytes(32))
                except FirstSubmission:
                    return executor.taken
                raise AssertionError("the run did not reach its first submission")

            seconds, taken = timed(start)
            _, peak, _ = traced(start)
            print(f"{label:<12} {seconds:6.2f} s   tracemalloc peak {peak:6.1f} MiB   "
                  f"({taken:,} jobs taken before the first submission)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
