"""Validation of a submitted version: its build, then ``arena check``'s matches (against
the provoker, from the seeds that make the bot name a colour at once; under the league's
rules), in the sandbox, before it may play (Kaggle's validation episode).

Both steps run in a worker process of their own (``Validator``), never in the server, so
a bot that hangs or floods costs a worker, not the site; the worker dies with the server.
A failure leaves the version ``failed`` with its build log or check report (shown to its
author only) and changes nothing else.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import multiprocessing
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from arena.league.executor import cap_worker_memory, die_with_parent, release_pool
from arena.league.season import SandboxSettings
from arena.referee import check, eventloop
from arena.referee.limits import Limits
from arena.referee.match import MatchOutcome, Seat, run_match
from arena.rules.options import RuleOptions
from arena.sandbox import (
    BotManifest,
    BuildError,
    ManifestError,
    SandboxError,
    limits_from,
    make_launcher,
    prepare,
    sandbox_record,
)
from arena.sandbox.fetch import ecosystems_of

Outcome = TypeVar("Outcome")
LOG_TAIL_BYTES = 64 * 1024
"""Of each build output file, the end kept in the build log shown to the author."""


@dataclass(frozen=True)
class ValidationJob:
    version_id: int
    manifest: BotManifest
    sandbox: SandboxSettings
    logs: Path
    """The version's own folder: build output, check logs, the bot's stderr."""
    builds: Path
    """The build cache (shared by the versions: the same sources build once)."""
    matches: int
    rules: RuleOptions
    """The league's rules and limits: the check's matches are played under them (its
    target score, variants and deadlines), so a version is checked for the matches it
    will play."""
    limits: Limits
    owner: str | None = None
    """Whose compiler caches the build may use (``arena.sandbox.pipeline``)."""


@dataclass(frozen=True)
class BuildOutcome:
    built: BotManifest | None
    """The manifest to play with (None: the build failed)."""
    log: str


@dataclass(frozen=True)
class CheckOutcome:
    passed: bool
    report: str


def _tail(path: Path) -> str:
    with contextlib.suppress(OSError), open(path, "rb") as stream:
        stream.seek(0, os.SEEK_END)
        size = stream.tell()
        stream.seek(max(0, size - LOG_TAIL_BYTES))
        text = stream.read().decode("utf-8", errors="replace")
        return ("[…]\n" if size > LOG_TAIL_BYTES else "") + text
    return ""


def build_version(job: ValidationJob) -> BuildOutcome:
    """The version's build step (if any) in the sandbox; its output as the build log."""
    if not job.manifest.build and not ecosystems_of(job.manifest):
        return BuildOutcome(job.manifest, "no build step (bot.toml has no build)")
    try:
        built = prepare(job.manifest, job.sandbox.backend, limits_from(job.sandbox), job.logs,
                        trusted=job.sandbox.trusted_bots, cache=job.builds, owner=job.owner)
        failure = ""
    except (BuildError, SandboxError, ManifestError) as error:
        built, failure = None, str(error)
    outputs = sorted((job.logs / "builds").glob("*.log")) if (job.logs / "builds").is_dir() \
        else []
    parts = [f"== {path.name}\n{_tail(path)}" for path in outputs]
    if failure:
        parts.append(f"== the build failed\n{failure}")
    elif not outputs:
        parts.append("the build was reused from the build cache (the same sources built "
                     "before)")
    return BuildOutcome(built, "\n".join(parts))


def check_version(job: ValidationJob, bot: BotManifest) -> CheckOutcome:
    """``arena check``'s matches (the bot against the provoker, every decision kind);
    the verdict, how a crash ended and the warnings, as the report shown to the author."""
    limits = limits_from(job.sandbox)
    backend, trusted = job.sandbox.backend, job.sandbox.trusted_bots
    try:
        make_launcher(backend, bot, limits, job.logs, "check", trusted=trusted)
    except SandboxError as error:
        return CheckOutcome(False, f"FAIL the sandbox refused the bot: {error}")
    watched: list[check.WatchedSeat] = []

    def launcher(index: int) -> Seat:
        watched.append(check.WatchedSeat(make_launcher(
            backend, bot, limits, job.logs, f"check-{index + 1}-{bot.name}",
            trusted=trusted)))
        return watched[-1]

    played: list[tuple[MatchOutcome, int, check.WatchedSeat]] = []
    for (spec, seats, bot_seat), seat in zip(check.plan(launcher, job.matches, job.logs),
                                             watched, strict=True):
        spec = dataclasses.replace(spec, options=job.rules, limits=job.limits,
                                   sandbox=sandbox_record([seat]))
        played.append((eventloop.run(run_match(spec, seats)), bot_seat, seat))
    items = check.verdict([(outcome, seat) for outcome, seat, _ in played], None,
                          job.rules.variants)
    lines = [f"{'PASS' if item.passed else 'FAIL'} {item.name}: {item.detail}"
             for item in items]
    for crash in check.crashes(played):
        lines.append(f"CRASH in {crash.match_id}: {crash.how}; the last lines of its stderr:")
        lines += [f"  | {line}" for line in crash.stderr or ("(nothing)",)]
    logged = [(outcome.log_path, seat) for outcome, seat, _ in played
              if outcome.log_path is not None and outcome.log_path.exists()]
    timeouts = sum(f.kind.name == "TIMEOUT" for outcome, seat, _ in played
                   for f in outcome.seats[seat].faults)
    lines += [f"WARN {w}" for w in check.warnings(check.habits(logged),
                                                   bot.protocol == "stdio-json", timeouts)]
    passed = all(item.passed for item in items)
    lines.append("all checks passed" if passed else
                 f"{sum(not i.passed for i in items)} check(s) failed")
    return CheckOutcome(passed, "\n".join(lines))


def _worker_init(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides what Ctrl-C does
    die_with_parent(parent)
    cap_worker_memory()  # it referees the check's matches


class Validator:
    """One worker process that builds and checks versions, one at a time."""

    def __init__(self) -> None:
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.closed = False

    def _pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self.pool is None:
            self.pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_init, initargs=(os.getpid(),))
        return self.pool

    def _run(self, work: Callable[..., Outcome], *args: object) -> Outcome | str:
        """``work(*args)`` in the worker; if the worker is found dead (killed since its
        last job, or during this one), once more in a new one; the reason if that dies
        too."""
        for attempt in (1, 2):
            if self.closed:
                return "the server is stopping"
            try:
                return self._pool().submit(work, *args).result()
            except concurrent.futures.process.BrokenProcessPool as error:
                self.shutdown()
                if attempt == 2:
                    return f"the validation worker died ({error})"
        raise AssertionError("unreachable")

    def build(self, job: ValidationJob) -> BuildOutcome:
        outcome = self._run(build_version, job)
        return BuildOutcome(None, outcome) if isinstance(outcome, str) else outcome

    def check(self, job: ValidationJob, bot: BotManifest) -> CheckOutcome:
        outcome = self._run(check_version, job, bot)
        return CheckOutcome(False, outcome) if isinstance(outcome, str) else outcome

    def close(self) -> None:
        """Stop for good (the server is stopping): the job in hand is not retried."""
        self.closed = True
        self.shutdown()

    def shutdown(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            release_pool(pool, stop=True)
