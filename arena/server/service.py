"""The server's background work: the validators (``arena.server.validating``) and a match
thread (the ladder, then the final), each with its own store connection. Matches are
played by the season executors' workers: long-lived local worker processes that die with
the server (``MatchPool``: ``arena.league.executor``'s worker set-up and ``play_job``), a
new match started as soon as one ends; or, a batch at a time, the Dask executor
(``[cluster]`` in the league file, ``arena.league.cluster``).

On start, what a killed server left half-done is put right first (``LeagueStore.recover``):
ladder matches left ``running`` are discarded (never counted), final matches left
``running`` are played again, versions left ``building``/``checking`` are queued again.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import contextlib
import errno
import logging
import multiprocessing
import os
import secrets
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from arena.league import executor as executor_module
from arena.league.cluster import DaskExecutor
from arena.league.executor import Executor, JobOutcome, LocalExecutor, MatchJob
from arena.league.store import StoreError
from arena.rules.seeds import MatchSeed
from arena.sandbox import BotManifest, ManifestError, load_manifest
from arena.server import ladder
from arena.server.challenges import ChallengeTurns
from arena.server.config import League
from arena.server.events import event
from arena.server.store import FINAL_ATTEMPTS, LeagueStore
from arena.server.uploads import sweep_uploads
from arena.server.validating import Validators

IDLE_SECONDS = 0.3
RETRY_SECONDS = 5.0
ERRORS_KEPT = 100
"""Background failures kept, the latest (each said once while it lasts)."""


class MatchPool:
    """Long-lived local match workers: the season executor's (its worker set-up: they die
    with the server, a SIGTERM cancels their match and kills its bots; its ``play_job``),
    kept from match to match rather than started for each batch (a new pool costs about
    0.7 s, a 500-point match of the sample bots about 1 s)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.lock = threading.Lock()
        self.closed = False

    def submit(self, job: MatchJob) -> concurrent.futures.Future[JobOutcome]:
        with self.lock:
            if self.closed:  # the server is stopping: the match stays unplayed
                raise RuntimeError("the match workers are stopped")
            if self.pool is not None:
                try:
                    return self.pool.submit(executor_module.play_job, job)
                except concurrent.futures.process.BrokenProcessPool:
                    # A worker died between matches (the OOM killer): no match was in
                    # play on it, so none is lost; this one goes to a new pool.
                    broken, self.pool = self.pool, None
                    executor_module.release_pool(broken, stop=True)
            self.pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=executor_module.init_worker, initargs=(os.getpid(),))
            return self.pool.submit(executor_module.play_job, job)

    def shutdown(self, close: bool = False) -> None:
        """Stop at once: each worker's match cancelled, its bots killed; ``close``: for
        good (the server is stopping), else a new pool starts at the next match."""
        with self.lock:
            self.closed = self.closed or close
            pool, self.pool = self.pool, None
        if pool is not None:
            executor_module.release_pool(pool, stop=True)


HOST_SHORTAGES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EAGAIN,
                            errno.ENOBUFS, errno.EINTR})
"""What the host runs short of for a while: a version is not failed for it."""


class LeagueService:
    def __init__(self, league: League) -> None:
        self.league = league
        self.stop_event = threading.Event()
        self.threads: list[threading.Thread] = []
        self.validators = Validators(league, self.stop_event, self._guarded)
        self.executor: Executor | None = None
        self.executor_lock = threading.Lock()
        self.pool = MatchPool(league.ladder.parallel)
        self.turns = ChallengeTurns()
        self.errors: list[str] = []

    # -- life ----------------------------------------------------------------------------

    def start(self) -> dict[str, int]:
        from arena.sandbox.sweep import sweep_leftovers

        sweep_leftovers()
        sweep_uploads(self.league.data / "bots")
        store = LeagueStore(self.league.store_path)
        try:
            recovered = store.recover()
        finally:
            store.close()
        self.threads += self.validators.start()
        thread = threading.Thread(target=self._guarded, args=(self._match_loop,),
                                  name="arena-matches", daemon=True)
        thread.start()
        self.threads.append(thread)
        return recovered

    def stop(self) -> None:
        self.stop_event.set()
        with self.executor_lock:
            if self.executor is not None:
                self.executor.shutdown()
        self.pool.shutdown(close=True)
        self.validators.close()
        for thread in self.threads:
            thread.join(timeout=30)

    def _guarded(self, target: Callable[[], None]) -> None:
        """Run a loop; if it fails (a full disk, a damaged store), say so and start it
        again after a pause: the site stays up, and the work resumes once the trouble is
        fixed. A store's trouble is said by its message (it names the file and what to
        do), once while it lasts; anything else with its traceback."""
        said = None
        while not self.stop_event.is_set():
            try:
                target()
            except Exception as error:
                if self.stop_event.is_set():
                    return
                message = (str(error) if isinstance(error, StoreError)
                           else traceback.format_exc(limit=6))
                if message != said:
                    self.errors.append(message)
                    del self.errors[:-ERRORS_KEPT]
                    event("error", logging.ERROR, what="background work failed",
                          retry_seconds=RETRY_SECONDS, message=message)
                    said = message
                self.stop_event.wait(RETRY_SECONDS)

    # -- matches -------------------------------------------------------------------------

    def _match_loop(self) -> None:
        store = LeagueStore(self.league.store_path)
        try:
            # Nothing of this loop is being played now: what a failed run of it left
            # ``running`` is released (at the first run, ``recover`` did it already).
            store.release_matches()
            if self.league.cluster is None:
                self._continuous(store)
            else:
                self._in_batches(store)
        finally:
            if not self.stop_event.is_set():  # a failure: its matches' workers go too
                self.pool.shutdown()
            store.close()

    def _next_jobs(self, store: LeagueStore, slots: int, salt: int,
                   ladder_in_flight: bool = False) -> list[MatchJob]:
        """Up to ``slots`` matches to play now (recorded ``running``): the ladder's and
        the challenges in turn, or the final's once the league is in its final phase (and
        the ladder's last are over)."""
        if ladder.current_phase(store, self.league) != "final":
            return self.turns.jobs(store, slots,
                                   lambda count: self._ladder_jobs(store, count, salt),
                                   lambda match_id, seed, seats: self._job(store, match_id,
                                                                           seed, seats))
        store.drop_challenges("the league's final began before it was played")
        if store.meta("phase") != "final":
            store.set_meta({"phase": "final"})
        return [] if ladder_in_flight else self._final_jobs(store, slots)

    def _in_batches(self, store: LeagueStore) -> None:
        """On a cluster: a batch of matches at a time through the Dask executor."""
        rounds = 0
        while not self.stop_event.is_set():
            jobs = self._next_jobs(store, self.league.ladder.parallel, rounds)
            rounds += 1
            if jobs:
                self._play(store, jobs)
            else:
                self.stop_event.wait(IDLE_SECONDS)

    def _continuous(self, store: LeagueStore) -> None:
        """Locally: long-lived workers (the season executor's set-up and ``play_job``), a
        new match started as soon as one ends."""
        in_flight: dict[concurrent.futures.Future[JobOutcome], MatchJob] = {}
        rounds = 0
        while not self.stop_event.is_set():
            free = self.league.ladder.parallel - len(in_flight)
            if free > 0:
                ladder_playing = any(m.kind == "ladder" for m in (
                    store.match(job.match_id) for job in in_flight.values()) if m)
                for job in self._next_jobs(store, free, rounds, ladder_playing):
                    in_flight[self.pool.submit(job)] = job
                    event("match_started", match_id=job.match_id)
                rounds += 1
            if not in_flight:
                self.stop_event.wait(IDLE_SECONDS)
                continue
            finished, _ = concurrent.futures.wait(
                in_flight, timeout=IDLE_SECONDS, return_when=concurrent.futures.FIRST_COMPLETED)
            if self.stop_event.is_set():
                return  # left running: the next start discards or replays them
            broken = False
            for future in finished:
                job = in_flight.pop(future)
                try:
                    outcome = future.result()
                except Exception as error:  # the worker died (the OOM killer...)
                    outcome = JobOutcome(job.match_id, None, f"worker failed: {error!r}")
                    broken = True
                self._record(store, outcome)
            if broken:  # a pool that lost a worker takes no more work: a new one
                for future, job in in_flight.items():
                    future.cancel()
                    self._record(store, JobOutcome(job.match_id, None,
                                                   "worker failed: its pool broke"))
                in_flight.clear()
                self.pool.shutdown()

    def _record(self, store: LeagueStore, outcome: JobOutcome) -> None:
        match = store.match(outcome.match_id)
        assert match is not None
        if outcome.record is not None:
            store.record(outcome.record, match.seats)
            event("match", match_id=match.match_id, kind=match.kind, status="done",
                  seats=list(match.seats))
        else:
            reason = outcome.error or outcome.stop or "the match failed"
            store.record_failure(outcome.match_id, reason)
            event("match", match_id=match.match_id, kind=match.kind, status="failed",
                  seats=list(match.seats), reason=str(reason)[:300])

    def _ladder_step(self, store: LeagueStore, salt: int) -> bool:
        """One batch of ladder matches, played to the end (the cluster's way)."""
        jobs = self._ladder_jobs(store, self.league.ladder.parallel, salt)
        self._play(store, jobs)
        return bool(jobs)

    def _ladder_jobs(self, store: LeagueStore, slots: int, salt: int) -> list[MatchJob]:
        board = ladder.ladder_ratings(store, self.league)
        tables = ladder.pick_tables(store, self.league, board, slots, salt)
        key = store.key("ladder_key")
        jobs = []
        for seats in tables:
            match_id = store.start_ladder_match(seats)
            try:
                jobs.append(self._job(store, match_id, MatchSeed.keyed(key, match_id), seats))
            except (ManifestError, OSError) as error:  # a bot's folder is gone or damaged
                store.record_failure(match_id, f"cannot start the match: {error}")
                self._fail_unplayable(store, seats)
        return jobs

    def _fail_unplayable(self, store: LeagueStore, seats: Sequence[int]) -> None:
        """Versions whose stored folder no longer loads leave the ladder (``failed``, with
        the reason for their author, in its own words: no server path, nor another bot's),
        so the matchmaker does not pick them again. A passing shortage of the host's (no
        file descriptor or memory left, as a flood of half-open connections causes)
        fails the match only: the version plays again once it is over."""
        for version_id in seats:
            row = store.db.execute("SELECT COALESCE(play_folder, folder) FROM versions "
                                   "WHERE id = ?", (version_id,)).fetchone()
            folder = Path(row[0])
            try:
                load_manifest(folder)
                continue
            except ManifestError as error:
                problem = str(error).replace(str(folder), "the stored folder")
            except OSError as error:
                if error.errno in HOST_SHORTAGES:
                    continue
                problem = error.strerror or type(error).__name__
            store.set_status(version_id, "failed",
                             build_log=f"its stored folder cannot be used: {problem}")

    def _final_jobs(self, store: LeagueStore, slots: int) -> list[MatchJob]:
        """The final's next matches (scheduling it first, under a fresh secret key); once
        every one is recorded, the keys are published."""
        if not store.count_matches("WHERE kind = 'final'"):
            entrants = ladder.final_entrants(store)
            if len(entrants) < self.league.ladder.table_size:
                store.set_meta({"final_note": f"the final needs {self.league.ladder.table_size}"
                                f" active bots; {len(entrants)} are"})
                return []
            try:
                planned = ladder.final_schedule(self.league, entrants)
            except ladder.FinalTooLarge as error:  # shown on the final's page
                store.set_meta({"final_note": str(error)})
                return []
            store.schedule_final(planned, secrets.token_bytes(32))
        if not store.count_matches("WHERE kind = 'final' AND status = 'scheduled'"):
            failed = store.count_matches("WHERE kind = 'final' AND status = 'failed'")
            if failed and store.meta("final_closed") is None:
                # Not published with matches missing: once the key is public, a secret deal
                # not yet played cannot be played secretly. The organiser decides.
                store.set_meta({"final_note": f"{failed} final match(es) failed "
                                f"{FINAL_ATTEMPTS} times (the host's trouble, not a bot's): "
                                "`arena server final retry` plays them again, `arena server "
                                "final close` ends the final without them"})
                return []
            if store.meta("final_complete") is None and not store.count_matches(
                    "WHERE kind = 'final' AND status = 'running'"):
                # Every final match is recorded: the key may now be published (reveal).
                # The ladder has stopped too: its key is published with the final's, so
                # every match of the league can be re-dealt and checked.
                store.set_meta({"final_complete": str(time.time()),
                                "final_key_revealed": store.meta("final_key") or "",
                                "ladder_key_revealed": store.meta("ladder_key") or ""})
            return []
        key = store.key("final_key")
        jobs = []
        for match in store.matches("WHERE kind = 'final' AND status = 'scheduled'",
                                   limit=slots):
            if store.start_final_match(match.match_id):
                try:
                    jobs.append(self._job(store, match.match_id,
                                          MatchSeed.keyed(key, match.label), match.seats))
                except (ManifestError, OSError) as error:
                    store.record_failure(match.match_id, f"cannot start the match: {error}")
        return jobs

    def _job(self, store: LeagueStore, match_id: str, seed: MatchSeed,
             seats: Sequence[int]) -> MatchJob:
        bots: list[BotManifest] = []
        for version_id in seats:
            row = store.db.execute("SELECT COALESCE(play_folder, folder) FROM versions "
                                   "WHERE id = ?", (version_id,)).fetchone()
            bots.append(load_manifest(Path(row[0])))
        output = self.league.data / "output" / match_id
        output.mkdir(parents=True, exist_ok=True)
        logs = self.league.data / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        return MatchJob(match_id, seed, tuple(bots), self.league.rules, self.league.limits,
                        self.league.sandbox, logs / f"{match_id}.jsonl.gz", output)

    def _play(self, store: LeagueStore, jobs: list[MatchJob]) -> None:
        if not jobs:
            return
        executor: Executor
        cluster = self.league.cluster
        if cluster is None:
            executor = LocalExecutor(len(jobs), pin_cores=False)
        else:
            executor = DaskExecutor(cluster.address, len(jobs), pin_cores=False,
                                    security=cluster.security())
        with self.executor_lock:
            if self.stop_event.is_set():
                return
            self.executor = executor
        for job in jobs:
            event("match_started", match_id=job.match_id)
        try:
            for outcome in executor.run(jobs):
                if self.stop_event.is_set():
                    break  # left running: the next start discards or replays them
                self._record(store, outcome)
        finally:
            with self.executor_lock:
                self.executor = None
            with contextlib.suppress(Exception):
                executor.shutdown()
