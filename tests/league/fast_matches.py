"""Cheap real matches for executor tests: the referee plays each seat's built-in policy (the
bot's name: greedy, random) in the worker, so no bot process starts. Worker processes import
this module (by name) to swap the executor's seat launcher, as ``benchmarks.scale`` does in
its own process."""

from __future__ import annotations

import os
import signal
import zlib
from pathlib import Path
from typing import Any

from arena.bots.policies import POLICIES
from arena.league import executor as executor_module
from arena.league.executor import MatchJob, init_worker
from arena.league.season import SandboxSettings
from arena.referee.limits import Limits
from arena.referee.match import InProcessSeat
from arena.rules.options import RuleOptions
from arena.rules.seeds import MatchSeed, seat_seed
from arena.sandbox.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[2]
BOTS = tuple(load_manifest(ROOT / "sample_bots" / "python" / name) for name in ("greedy", "random"))
KILLS_ITS_WORKER = "kills-its-worker"
"""A match whose output folder has this name kills the worker playing it (SIGKILL, as the
OOM killer would)."""


def in_process_seat(settings: SandboxSettings, bot: Any, log_dir: Path, label: str
                    ) -> tuple[InProcessSeat, dict[str, Any]]:
    if log_dir.name == KILLS_ITS_WORKER:
        os.kill(os.getpid(), signal.SIGKILL)
    seat = int(label.removeprefix("seat").split("-")[0])
    policy = POLICIES[bot.name](seat_seed(zlib.crc32(log_dir.name.encode()), seat))
    return InProcessSeat(policy, bot.name, bot.version), {"backend": "in-process"}


def use_in_process_seats() -> None:
    """In this process (a Dask worker: ``client.run``), seats play in process."""
    executor_module.seat_launcher = in_process_seat  # type: ignore[assignment]


def init_fast_worker(*args: Any) -> None:
    """The local executor's worker initializer, then in-process seats."""
    init_worker(*args)
    use_in_process_seats()


def fast_jobs(folder: Path, count: int, killer: int | None = None) -> list[MatchJob]:
    """``count`` short matches (to 50 points), their logs under ``folder``; the match at
    index ``killer`` kills its worker."""
    return [MatchJob(f"m{index:03d}", MatchSeed.public(index), BOTS if index % 2 else BOTS[::-1],
                     RuleOptions(target_score=50), Limits(), SandboxSettings(backend="plain"),
                     folder / f"m{index:03d}.jsonl.gz",
                     folder / (KILLS_ITS_WORKER if index == killer else f"m{index:03d}"))
            for index in range(count)]
