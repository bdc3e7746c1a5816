"""What an author may do to their own bots besides submitting: retire a bot, delete a
failed version.

A retired bot leaves the ladder (the matchmaker seats entered bots only; a match it is
playing is finished and rated), its row leaves the standings, and it is not counted
towards ``max_bots_per_author``; its versions keep their results and its page shows it
retired. Its name stays its author's: a new version of it, submitted as any, brings it
back (counted again). A failed version that never played a match is deleted whole: its
row, its validation logs, and its stored sources and build unless another version uses
them; a bot left with no version is retired. Nothing that played is ever deleted, so every
recorded result keeps its versions and no other bot's rating moves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox.trees import remove_tree
from arena.server.store_base import Conflict, StoreBase, league_reading
from arena.server.versions import DELETED_THROUGH


@dataclass(frozen=True)
class Deleted:
    """A deleted version, and what of its files no other version uses."""

    version_id: int
    bot: str
    number: int
    bot_retired: bool
    """Its bot had no other version, and was retired with it."""
    unused: tuple[Path, ...]


def _refusal(state: str) -> str:
    if state == "retired":
        return "it is retired already"
    return (f"the organiser has {state} it: only the organiser changes that "
            "(`arena server readmit`)")


class OwnBots(StoreBase):
    """``LeagueStore``'s authors' own actions on their bots."""

    @league_reading
    def deletable_versions(self, author_id: int) -> set[int]:
        """The author's failed versions that no match seats (one never active was never
        seated: only active versions are, so the seats are read for the others only)."""
        return {row[0] for row in self.db.execute(
            "SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.author_id = ? "
            "AND v.status = 'failed' AND (v.activated_at IS NULL OR NOT EXISTS (SELECT 1 FROM "
            "matches m, json_each(m.seats) seat WHERE seat.value = v.id))", (author_id,))}

    def retire_bot(self, bot_id: int) -> list[int]:
        """Retire the bot: its active versions retire with it, the challenges not yet
        played that seat it are discarded. The versions retired; Conflict for a bot that
        is not entered (retired already, or withdrawn or disqualified by the organiser)."""
        now = time.time()
        with self.transaction() as db:
            name, state = db.execute("SELECT name, state FROM bots WHERE id = ?",
                                     (bot_id,)).fetchone()
            if state != "entered":
                raise Conflict(f"the bot {name!r} cannot be retired: {_refusal(state)}")
            db.execute("UPDATE bots SET state = 'retired' WHERE id = ?", (bot_id,))
            retired = [row[0] for row in db.execute(
                "SELECT id FROM versions WHERE bot_id = ? AND status = 'active' ORDER BY id",
                (bot_id,))]
            db.executemany("UPDATE versions SET status = 'retired', retired_at = ? "
                           "WHERE id = ?", [(now, version) for version in retired])
            db.execute(
                "UPDATE matches SET status = 'discarded', error = ? WHERE kind = 'challenge' "
                "AND status = 'scheduled' AND EXISTS (SELECT 1 FROM json_each(matches.seats) "
                "seat JOIN versions v ON v.id = seat.value WHERE v.bot_id = ?)",
                (f"the bot {name} was retired before it was played", bot_id))
        return retired

    def delete_failed_version(self, version_id: int, data: Path) -> Deleted:
        """Delete a failed version that no match seats, and what of its files under the
        league's ``data`` no other version uses (its validation logs, its sources, its
        build): Conflict for any other."""
        with self.transaction() as db:
            row = db.execute("SELECT v.status, v.bot_id, b.name, v.number, v.folder, "
                             "v.play_folder FROM versions v JOIN bots b ON b.id = v.bot_id "
                             "WHERE v.id = ?", (version_id,)).fetchone()
            status, bot_id, bot, number, folder, play_folder = row
            if status != "failed":
                raise Conflict(f"{bot} version {number} is {status}: only a failed version "
                               "may be deleted")
            if db.execute("SELECT 1 FROM matches WHERE EXISTS (SELECT 1 FROM "
                          "json_each(matches.seats) seat WHERE seat.value = ?)",
                          (version_id,)).fetchone():
                raise Conflict(f"{bot} version {number} has played: versions that played "
                               "are kept, with their results")
            # What named it: no version inherits from it, nor took its validation's result.
            db.execute("UPDATE versions SET predecessor = NULL WHERE predecessor = ?",
                       (version_id,))
            db.execute("UPDATE validation SET reused_from = NULL WHERE reused_from = ?",
                       (version_id,))
            db.execute("DELETE FROM validation WHERE version_id = ?", (version_id,))
            db.execute("DELETE FROM versions WHERE id = ?", (version_id,))
            # Its id is never given again (an event, a log names a version by it).
            db.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value "
                       "= MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
                       (DELETED_THROUGH, str(version_id)))
            alone = not db.execute("SELECT 1 FROM versions WHERE bot_id = ?",
                                   (bot_id,)).fetchone()
            if alone:
                db.execute("UPDATE bots SET state = 'retired' WHERE id = ? "
                           "AND state = 'entered'", (bot_id,))
            unused = [data / "validation" / str(version_id)]
            if not db.execute("SELECT 1 FROM versions WHERE folder = ?", (folder,)).fetchone():
                unused.append(Path(folder))
            if play_folder and not db.execute("SELECT 1 FROM versions WHERE play_folder = ?",
                                              (play_folder,)).fetchone():
                unused.append(Path(play_folder))
        return Deleted(version_id, bot, number, alone,
                       tuple(path for path in unused if _inside(path, data)))


def _inside(path: Path, data: Path) -> bool:
    """Whether ``path`` is below the league's data folder (nothing else is removed)."""
    return path.resolve().is_relative_to(data.resolve()) and path.resolve() != data.resolve()


def remove_files(deleted: Deleted) -> None:
    """The deleted version's files that no other version uses, removed."""
    for path in deleted.unused:
        if path.is_dir():
            remove_tree(path)
            path.with_name(f"{path.name}.sha256").unlink(missing_ok=True)
