"""The league server's long-lived match workers: one that dies between matches (the OOM
killer picks an idle process too) costs no match; the next match goes to a new pool."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from arena.server.service import MatchPool
from tests.league.fast_matches import fast_jobs


def test_a_worker_killed_between_matches_costs_no_match(tmp_path: Path) -> None:
    pool = MatchPool(1)
    try:
        first, second = fast_jobs(tmp_path, 2)
        assert pool.submit(first).result(timeout=120).error is None
        assert pool.pool is not None
        (worker,) = pool.pool._processes  # the one idle worker
        os.kill(worker, signal.SIGKILL)
        deadline = time.monotonic() + 30  # until the pool has seen its worker die
        while not pool.pool._broken:
            assert time.monotonic() < deadline, "the pool never saw its worker die"
            time.sleep(0.05)
        outcome = pool.submit(second).result(timeout=120)
        assert outcome.error is None, outcome.error
        assert outcome.record is not None and outcome.match_id == second.match_id
        assert second.log_path.exists()
    finally:
        pool.shutdown(close=True)
