"""Executors run scheduled matches; the season driver records what they return.

An executor takes picklable :class:`MatchJob` values and yields :class:`JobOutcome` values
in completion order. The local executor uses worker processes on this machine; a cluster
executor (Dask) implements the same two methods, so nothing else changes.

When the workers fill the machine's cores, each worker is pinned to a core of its own, and
its match (the referee, the sandbox launcher, the bots) runs there: see :func:`core_plan`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from arena.league.season import SandboxSettings
from arena.league.store import MatchRecord, SeatResult
from arena.referee.launch import SeatLauncher
from arena.referee.match import Limits, MatchSpec, run_match
from arena.rules.options import RuleOptions
from arena.rules.seeds import MatchSeed
from arena.sandbox.manifest import BotManifest


@dataclass(frozen=True)
class MatchJob:
    match_id: str
    seed: MatchSeed
    """The match's key, derived from the season key (the season key stays with the driver)."""
    bots: tuple[BotManifest, ...]
    """The bot at each seat."""
    rules: RuleOptions
    limits: Limits
    sandbox: SandboxSettings
    log_path: Path
    output_dir: Path
    """Where each bot's stdout/stderr go."""


@dataclass(frozen=True)
class JobOutcome:
    match_id: str
    record: MatchRecord | None
    error: str | None = None


class Executor(Protocol):
    def run(self, jobs: Iterable[MatchJob]) -> Iterator[JobOutcome]:
        """Run the jobs, yielding each outcome as it finishes."""
        ...

    def shutdown(self) -> None:
        """Stop at once: kill matches in flight (their bots included)."""
        ...


def seat_launcher(settings: SandboxSettings, bot: BotManifest, log_dir: Path, label: str
                  ) -> tuple[SeatLauncher, dict[str, Any]]:
    """The launcher for one seat under the season's sandbox settings, and its description
    (backend, limits, warnings) for the match log."""
    from arena import sandbox

    return sandbox.season_launcher(settings, bot, log_dir, label)


def play_job(job: MatchJob) -> JobOutcome:
    """Play one scheduled match (in a worker process or a cluster task)."""
    try:
        seats = []
        description: dict[str, Any] = {}
        for seat, bot in enumerate(job.bots):
            launcher, description = seat_launcher(job.sandbox, bot, job.output_dir,
                                                  f"seat{seat}-{bot.name}")
            seats.append(launcher)
        spec = MatchSpec(job.match_id, job.seed, len(job.bots), job.rules, job.limits,
                         job.log_path, sandbox={**description, **job.sandbox.to_dict()})
        outcome = asyncio.run(run_match(spec, list(seats)))
    except Exception:
        return JobOutcome(job.match_id, None, traceback.format_exc(limit=8))
    record = MatchRecord(
        match_id=job.match_id, seconds=outcome.seconds, decisions=outcome.decisions,
        rounds=outcome.rounds, round_limit_reached=outcome.round_limit_reached,
        log_path=str(job.log_path),
        seats=tuple(
            SeatResult(seat=r.seat, place=outcome.places[r.seat], score=outcome.scores[r.seat],
                       rounds_won=outcome.rounds_won[r.seat], strikes=r.strikes,
                       disqualified=r.disqualified,
                       faults=tuple({"kind": f.kind.name.lower(), "reason": f.reason}
                                    for f in r.faults))
            for r in outcome.seats))
    return JobOutcome(job.match_id, record)


def _terminate(*_: object) -> None:
    # Raise so run_match's clean-up kills the bots; exit hard if that clean-up hangs.
    threading.Timer(5.0, os._exit, (143,)).start()
    sys.exit(143)


def _watch_driver(driver: int) -> None:
    """A driver killed with SIGKILL cannot stop its workers: each worker notices it is
    gone (it has a new parent) and ends itself, so no match outlives the run."""
    while os.getppid() == driver:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)
    os._exit(143)


def usable_cores() -> list[int]:
    """The cores this process may run on (its affinity: a container's cpuset, taskset)."""
    return sorted(os.sched_getaffinity(0))


def core_plan(workers: int, cores: Sequence[int]) -> list[int] | None:
    """The core for each of ``workers`` worker processes, or None: leave them unpinned.

    Pinned only when the workers fill the cores. A lone match keeps ~1.2 cores busy (its
    bots start side by side, gRPC polls beside the event loop), so with a core to spare it
    is faster unpinned. With every core taken, a match kept on one core plays its
    referee-bot ping-pong without cross-core wake-ups or migrations: measured on the sample
    season at 2 workers on 2 cores, 12-19% more matches per minute (``benchmarks/season``).
    More workers than cores share the cores in turn."""
    if not cores or workers < len(cores):
        return None
    return [cores[index % len(cores)] for index in range(workers)]


def pin_process(core: int) -> bool:
    """Confine every thread of this process to ``core``; what it starts later inherits it.
    False if the kernel refuses (the process then runs unpinned)."""
    try:
        for thread in os.listdir("/proc/self/task"):
            with contextlib.suppress(ProcessLookupError):  # a thread that just ended
                os.sched_setaffinity(int(thread), {core})
    except OSError:
        return False
    return True


def _worker_init(counter: Any = None, plan: Sequence[int] | None = None) -> None:
    if counter is not None and plan:
        with counter.get_lock():
            index = counter.value
            counter.value += 1
        pin_process(plan[index % len(plan)])
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides what Ctrl-C does
    threading.Thread(target=_watch_driver, args=(os.getppid(),), daemon=True).start()


class LocalExecutor:
    """Worker processes on this machine (spawned: gRPC does not survive fork), each pinned
    to a core of its own when they fill the cores and ``pin_cores`` is on (see
    :func:`core_plan`)."""

    def __init__(self, workers: int, pin_cores: bool = True) -> None:
        self.workers = workers
        self.pin_cores = pin_cores
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None

    def placement(self, jobs: int) -> list[int] | None:
        """The core of each worker that ``jobs`` matches start, or None: unpinned."""
        workers = min(self.workers, jobs)
        return core_plan(workers, usable_cores()) if self.pin_cores and workers else None

    def run(self, jobs: Iterable[MatchJob]) -> Iterator[JobOutcome]:
        jobs = list(jobs)
        if not jobs:
            return
        workers = min(self.workers, len(jobs))
        context = multiprocessing.get_context("spawn")
        plan = self.placement(len(jobs))
        self.pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_worker_init,
            initargs=(context.Value("i", 0), plan) if plan else ())
        futures = {self.pool.submit(play_job, job): job for job in jobs}
        finished = False
        try:
            for future in concurrent.futures.as_completed(futures):
                job = futures[future]
                try:
                    yield future.result()
                except Exception as error:  # the worker died (e.g. killed by the OOM killer)
                    yield JobOutcome(job.match_id, None, f"worker failed: {error!r}")
            finished = True
        finally:
            if finished:
                pool, self.pool = self.pool, None
                pool.shutdown(wait=True)
            else:
                self.shutdown()

    def shutdown(self) -> None:
        pool, self.pool = self.pool, None
        if pool is None:
            return
        for process in list(getattr(pool, "_processes", {}).values()):
            if process.is_alive():
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
