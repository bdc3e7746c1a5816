"""``LeagueStore``'s validation queue: which queued version a free validator takes next,
where each version stands, and the results that identical sources can reuse.

Each queued version is put in a *lane* as it is submitted: ``quick`` (no build step) or
``build``. A free validator takes the oldest queued version (first in, first out across
authors) whose author has no other version being validated (``PER_AUTHOR``); the quick
lane's own validator takes quick checks only, so a quick check never waits behind a
compile, only behind another quick check. A version's *validation key* is what its result
depends on (its sources, its build, the toolchain and the league's settings): a version
whose key matches one already validated takes that result at once (``reusable``).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

from arena.server.events import event
from arena.server.store_base import StoreBase, league_reading
from arena.server.versions import SET_STATUS

QUEUE_SCHEMA = """
CREATE TABLE IF NOT EXISTS validation (     -- a version's way through validation
    version_id INTEGER PRIMARY KEY REFERENCES versions(id),
    lane TEXT NOT NULL CHECK (lane IN ('quick', 'build')),
    key TEXT NOT NULL,                  -- what its result depends on (validation key)
    taken_at REAL,                      -- when a validator took it
    stage_started_at REAL,              -- when its stage (building, checking) began
    finished_at REAL,
    reused_from INTEGER REFERENCES versions(id)
);
CREATE INDEX IF NOT EXISTS validation_by_key ON validation (key, finished_at);
"""
"""Run at every open (``IF NOT EXISTS``): a store made before it gets the table once."""

PER_AUTHOR = 1
"""Versions of one author validated at once, at most."""
RECENT = 20
"""Finished validations of a lane whose median duration makes the estimates."""
VALIDATING = ("building", "checking")


@dataclass(frozen=True)
class QueueState:
    """Where a version stands in validation (shown to everyone: no log is in it)."""

    lane: str
    stage: str
    """queued, building or checking."""
    position: int | None
    """1 for the next to be taken (None once it is taken)."""
    stage_started_at: float | None
    estimate_seconds: float | None
    """Until its validation is done, from the lane's recent median validation time and
    the versions ahead of it; None before any version of the lane was validated."""


class ValidationQueue(StoreBase):
    def unclassified(self) -> list[tuple[int, str]]:
        """Queued versions not yet in a lane: (id, folder), oldest first."""
        return [(row[0], row[1]) for row in self.db.execute(
            "SELECT v.id, v.folder FROM versions v LEFT JOIN validation q "
            "ON q.version_id = v.id WHERE v.status = 'queued' AND q.version_id IS NULL "
            "ORDER BY v.id")]

    def classify(self, version_id: int, lane: str, key: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT INTO validation (version_id, lane, key) VALUES (?, ?, ?) "
                       "ON CONFLICT (version_id) DO UPDATE SET lane = excluded.lane, "
                       "key = excluded.key, stage_started_at = NULL, finished_at = NULL",
                       (version_id, lane, key))

    def claim(self, quick_only: bool = False) -> tuple[int, str] | None:
        """The next version to validate (a quick check, for the quick lane's validator),
        taken (``building``) in the same transaction as the choice, so two validators never
        take one version: (id, lane), or None."""
        with self.transaction() as db:
            busy: dict[int, int] = {}
            for (author,) in db.execute(
                    "SELECT b.author_id FROM versions v JOIN bots b ON b.id = v.bot_id "
                    "WHERE v.status IN (?, ?)", VALIDATING):
                busy[author] = busy.get(author, 0) + 1
            for version_id, author, lane in db.execute(
                    "SELECT v.id, b.author_id, q.lane FROM versions v "
                    "JOIN bots b ON b.id = v.bot_id JOIN validation q ON q.version_id = v.id "
                    "WHERE v.status = 'queued' ORDER BY v.id").fetchall():
                if busy.get(author, 0) >= PER_AUTHOR or (quick_only and lane != "quick"):
                    continue
                event("version", version_id=version_id, status="building", lane=lane)
                db.execute("UPDATE versions SET status = 'building' WHERE id = ?",
                           (version_id,))
                now = time.time()
                db.execute("UPDATE validation SET taken_at = ?, stage_started_at = ?, "
                           "finished_at = NULL WHERE version_id = ?", (now, now, version_id))
                return version_id, lane
        return None

    def stage(self, version_id: int, status: str, *, build_log: str | None = None,
              check_report: str | None = None) -> None:
        """The version moves to ``status`` (``checking``, or a final one), its stage's
        start (or its finish) noted in the same transaction."""
        finished = status not in VALIDATING
        event("version", version_id=version_id, status=status)
        with self.transaction() as db:
            db.execute(SET_STATUS, (status, build_log, check_report, version_id))
            db.execute(f"UPDATE validation SET {'finished_at' if finished else 'stage_started_at'}"
                       " = ? WHERE version_id = ?", (time.time(), version_id))

    def finished(self, version_id: int) -> None:
        with self.transaction() as db:
            db.execute("UPDATE validation SET finished_at = ? WHERE version_id = ?",
                       (time.time(), version_id))

    def reusable(self, version_id: int) -> dict[str, Any] | None:
        """The earliest other version with the same validation key that finished its
        validation (active, retired or failed): its id, bot, number, status, logs and the
        folder it plays from."""
        row = self.db.execute(
            "SELECT v.id, b.name, v.number, v.status, v.build_log, v.check_report, "
            "v.play_folder, q.finished_at FROM validation q "
            "JOIN validation mine ON mine.key = q.key AND mine.version_id = ? "
            "JOIN versions v ON v.id = q.version_id JOIN bots b ON b.id = v.bot_id "
            "WHERE q.version_id != ? AND q.finished_at IS NOT NULL AND q.reused_from IS NULL "
            "AND v.status IN ('active', 'retired', 'failed') ORDER BY v.id LIMIT 1",
            (version_id, version_id)).fetchone()
        if row is None:
            return None
        names = ("id", "bot", "number", "status", "build_log", "check_report", "play_folder",
                 "finished_at")
        return dict(zip(names, row, strict=True))

    def reused_from(self, version_id: int) -> int | None:
        """The version whose validation result this one took (identical sources)."""
        row = self.db.execute("SELECT reused_from FROM validation WHERE version_id = ?",
                              (version_id,)).fetchone()
        return None if row is None else row[0]

    def note_reuse(self, version_id: int, source: int) -> None:
        with self.transaction() as db:
            db.execute("UPDATE validation SET reused_from = ? WHERE version_id = ?",
                       (source, version_id))

    @league_reading
    def queue_state(self, version_id: int, validators: int) -> QueueState | None:
        """Where the version stands; None once it is validated (or never queued)."""
        row = self.db.execute(
            "SELECT v.status, q.lane, q.stage_started_at FROM versions v "
            "LEFT JOIN validation q ON q.version_id = v.id WHERE v.id = ?",
            (version_id,)).fetchone()
        if row is None or row[0] not in ("queued", *VALIDATING):
            return None
        status, lane, started = row
        lane = lane or "build"  # not yet seen by a validator: counted as a build
        typical = self._typical_seconds(lane)
        if status != "queued":
            taken = self.db.execute("SELECT taken_at FROM validation WHERE version_id = ?",
                                    (version_id,)).fetchone()
            left = None if typical is None or not taken or taken[0] is None else max(
                0.0, typical - (time.time() - taken[0]))
            return QueueState(lane, status, None, started, left)
        queued = self.db.execute(
            "SELECT v.id, COALESCE(q.lane, 'build') FROM versions v LEFT JOIN validation q "
            "ON q.version_id = v.id WHERE v.status = 'queued'").fetchall()
        # Quick checks older than it go to the quick lane's validator, mostly: a build
        # waits for the older builds, a quick check for the older quick checks.
        ahead = sum(other == lane and vid < version_id for vid, other in queued)
        workers = validators + (lane == "quick")
        estimate = None if typical is None else typical * (ahead // workers + 1)
        return QueueState(lane, "queued", ahead + 1, None, estimate)

    def _typical_seconds(self, lane: str) -> float | None:
        durations = [row[0] for row in self.db.execute(
            "SELECT finished_at - taken_at FROM validation WHERE lane = ? AND finished_at "
            "IS NOT NULL AND taken_at IS NOT NULL AND reused_from IS NULL "
            "ORDER BY finished_at DESC LIMIT ?",
            (lane, RECENT))]
        return statistics.median(durations) if durations else None
