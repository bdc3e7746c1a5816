"""The executors keep a bounded window of matches in flight (a few per worker), pulling the
next job from the driver's iterator as each finishes, and the driver makes each job only when
it is pulled: a 200-entrant season (79,600 matches) starts as a small one does.

Matches are real but cheap: each seat is a built-in policy played in the worker
(``fast_matches``), in the local executor's spawned workers and in a LocalCluster's."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pytest

from arena.league import driver
from arena.league import executor as executor_module
from arena.league.cluster import DaskExecutor
from arena.league.driver import RunSummary, run_season, season_schedule
from arena.league.executor import WINDOW_PER_WORKER, JobOutcome, LocalExecutor, MatchJob
from arena.league.preflight import ProbeJob
from arena.league.season import load_season
from arena.league.store import MatchRecord, SeatResult
from benchmarks.scale import make_season

from .fast_matches import fast_jobs, init_fast_worker, use_in_process_seats

KEY = bytes(range(32))


class Pulls:
    """The jobs, counting how many have been pulled."""

    def __init__(self, jobs: Sequence[MatchJob]) -> None:
        self.jobs = jobs
        self.pulled = 0

    def __iter__(self) -> Iterator[MatchJob]:
        for job in self.jobs:
            self.pulled += 1
            yield job


def run_counting(outcomes: Iterable[JobOutcome], pulls: Pulls) -> list[tuple[JobOutcome, int]]:
    """Each outcome with how many jobs had been pulled when it came."""
    return [(outcome, pulls.pulled) for outcome in outcomes]


def check_window(seen: list[tuple[JobOutcome, int]], jobs: Sequence[MatchJob], window: int
                 ) -> None:
    """Every job's outcome once, and when the k-th came, a full window pulled and no more:
    the first ``window`` jobs at the start, then one more per outcome recorded."""
    assert sorted(o.match_id for o, _ in seen) == [j.match_id for j in jobs]
    assert [pulled for _, pulled in seen] == [min(len(jobs), window + k)
                                              for k in range(len(jobs))]


@pytest.mark.parametrize(("workers", "count"), [
    (2, 40),    # a season much larger than the window
    (1, 7),
    (3, 4),     # fewer jobs than the window: all at once, as before
    (2, 0),     # nothing to play: no pool
])
def test_the_local_executor_keeps_a_window_of_jobs_in_flight(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, count: int) -> None:
    monkeypatch.setattr(executor_module, "init_worker", init_fast_worker)
    jobs = fast_jobs(tmp_path, count)
    pulls = Pulls(jobs)
    executor = LocalExecutor(workers, pin_cores=False)
    seen = run_counting(executor.run(pulls), pulls)
    assert [o.error for o, _ in seen] == [None] * count
    check_window(seen, jobs, WINDOW_PER_WORKER * workers)
    assert executor.pool is None


def test_a_worker_killed_mid_run_fails_every_match_left_as_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken pool fails the matches in flight and every one still to come (when every
    job was submitted at once, each of their futures failed so); each is reported once."""
    monkeypatch.setattr(executor_module, "init_worker", init_fast_worker)
    jobs = fast_jobs(tmp_path, 12, killer=3)
    outcomes = list(LocalExecutor(1, pin_cores=False).run(jobs))
    assert sorted(o.match_id for o in outcomes) == [j.match_id for j in jobs]
    # One worker: the three matches before the killer were over before it started.
    assert sorted(o.match_id for o in outcomes if o.error is None) == ["m000", "m001", "m002"]
    failed = [o for o in outcomes if o.error is not None]
    assert len(failed) == 9 and all("worker failed: BrokenProcessPool" in str(o.error)
                                    for o in failed)


@pytest.mark.slow
def test_the_dask_executor_keeps_a_window_of_jobs_in_flight(tmp_path: Path) -> None:
    workers = 2
    executor = DaskExecutor(None, workers=workers, shared_bots=True, pin_cores=False)
    executor._connect().run(use_in_process_seats)
    jobs = fast_jobs(tmp_path, 24)
    pulls = Pulls(jobs)
    seen = run_counting(executor.run(pulls), pulls)
    assert [o.error for o, _ in seen] == [None] * len(jobs)
    check_window(seen, jobs, WINDOW_PER_WORKER * workers)
    assert executor.client is None  # shut down at the end of the run
    # The logs came back into the season folder.
    assert sorted(p.name for p in tmp_path.glob("*.jsonl.gz")) == [
        f"{j.match_id}.jsonl.gz" for j in jobs]


class FirstWindow:
    """An executor that pulls one window of jobs (as the real ones start), records the first
    ``record`` of them and reports the next failed, which ends the run."""

    def __init__(self, made: list[int], record: int, window: int = 4) -> None:
        self.made = made
        self.record = record
        self.window = window
        self.made_at_start = -1
        self.started: list[str] = []

    def probe(self, jobs: Sequence[ProbeJob]) -> list[str | None]:
        return [None for _ in jobs]

    def run(self, jobs: Iterable[MatchJob]) -> Iterator[JobOutcome]:
        first = list(itertools.islice(jobs, self.window))
        self.made_at_start = self.made[0]
        self.started = [job.match_id for job in first]
        for job in first[:self.record]:
            yield JobOutcome(job.match_id, MatchRecord(
                job.match_id, 0.01, 1, 1, False, str(job.log_path),
                (SeatResult(0, 1, 50, 1, 0, False, ()), SeatResult(1, 2, 0, 0, 0, False, ()))))
        yield JobOutcome(first[self.record].match_id, None, "stopped here by the test")

    def shutdown(self) -> None:
        pass


@pytest.mark.slow
def test_the_driver_makes_a_200_entrant_seasons_jobs_as_they_are_pulled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No bot starts: the executor stops the run after its first window. A first run, then
    a resumed one (the recorded matches skipped, the failed one played again)."""
    made = [0]

    def counted(**fields: object) -> MatchJob:
        made[0] += 1
        return MatchJob(**fields)  # type: ignore[arg-type]

    monkeypatch.setattr(driver, "MatchJob", counted)
    season = load_season(make_season(tmp_path, 50))
    schedule = season_schedule(season)
    record = 3
    for run, already in [("first", 0), ("resumed", record)]:
        made[0] = 0
        executor = FirstWindow(made, record)
        started: list[RunSummary] = []
        summary = run_season(season, executor, on_start=started.append, key=KEY)
        assert executor.made_at_start == executor.window, run
        assert made[0] == executor.window, run  # no job made beyond those pulled
        assert executor.started == [schedule[already + i].match_id
                                    for i in range(executor.window)], run
        # The progress counts the season, not the window.
        assert started == [RunSummary(79_600, already, 0, 0, ())], run
        assert (summary.scheduled, summary.already_done, summary.played, summary.failed) == (
            79_600, already, record, 1), run
