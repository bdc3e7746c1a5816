"""What the organiser's state page shows (``/organiser``, ``/api/organiser/state``): the
validation queue and the matches being played, what each worker does, the recent
failures, the phase and the final's schedule, the data folder's disk use and the uptime.
Read from the store (the source of truth) and from the service's threads (what each
validator holds now); values only, no HTTP here."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.server import ladder
from arena.server.config import League
from arena.server.moments import final_start, iso_utc
from arena.server.service import LeagueService
from arena.server.store import LeagueStore, Version

RECENT_FAILURES = 50
"""Failed versions, and failed matches, listed: the newest."""
REASON_CHARACTERS = 600
"""Of a failure's log, the end shown (where a build or a check says what went wrong)."""


@dataclass(frozen=True)
class Seat:
    bot: str
    version: int
    author: str


@dataclass(frozen=True)
class Queued:
    """A version in validation: waiting (``position`` in its lane) or being validated."""

    version_id: int
    bot: str
    number: int
    author: str
    lane: str
    stage: str
    """queued, building or checking."""
    position: int | None
    submitted_at: float
    age_seconds: float
    """Since it was submitted."""
    stage_started_at: float | None


@dataclass(frozen=True)
class Running:
    match_id: str
    kind: str
    seats: tuple[Seat, ...]
    started_at: float | None


@dataclass(frozen=True)
class Worker:
    name: str
    kind: str
    """``validation``, ``quick validation`` (quick checks only) or ``match``."""
    busy: bool
    runs: str | None
    """What it runs: ``version 12 (greedy v3)``, ``match L000041``."""
    since: float | None


@dataclass(frozen=True)
class Failure:
    what: str
    """``version 12 (greedy v3)`` or ``match L000041``."""
    at: float | None
    reason: str


@dataclass(frozen=True)
class FinalSchedule:
    open_until: str | None
    frozen_until: str | None
    """The league file's times (ISO-8601, UTC); the final starts at ``frozen_until``."""
    starts: str | None
    """When the final starts, with how far off (None once it has, or with no time set)."""
    matches: dict[str, int]
    """Final matches by status."""
    note: str | None
    complete: bool


@dataclass(frozen=True)
class DiskUse:
    data: str
    used_bytes: int
    by_folder: dict[str, int]
    """Bytes under each entry of the data folder."""
    free_bytes: int
    """Left on the data folder's file system."""


@dataclass(frozen=True)
class OrganiserState:
    league: str
    phase: str
    now: float
    started_at: float
    uptime_seconds: float
    queue: tuple[Queued, ...]
    running: tuple[Running, ...]
    workers: tuple[Worker, ...]
    failed_versions: tuple[Failure, ...]
    failed_matches: tuple[Failure, ...]
    background_errors: tuple[str, ...]
    """The service's latest background failures (each retried), oldest first."""
    final: FinalSchedule
    disk: DiskUse


def version_name(version: Version) -> str:
    return f"version {version.id} ({version.bot} v{version.number})"


def organiser_state(store: LeagueStore, league: League, service: LeagueService,
                    started_at: float) -> OrganiserState:
    now = time.time()
    versions = {v.id: v for v in store.versions()}
    phase = ladder.current_phase(store, league)
    running = _running(store, versions)
    counts = store.status_counts("final")
    return OrganiserState(
        league=league.name, phase=phase, now=now, started_at=started_at,
        uptime_seconds=now - started_at, queue=_queue(store, league, versions, now),
        running=running, workers=_workers(store, league, service, versions, running),
        failed_versions=_failed_versions(store), failed_matches=_failed_matches(store),
        background_errors=tuple(service.errors[-10:]),
        final=FinalSchedule(iso_utc(league.phases.open_until),
                            iso_utc(league.phases.frozen_until),
                            final_start(league.phases.frozen_until, phase, now), counts,
                            store.meta("final_note"),
                            store.meta("final_complete") is not None),
        disk=disk_use(league.data))


def _queue(store: LeagueStore, league: League, versions: dict[int, Version], now: float
           ) -> tuple[Queued, ...]:
    found = []
    for version in versions.values():
        if version.status not in ("queued", "building", "checking"):
            continue
        state = store.queue_state(version.id, league.validators)
        found.append(Queued(
            version.id, version.bot, version.number, version.author,
            state.lane if state else "build", version.status,
            state.position if state else None, version.submitted_at,
            now - version.submitted_at, state.stage_started_at if state else None))
    # Being validated first, then by place in the queue (oldest first).
    return tuple(sorted(found, key=lambda q: (q.stage == "queued", q.position or 0,
                                              q.version_id)))


def _seats(seats: Sequence[int], versions: dict[int, Version]) -> tuple[Seat, ...]:
    return tuple(Seat(versions[v].bot, versions[v].number, versions[v].author)
                 for v in seats)


def _running(store: LeagueStore, versions: dict[int, Version]) -> tuple[Running, ...]:
    # When each began is a column the match lists do not read.
    started = dict(store.db.execute(
        "SELECT match_id, started_at FROM matches WHERE status = 'running'").fetchall())
    return tuple(Running(m.match_id, m.kind, _seats(m.seats, versions),
                         started.get(m.match_id))
                 for m in store.matches("WHERE status = 'running'"))


def _workers(store: LeagueStore, league: League, service: LeagueService,
             versions: dict[int, Version], running: tuple[Running, ...]
             ) -> tuple[Worker, ...]:
    """The validators, each with the version it holds; then the match workers' slots
    (``[ladder] parallel``), a running match in each taken one."""
    workers = []
    names = service.validators.names()
    doing = dict(service.validators.doing)
    for index, name in enumerate(names):
        kind = "quick validation" if index == len(names) - 1 else "validation"
        held = doing.get(name)
        version = versions.get(held[0]) if held else None
        workers.append(Worker(name, kind, held is not None,
                              version_name(version) if version else
                              (f"version {held[0]}" if held else None),
                              held[1] if held else None))
    where = "" if league.cluster is None else f" on {league.cluster.address}"
    for slot in range(league.ladder.parallel):
        match = running[slot] if slot < len(running) else None
        workers.append(Worker(f"match slot {slot + 1}{where}", "match", match is not None,
                              f"match {match.match_id}" if match else None,
                              match.started_at if match else None))
    return tuple(workers)


def _failed_versions(store: LeagueStore) -> tuple[Failure, ...]:
    found = store.versions(
        "WHERE v.id IN (SELECT id FROM versions WHERE status = 'failed' "
        f"ORDER BY id DESC LIMIT {RECENT_FAILURES})", logs=True)
    return tuple(Failure(version_name(v), v.submitted_at,
                         _tail(v.check_report or v.build_log or "no log"))
                 for v in sorted(found, key=lambda v: -v.id))


def _failed_matches(store: LeagueStore) -> tuple[Failure, ...]:
    return tuple(Failure(f"match {m.match_id} ({m.kind})", m.finished_at,
                         _tail(m.error or "no reason recorded"))
                 for m in store.matches("WHERE status = 'failed'", newest_first=True,
                                        limit=RECENT_FAILURES))


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= REASON_CHARACTERS else "…" + text[-REASON_CHARACTERS:]


def disk_use(data: Path) -> DiskUse:
    """What the data folder holds on disk (allocated blocks, as ``du`` counts them), by
    entry; folders this process may not read (a bot's own) count as far as it can."""
    by_folder: dict[str, int] = {}
    for entry in sorted(data.iterdir(), key=lambda e: e.name) if data.is_dir() else ():
        by_folder[entry.name] = _bytes_under(entry)
    return DiskUse(str(data), sum(by_folder.values()), by_folder,
                   shutil.disk_usage(data).free if data.is_dir() else 0)


def _bytes_under(path: Path) -> int:
    try:
        status = path.lstat()
    except OSError:
        return 0
    total = status.st_blocks * 512
    if path.is_dir() and not path.is_symlink():
        for folder, folders, files in os.walk(path, onerror=lambda error: None):
            for name in files + folders:
                try:
                    total += os.lstat(os.path.join(folder, name)).st_blocks * 512
                except OSError:
                    continue
    return total
