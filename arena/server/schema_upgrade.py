"""A league store written by an earlier version, brought to this version's schema when it
is opened: the values a CHECK admits widened (a bot's ``retired`` state, the
``challenge`` kind of match).

SQLite cannot change a table's CHECK in place, so such a table is rebuilt as SQLite's
documentation says (https://sqlite.org/lang_altertable.html#otheralter): with foreign keys
off, a new table made from the old one's own statement with the wider CHECK, its rows
copied, the old one dropped and the new one renamed, the whole in one transaction, then
the foreign keys checked before it commits. A store already upgraded costs one read of
``sqlite_master``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from arena.league.storage import write_transaction
from arena.server.store_base import LEAGUE_STORE

WIDENED = {
    "bots": ("state IN ('entered', 'withdrawn', 'disqualified')",
             "state IN ('entered', 'withdrawn', 'disqualified', 'retired')"),
    "matches": ("kind IN ('ladder', 'final')", "kind IN ('ladder', 'final', 'challenge')"),
}
"""By table: a CHECK's condition as earlier versions wrote it, and as this one does."""


def _stale(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """The tables whose statement still holds an earlier CHECK, with that statement."""
    found = []
    for table, (before, _) in WIDENED.items():
        row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                         (table,)).fetchone()
        if row is not None and before in row[0]:
            found.append((table, row[0]))
    return found


def upgrade(db: sqlite3.Connection, path: Path) -> list[str]:
    """Widen the CHECKs of the store's tables that need it (``WIDENED``); the tables
    rebuilt. The indexes the rebuilt tables lose are made again by the store's own
    ``CREATE INDEX IF NOT EXISTS`` run at every open, after this."""
    if not _stale(db):
        return []
    db.execute("PRAGMA foreign_keys=OFF")  # no effect inside a transaction: before it
    try:
        with write_transaction(db, path, LEAGUE_STORE):
            rebuilt = []
            for table, statement in _stale(db):  # again: another process may have done it
                before, after = WIDENED[table]
                _, _, body = statement.partition("(")
                db.execute(f"CREATE TABLE upgraded_{table} ({body.replace(before, after)}")
                db.execute(f"INSERT INTO upgraded_{table} SELECT * FROM {table}")
                db.execute(f"DROP TABLE {table}")
                db.execute(f"ALTER TABLE upgraded_{table} RENAME TO {table}")
                rebuilt.append(table)
            broken = db.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise sqlite3.IntegrityError(f"upgrading the store's tables would break "
                                             f"{len(broken)} reference(s): {broken[:3]}")
    finally:
        db.execute("PRAGMA foreign_keys=ON")
    return rebuilt
