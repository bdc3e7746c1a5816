"""Executors run scheduled matches; the season driver records what they return.

An executor takes picklable :class:`MatchJob` values and yields :class:`JobOutcome` values
in completion order. The local executor uses worker processes on this machine; a cluster
executor (Dask) implements the same two methods, so nothing else changes.

Jobs are pulled from their iterable as earlier ones finish, in its order, never more than
:data:`WINDOW_PER_WORKER` per worker in flight: a 200-entrant season (79,600 matches) costs
the same memory and start-up as a small one.

When the workers fill the machine's cores, each worker is pinned to a core of its own, and
its match (the referee, the sandbox launcher, the bots) runs there: see :func:`core_plan`.

Workers die with their driver, however it dies: each asks the kernel for SIGTERM when its
parent ends (``PR_SET_PDEATHSIG``). On SIGTERM a worker cancels the match it plays (the
referee's clean-up kills the bots and stops its server) and exits at once; the match is not
recorded, and a resumed run plays it again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import errno
import hashlib
import itertools
import multiprocessing
import os
import signal
import threading
import traceback
from collections.abc import Awaitable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from arena.league.preflight import ProbeJob, probe_entrants
from arena.league.results import MatchRecord, SeatResult
from arena.league.season import SandboxSettings
from arena.league.seat_launcher import sandbox_header

# Exported: play_job starts each seat through this module's name, which tests swap.
from arena.league.seat_launcher import seat_launcher as seat_launcher
from arena.referee import eventloop
from arena.referee.limits import Limits
from arena.referee.match import MatchSpec, run_match
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
    stop: str | None = None
    """Why the season cannot go on (a full disk, a read-only file system): the match is not
    a failure of its bots, and the next matches would meet the same trouble."""


HOST_TROUBLE = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
                errno.EROFS: "the file system is read-only", errno.EFBIG: "the file is too large",
                errno.EIO: "an input/output error"}
"""OSErrors that stop the season rather than fail the match: free space (or fix the disk),
then run again."""


def host_trouble(error: BaseException, writing: Path | None = None) -> str | None:
    """``error`` (or what caused it) as a host problem that stops the season, or None.
    ``writing``: the file being written, when the error does not name one."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in HOST_TROUBLE:
            where = current.filename or writing
            prefix = f"{where}: " if where else ""
            return f"{prefix}{HOST_TROUBLE[current.errno]} ({current.strerror})"
        current = current.__cause__ or current.__context__
    return None


class Executor(Protocol):
    def probe(self, jobs: Sequence[ProbeJob]) -> list[str | None]:
        """Start each entrant once where its matches will run: for each, None (it said
        hello) or why it cannot play (``arena.league.preflight``)."""
        ...

    def run(self, jobs: Iterable[MatchJob]) -> Iterator[JobOutcome]:
        """Run the jobs, yielding each outcome as it finishes; the jobs are pulled from
        ``jobs`` in order as earlier ones finish (see :data:`WINDOW_PER_WORKER`)."""
        ...

    def shutdown(self) -> None:
        """Stop at once: kill matches in flight (their bots included)."""
        ...


WINDOW_PER_WORKER = 2
"""Jobs in flight per worker: the one it plays and the next, queued, so it starts that at
once while the driver records the last; no more, so that memory and start-up do not grow
with the number of scheduled matches."""


def first_jobs(jobs: Iterator[MatchJob], workers: int) -> list[MatchJob]:
    """The jobs a run starts with: a full window for ``workers``, or every job if fewer
    (then the run needs no more workers than it has jobs)."""
    return list(itertools.islice(jobs, WINDOW_PER_WORKER * workers))


Result = TypeVar("Result")

_handles_sigterm = False
"""Set in local worker processes: a match in the main thread is cancelled on SIGTERM."""


async def _cancellable(work: Awaitable[Result]) -> Result:
    """``work``, cancelled on SIGTERM: a match's clean-up kills its bots, stops its server."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None

    def cancel_once() -> None:
        # A second SIGTERM (the pool stops every worker once one has ended) must not cut
        # the clean-up short.
        if not task.cancelling():
            silence()
            task.cancel()

    loop.add_signal_handler(signal.SIGTERM, cancel_once)
    try:
        return await work
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        signal.signal(signal.SIGTERM, _terminate)


def play_job(job: MatchJob) -> JobOutcome:
    """Play one scheduled match (in a worker process or a cluster task)."""
    cancellable = _handles_sigterm and threading.current_thread() is threading.main_thread()
    gone = _folder_gone(job)
    if gone:
        return JobOutcome(job.match_id, None, gone)
    try:
        seats = []
        descriptions = []
        for seat, bot in enumerate(job.bots):
            launcher, description = seat_launcher(job.sandbox, bot, job.output_dir,
                                                  f"seat{seat}-{bot.name}")
            seats.append(launcher)
            descriptions.append(description)
        spec = MatchSpec(job.match_id, job.seed, len(job.bots), job.rules, job.limits,
                         job.log_path, sandbox=sandbox_header(job.sandbox, descriptions),
                         entered=tuple((bot.name, bot.version) for bot in job.bots))
        match = run_match(spec, list(seats))
        outcome = eventloop.run(_cancellable(match) if cancellable else match)
        log_sha256 = hashlib.sha256(job.log_path.read_bytes()).hexdigest()
    except asyncio.CancelledError:
        if cancellable:  # SIGTERM: the bots are dead, the driver is stopping
            os._exit(128 + signal.SIGTERM)
        raise
    except Exception as error:
        return JobOutcome(job.match_id, None, traceback.format_exc(limit=8),
                          stop=host_trouble(error, job.log_path))
    gone = _folder_gone(job)
    if gone and any(report.disqualified for report in outcome.seats):
        # Removed while the match was played: a bot that could not start or went on is
        # not to blame (no bot can remove its own folder: the sandbox shows it read-only).
        return JobOutcome(job.match_id, None, gone)
    record = MatchRecord(
        match_id=job.match_id, seconds=outcome.seconds, decisions=outcome.decisions,
        rounds=outcome.rounds, round_limit_reached=outcome.round_limit_reached,
        log_path=str(job.log_path), log_sha256=log_sha256,
        seats=tuple(
            SeatResult(seat=r.seat, place=outcome.places[r.seat], score=outcome.scores[r.seat],
                       rounds_won=outcome.rounds_won[r.seat], strikes=r.strikes,
                       disqualified=r.disqualified,
                       faults=tuple({"kind": f.kind.name.lower(), "reason": f.reason}
                                    for f in r.faults))
            for r in outcome.seats))
    return JobOutcome(job.match_id, record)


def _folder_gone(job: MatchJob) -> str | None:
    """Why the match cannot count when a bot's folder is gone (removed while matches are
    played), or None."""
    for bot in job.bots:
        if not bot.folder.is_dir():
            return (f"bot {bot.label}'s folder {bot.folder} is gone (removed while matches "
                    "were played): the match counts for no one; restore the folder, then run "
                    "again to play it")
    return None


def probe_job(jobs: Sequence[ProbeJob]) -> list[str | None]:
    """``probe_entrants`` in a worker process: cancelled, its bots killed, on SIGTERM."""
    cancellable = _handles_sigterm and threading.current_thread() is threading.main_thread()
    try:
        return probe_entrants(jobs, _cancellable if cancellable else None)
    except asyncio.CancelledError:
        if cancellable:
            os._exit(128 + signal.SIGTERM)
        raise


def silence() -> None:
    """A stopping worker says nothing more: its driver is stopping or gone (and reports
    what matters), and what the clean-up of a cancelled match may print (gRPC's and
    asyncio's notes on cancelled calls) would land on the user's terminal."""
    with contextlib.suppress(OSError):
        quiet = os.open(os.devnull, os.O_WRONLY)
        for stream in (1, 2):
            os.dup2(quiet, stream)
        os.close(quiet)


def _terminate(signum: int, _: object) -> None:
    """SIGTERM outside a match: nothing of ours to clean up (the sandbox launcher ends
    with this process and kills what it started)."""
    os._exit(128 + signum)


PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Have the kernel send SIGTERM to this process when its parent ends; if the parent
    ended already (before this was set), end now (prctl(2) advises that check)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        os._exit(128 + signal.SIGTERM)


@contextlib.contextmanager
def starting_workers() -> Iterator[None]:
    """Worker processes started inside ignore SIGINT from their first instruction (the
    disposition is inherited through exec, where a handler or a blocked mask is not): a
    Ctrl-C at the terminal, sent to the whole foreground group, reaches only the driver,
    which stops them itself, instead of interrupting each while it imports (a traceback
    apiece). A Ctrl-C meanwhile is lost: a few milliseconds for a pool, a second or two
    while a LocalCluster starts."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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


def cap_worker_memory() -> None:
    """Put this worker process, the referee of its matches, under its memory cap, so that
    the referee's memory does not depend on what bots send (the inbox bounds see to that;
    the cap stops whatever they miss from reaching the host). Only in a child process: a match
    played in the calling process (tests, Dask's threads) leaves that process alone."""
    if multiprocessing.parent_process() is None:
        return
    from arena.sandbox.cgroups import cap_referee
    from arena.sandbox.limits import MIB, REFEREE_MEMORY_MIB

    cap_referee(REFEREE_MEMORY_MIB * MIB)


def init_worker(driver: int, counter: Any = None, plan: Sequence[int] | None = None) -> None:
    global _handles_sigterm
    cap_worker_memory()
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides what Ctrl-C does
    _handles_sigterm = True
    die_with_parent(driver)
    if counter is not None and plan:
        with counter.get_lock():
            index = counter.value
            counter.value += 1
        pin_process(plan[index % len(plan)])


class LocalExecutor:
    """Worker processes on this machine (spawned: gRPC does not survive fork), each pinned
    to a core of its own when they fill the cores and ``pin_cores`` is on (see
    :func:`core_plan`)."""

    def __init__(self, workers: int, pin_cores: bool = True) -> None:
        self.workers = workers
        self.pin_cores = pin_cores
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None

    def probe(self, jobs: Sequence[ProbeJob]) -> list[str | None]:
        """In a worker process of its own, as matches run (not in the driver, which then
        keeps no sandbox launcher nor gRPC state)."""
        if not jobs:
            return []
        context = multiprocessing.get_context("spawn")
        pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=1, mp_context=context, initializer=init_worker,
            initargs=(os.getpid(),))
        with starting_workers():
            future = pool.submit(probe_job, list(jobs))
        finished = False
        try:
            reasons = future.result()
            finished = True
            return reasons
        finally:
            release_pool(pool, stop=not finished)

    def placement(self, jobs: int) -> list[int] | None:
        """The core of each worker that ``jobs`` matches start, or None: unpinned."""
        workers = min(self.workers, jobs)
        return core_plan(workers, usable_cores()) if self.pin_cores and workers else None

    def run(self, jobs: Iterable[MatchJob]) -> Iterator[JobOutcome]:
        source = iter(jobs)
        first = first_jobs(source, self.workers)
        if not first:
            return
        workers = min(self.workers, len(first))
        context = multiprocessing.get_context("spawn")
        plan = self.placement(len(first))
        self.pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=init_worker,
            initargs=(os.getpid(), context.Value("i", 0), plan) if plan else (os.getpid(),))
        in_flight: dict[concurrent.futures.Future[JobOutcome], MatchJob] = {}
        with starting_workers():  # they start as jobs are submitted
            for job in first:
                in_flight[self.pool.submit(play_job, job)] = job
        finished = False
        try:
            while in_flight:
                future = _first_done(in_flight)
                job = in_flight.pop(future)
                try:
                    outcome = future.result()
                except Exception as error:  # the worker died (e.g. killed by the OOM killer)
                    outcome = JobOutcome(job.match_id, None, f"worker failed: {error!r}")
                yield outcome
                for job in itertools.islice(source, 1):  # the next, as this one is recorded
                    try:
                        in_flight[self.pool.submit(play_job, job)] = job
                    except concurrent.futures.BrokenExecutor as error:
                        # A worker died: every job still to come fails with it, as when the
                        # whole run was submitted at once (those in flight fail just so).
                        for failed in itertools.chain([job], source):
                            yield JobOutcome(failed.match_id, None, f"worker failed: {error!r}")
            finished = True
        finally:
            if finished:
                pool, self.pool = self.pool, None
                release_pool(pool, stop=False)
            else:
                self.shutdown()

    def shutdown(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            release_pool(pool, stop=True)


def _first_done(futures: dict[concurrent.futures.Future[JobOutcome], MatchJob]
                ) -> concurrent.futures.Future[JobOutcome]:
    """The first submitted of the finished ``futures`` (waiting for one if none is): matches
    that finish together are recorded in the order they were started."""
    done, _ = concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_COMPLETED)
    return next(future for future in futures if future in done)


def release_pool(pool: concurrent.futures.ProcessPoolExecutor, stop: bool) -> None:
    """Shut a pool down (``stop``: at once, see ``_stop``), then remove its workers'
    referee cgroups."""
    from arena.sandbox.cgroups import release_referees

    workers = list(getattr(pool, "_processes", {}))
    if stop:
        _stop(pool)
    else:
        pool.shutdown(wait=True)
    release_referees(workers)


def _stop(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Stop a pool at once: SIGTERM to each worker (which cancels its match, the bots
    killed), then wait for them."""
    for process in list(getattr(pool, "_processes", {}).values()):
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)
