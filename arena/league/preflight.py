"""Before the first match: can every entrant start and say hello?

An entrant whose folder the sandbox cannot read, whose ``run`` command does not exist, or
that crashes before it connects would otherwise be found only when its matches fail (or the
autopilot plays them). So before a season plays, each entrant that has matches to play is
started once, as in a real match (its sandbox, its limits), for a one-round match against
an in-process opponent; it passes when it says hello. Only hello counts: how the bot plays
is the season's business (a bot slow to decide is handed to the autopilot at once, so the
probe stays short). A slow starter is not refused: the probe waits
``PROBE_HELLO_FACTOR`` times the season's hello timeout (at least ``PROBE_HELLO_MINIMUM``
seconds), since every entrant starts at once here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bots.policies import GreedyPolicy
from arena.league.season import SandboxSettings
from arena.league.seat_launcher import seat_launcher
from arena.referee import eventloop
from arena.referee.limits import Limits
from arena.referee.match import InProcessSeat, MatchSpec, run_match
from arena.rules.options import RuleOptions
from arena.sandbox.manifest import BotManifest
from arena.text import file_label

PROBE_HELLO_FACTOR = 3
PROBE_HELLO_MINIMUM = 30.0
PROBE_AT_ONCE = 4
"""Entrants started at the same time (more would slow each other's start-up)."""


@dataclass(frozen=True)
class ProbeJob:
    """One entrant to start once (picklable, for a worker process or a cluster task)."""

    bot: BotManifest
    sandbox: SandboxSettings
    limits: Limits
    output_dir: Path
    """Where the probe's bot output goes (kept when the entrant fails, for a look)."""


def probe_limits(limits: Limits) -> Limits:
    """A generous hello; then no time to think, so a slow thinker is soon replaced by the
    autopilot and the probe ends (only the hello counts)."""
    return dataclasses.replace(
        limits, hello_timeout=max(PROBE_HELLO_MINIMUM, PROBE_HELLO_FACTOR * limits.hello_timeout),
        decision_deadline=0.01, time_bank=0.0, strike_limit=1)


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].strip()[:300] if lines else ""


async def _probe(job: ProbeJob, index: int) -> str | None:
    label = f"probe-{job.bot.name}"
    launcher, description = seat_launcher(job.sandbox, job.bot, job.output_dir, label)
    spec = MatchSpec(f"probe-{index}", 1, 2, RuleOptions(target_score=1),
                     probe_limits(job.limits), None, sandbox=description)
    opponent = InProcessSeat(GreedyPolicy(1), "probe-opponent")
    outcome = await run_match(spec, [launcher, opponent])
    seat = outcome.seats[0]
    if seat.connected:
        return None
    reasons = [f.reason for f in seat.faults if f.kind.name == "NO_HELLO"] or ["no hello"]
    said = _last_line(job.output_dir / f"{file_label(label)}.stderr.log") or _last_line(
        job.output_dir / f"{file_label(label)}.stdout.log")
    return reasons[0] + (f"; its last words: {said}" if said else "")


async def _probe_all(jobs: Sequence[ProbeJob]) -> list[str | None]:
    gate = asyncio.Semaphore(PROBE_AT_ONCE)

    async def one(index: int, job: ProbeJob) -> str | None:
        async with gate:
            try:
                return await _probe(job, index)
            except Exception as error:  # the sandbox refused the bot (SandboxError ...)
                return str(error).strip().splitlines()[0] if str(error).strip() else repr(error)

    return list(await asyncio.gather(*(one(i, job) for i, job in enumerate(jobs))))


def probe_entrants(jobs: Sequence[ProbeJob],
                   wrap: Callable[[Awaitable[list[str | None]]],
                                  Coroutine[Any, Any, list[str | None]]] | None = None
                   ) -> list[str | None]:
    """Start each job's bot once; for each, None (it said hello) or why it cannot play.
    The output of entrants that passed is removed. ``wrap``: a coroutine running the probes
    (a worker's makes them cancellable by SIGTERM)."""
    probes = _probe_all(jobs)
    reasons = eventloop.run(wrap(probes) if wrap is not None else probes)
    for job, reason in zip(jobs, reasons, strict=True):
        if reason is None:
            label = file_label(f"probe-{job.bot.name}")
            for name in (f"{label}.stdout.log", f"{label}.stderr.log"):
                (job.output_dir / name).unlink(missing_ok=True)
    folders = {job.output_dir for job in jobs}
    for folder in folders:
        if folder.is_dir() and not any(folder.iterdir()):
            shutil.rmtree(folder, ignore_errors=True)
    return reasons


def describe_broken(entrants: Sequence[tuple[BotManifest, str]]) -> str:
    """One line naming every entrant that cannot play, and why."""
    return "; ".join(f"{bot.label} ({bot.folder}): {reason}" for bot, reason in entrants)


__all__ = ["ProbeJob", "describe_broken", "probe_entrants", "probe_limits"]
