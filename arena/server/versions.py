"""The league store's bots' versions: the uploads that bring them (counted for the rate
limit), their queue for validation, and their states (queued, building, checking, active,
failed, retired)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.server.events import event
from arena.server.store_base import SQLITE_INTEGERS, Conflict, StoreBase, checked, league_reading
from arena.text import lookalike_key

SET_STATUS = ("UPDATE versions SET status = ?, build_log = COALESCE(?, build_log), "
              "check_report = COALESCE(?, check_report) WHERE id = ?")
"""A version's new status, and its build log or check report when given."""
DELETED_THROUGH = "deleted_versions_through"
"""The ``meta`` key of the highest id of a deleted version: ids are given past it."""

@dataclass(frozen=True)
class Version:
    id: int
    bot_id: int
    bot: str
    author_id: int
    author: str
    number: int
    label: str
    content_hash: str
    archive_sha256: str
    folder: str
    status: str
    build_log: str | None
    """None when not read (``LeagueStore.versions`` reads the logs only when asked)."""
    check_report: str | None
    submitted_at: float
    activated_at: float | None
    retired_at: float | None
    predecessor: int | None
    bot_state: str
    bot_reason: str | None


_VERSION_QUERY = """
SELECT v.id, v.bot_id, b.name, b.author_id, a.name, v.number, v.label, v.content_hash,
       v.archive_sha256, v.folder, v.status, {logs}, v.submitted_at,
       v.activated_at, v.retired_at, v.predecessor, b.state, b.reason
FROM versions v JOIN bots b ON b.id = v.bot_id JOIN authors a ON a.id = b.author_id
"""


def _room_for_a_bot(db: sqlite3.Connection, author_id: int, most: int) -> None:
    """Conflict when the author has ``most`` bots counted already (retired ones are not)."""
    owned = db.execute("SELECT COUNT(*) FROM bots WHERE author_id = ? AND state != 'retired'",
                       (author_id,)).fetchone()[0]
    if owned >= most:
        raise Conflict(f"you have {owned} bot(s), the league's limit per author "
                       "(max_bots_per_author); submit a new version of one of them (the same "
                       "name in bot.toml) instead, or retire one")


class Versions(StoreBase):
    """``LeagueStore``'s uploads and versions."""

    def uploads_since(self, author_id: int, since: float) -> int:
        row = self.db.execute("SELECT COUNT(*) FROM uploads WHERE author_id = ? AND at >= ?",
                              (author_id, since)).fetchone()
        return int(row[0])

    def reserve_upload(self, author_id: int, since: float, most: int) -> int | None:
        """In one transaction, the author's uploads since ``since`` counted and, below
        ``most``, this one noted as being received: its row's id, or None at the limit.
        Counted as it arrives, in the same transaction as the count, so uploads sent at
        once cannot each pass a count made before any of them was noted."""
        with self.transaction() as db:
            count = db.execute("SELECT COUNT(*) FROM uploads WHERE author_id = ? AND at >= ?",
                               (author_id, since)).fetchone()[0]
            if count >= most:
                return None
            upload_id = db.execute("INSERT INTO uploads (author_id, at, outcome) VALUES "
                                   "(?, ?, 'receiving')", (author_id, time.time())).lastrowid
        assert upload_id is not None
        return int(upload_id)

    def settle_upload(self, upload_id: int, outcome: str) -> None:
        with self.transaction() as db:
            db.execute("UPDATE uploads SET outcome = ? WHERE id = ?", (outcome, upload_id))

    def add_version(self, author_id: int, bot_name: str, label: str, content_hash: str,
                    archive_sha256: str, folder: str, max_bots: int,
                    upload_id: int | None = None) -> Version:
        """A new version of the author's bot ``bot_name`` (the bot is created at its first
        version), queued for validation; the upload ``upload_id`` (``reserve_upload``)
        names it. Conflict if another author owns the name, the bot is disqualified, or the
        author has ``max_bots`` bots already."""
        now = time.time()
        with self.transaction() as db:
            row = db.execute("SELECT id, author_id FROM bots WHERE name = ?",
                             (bot_name,)).fetchone()
            if row is None:
                key = lookalike_key(bot_name)
                alike = next((name for (name,) in db.execute("SELECT name FROM bots")
                              if lookalike_key(name) == key), None)
                if alike is not None:
                    raise Conflict(f"the bot name {bot_name!r} reads like the bot {alike!r} "
                                   "of the league (names differing in case, separators or "
                                   "letters that look alike, l, I and 1, O and 0, are one); "
                                   "choose another name in bot.toml, or use that one")
                _room_for_a_bot(db, author_id, max_bots)
                bot_id = db.execute("INSERT INTO bots (author_id, name, created_at) "
                                    "VALUES (?, ?, ?)", (author_id, bot_name, now)).lastrowid
            else:
                bot_id, owner = row
                if owner != author_id:
                    raise Conflict(f"the bot name {bot_name!r} belongs to another author; "
                                   "choose another name in bot.toml")
                state, reason = db.execute("SELECT state, reason FROM bots WHERE id = ?",
                                           (bot_id,)).fetchone()
                if state == "disqualified":
                    raise Conflict(f"the bot {bot_name!r} is disqualified"
                                   f"{f' ({reason})' if reason else ''}: it takes no new "
                                   "versions")
                if state == "retired":  # back on the ladder, counted again
                    _room_for_a_bot(db, author_id, max_bots)
                    db.execute("UPDATE bots SET state = 'entered' WHERE id = ?", (bot_id,))
            number = db.execute("SELECT COALESCE(MAX(number), 0) + 1 FROM versions "
                                "WHERE bot_id = ?", (bot_id,)).fetchone()[0]
            version_id = db.execute(
                "INSERT INTO versions (id, bot_id, number, label, content_hash, "
                "archive_sha256, folder, submitted_by, submitted_at) VALUES ((SELECT MAX("
                "COALESCE((SELECT MAX(id) FROM versions), 0), COALESCE((SELECT CAST(value AS "
                "INTEGER) FROM meta WHERE key = ?), 0)) + 1), ?, ?, ?, ?, ?, ?, ?, ?)",
                (DELETED_THROUGH, bot_id, number, label, content_hash, archive_sha256,
                 folder, author_id, now)).lastrowid
            if upload_id is None:
                db.execute("INSERT INTO uploads (author_id, at, outcome) VALUES (?, ?, ?)",
                           (author_id, now, f"version {version_id}"))
            else:
                db.execute("UPDATE uploads SET outcome = ? WHERE id = ?",
                           (f"version {version_id}", upload_id))
        assert version_id is not None
        found = self.version(version_id)
        assert found is not None
        return found

    @league_reading
    def versions(self, where: str = "", params: Sequence[Any] = (), *, logs: bool = False
                 ) -> list[Version]:
        """Versions by bot name and number; their build logs and check reports (up to
        ~100 KB each: every page reads the versions) only with ``logs``."""
        columns = "v.build_log, v.check_report" if logs else "NULL, NULL"
        query = _VERSION_QUERY.format(logs=columns)
        found = []
        for row in self.db.execute(f"{query} {where} ORDER BY b.name, v.number", params):
            if logs and (type(row[11]) is not str or type(row[12]) is not str):
                raise ValueError(f"version {row[0]!r}: its build log or check report is "
                                 "not text")
            found.append(Version(*checked(Version, row, f"version {row[0]!r}")))
        return found

    def version(self, version_id: int) -> Version | None:
        """The version of that id; None when there is none (an id past SQLite's 64-bit
        integers, from an address, included: no row has it)."""
        if not -SQLITE_INTEGERS <= version_id < SQLITE_INTEGERS:
            return None
        found = self.versions("WHERE v.id = ?", (version_id,), logs=True)
        return found[0] if found else None

    def set_status(self, version_id: int, status: str, *, build_log: str | None = None,
                   check_report: str | None = None) -> None:
        event("version", version_id=version_id, status=status)
        with self.transaction() as db:
            db.execute(SET_STATUS, (status, build_log, check_report, version_id))

    def activate(self, version_id: int, active_per_bot: int) -> list[int]:
        """Make a validated version active; the bot's older active versions beyond
        ``active_per_bot`` retire (keeping their results). Returns the retired ids."""
        now = time.time()
        with self.transaction() as db:
            bot_id = db.execute("SELECT bot_id FROM versions WHERE id = ?",
                                (version_id,)).fetchone()[0]
            active = [row[0] for row in db.execute(
                "SELECT id FROM versions WHERE bot_id = ? AND status = 'active' "
                "ORDER BY number DESC", (bot_id,))]
            predecessor = active[0] if active else None
            db.execute("UPDATE versions SET status = 'active', activated_at = ?, "
                       "predecessor = ? WHERE id = ?", (now, predecessor, version_id))
            retired = active[active_per_bot - 1:]
            db.executemany("UPDATE versions SET status = 'retired', retired_at = ? "
                           "WHERE id = ?", [(now, r) for r in retired])
        event("version", version_id=version_id, status="active", retired=retired)
        return retired
