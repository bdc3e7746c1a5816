"""The league store's matches: ladder matches (recorded as running before they are played),
the final's (scheduled whole, with its key) and challenges (``arena.server.challenges``),
their results, and what the ladder's ratings and pages ask of them."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from arena.formats import json_value
from arena.league.results import MatchRecord, SeatResult, record_result
from arena.server.store_base import StoreBase, checked, league_reading

FINAL_ATTEMPTS = 3
"""Tries of a final match the host fails (a worker killed, a host short of memory)."""
IN_LIST_MOST = 500
"""Values bound to one ``IN (...)``: SQLite before 3.32 binds at most 999 a statement."""
Recorded = tuple[int, float | None]
"""Done matches and the time the last was recorded (``LeagueStore.recorded``)."""


def ladder_id(number: int) -> str:
    """The id of the ``number``-th ladder match: ``L000001``...``L999999``, then a ``~``
    for each digit past six (``L~1000000``, ``L~~10000000``), so that ids sort as text in
    the order they were given (lists, pages and the settled mark compare them as text;
    ``L1000000`` would have sorted before ``L999999``)."""
    digits = f"{number:06d}"
    return f"L{'~' * (len(digits) - 6)}{digits}"
@dataclass(frozen=True)
class StoredMatch:
    match_id: str
    kind: str
    label: str
    seats: tuple[int, ...]
    status: str
    group: int | None
    deal: int | None
    created_at: float
    finished_at: float | None
    seconds: float | None
    decisions: int | None
    rounds: int | None
    round_limit_reached: bool
    log_path: str | None
    log_sha256: str | None
    error: str | None


@dataclass(frozen=True)
class Result(SeatResult):
    """A seat's result as the store holds it: of the match ``match_id``, played by the
    version ``version_id``."""

    match_id: str
    version_id: int


_MATCH_QUERY = """
SELECT match_id, kind, label, seats, status, grp, deal, created_at, finished_at, seconds,
       decisions, rounds, round_limit_reached, log_path, log_sha256, error FROM matches
"""


def _json_column(text: str, what: str, kind: str, fits: Callable[[Any], bool]) -> Any:
    """A column holding JSON of a kind (ValueError saying ``what`` otherwise)."""
    try:
        value = json_value(text)
    except ValueError as error:
        raise ValueError(f"{what} not JSON ({error}): {text[:60]!r}") from None
    if not fits(value):
        raise ValueError(f"{what} not a JSON list of {kind}: {text[:60]!r}")
    return value


def _ids(text: str, what: str) -> tuple[int, ...]:
    return tuple(_json_column(text, what, "version ids", lambda value: (
        isinstance(value, list) and bool(value) and all(type(v) is int for v in value))))


def _records(text: str, what: str) -> tuple[dict[str, object], ...]:
    return tuple(_json_column(text, what, "objects", lambda value: (
        isinstance(value, list) and all(isinstance(v, dict) for v in value))))


def _match(row: Sequence[Any], versions: set[int]) -> StoredMatch:
    what = f"match {row[0]!r}"
    row = checked(StoredMatch, row, what)
    seats = _ids(row[3], f"{what}: its seats are")
    if not versions.issuperset(seats):
        raise ValueError(f"{what} seats version {min(set(seats) - versions)}, which the "
                         "store does not hold")
    return StoredMatch(row[0], row[1], row[2], seats, row[4], row[5], row[6], row[7], row[8],
                       row[9], row[10], row[11], bool(row[12]), row[13], row[14], row[15])


def seated(version_ids: Sequence[int]) -> tuple[str, tuple[int, ...]]:
    """A condition on the matches table, with its parameters: the match seats one of
    ``version_ids`` (SQLite reads the seats' JSON: no match is read into Python to ask)."""
    ids = tuple(version_ids)
    marks = ", ".join("?" * len(ids)) or "NULL"
    return (f"EXISTS (SELECT 1 FROM json_each(matches.seats) seat "
            f"WHERE seat.value IN ({marks}))", ids)


Value = TypeVar("Value")


class Matches(StoreBase):
    """``LeagueStore``'s matches and results."""

    def next_ladder_id(self, db: sqlite3.Connection) -> str:
        count = db.execute("SELECT COUNT(*) FROM matches WHERE kind = 'ladder'").fetchone()[0]
        return ladder_id(count + 1)

    def start_ladder_match(self, seats: Sequence[int]) -> str:
        """Record a ladder match as running (before it is played); its id."""
        with self.transaction() as db:
            match_id = self.next_ladder_id(db)
            db.execute("INSERT INTO matches (match_id, kind, label, seats, status, created_at, "
                       "started_at) VALUES (?, 'ladder', ?, ?, 'running', ?, ?)",
                       (match_id, match_id, json.dumps(list(seats)), time.time(),
                        time.time()))
        return match_id

    def schedule_final(self, matches: Sequence[tuple[str, str, Sequence[int], int, int, int]],
                       key: bytes) -> None:
        """Record the final's schedule and its secret key in one transaction:
        (match id, deal label, version ids by seat, group, deal, round) each."""
        now = time.time()
        with self.transaction() as db:
            if db.execute("SELECT 1 FROM matches WHERE kind = 'final'").fetchone():
                return
            db.executemany(
                "INSERT INTO matches (match_id, kind, label, seats, status, grp, deal, round, "
                "created_at) VALUES (?, 'final', ?, ?, 'scheduled', ?, ?, ?, ?)",
                [(m, label, json.dumps(list(seats)), group, deal, round_, now)
                 for m, label, seats, group, deal, round_ in matches])
            db.execute("INSERT OR REPLACE INTO meta VALUES ('final_key', ?)", (key.hex(),))

    def start_final_match(self, match_id: str) -> bool:
        with self.transaction() as db:
            changed = db.execute("UPDATE matches SET status = 'running', started_at = ? "
                                 "WHERE match_id = ? AND status = 'scheduled'",
                                 (time.time(), match_id)).rowcount
        return changed == 1

    def record(self, record: MatchRecord, seats: Sequence[int]) -> bool:
        """A played match's result, in one transaction, over its ``running`` row only: a
        match discarded meanwhile (or recorded already) is not counted (False)."""
        with self.transaction() as db:
            return record_result(db, record, seats, ("running",))

    def record_failure(self, match_id: str, error: str) -> None:
        """A match that could not be played (the referee's or the host's trouble, never a
        bot's: a bot's faults are in its result). A final match is scheduled again, up to
        ``FINAL_ATTEMPTS`` tries, so that a passing failure of the host neither loses it
        nor lets the final end without it (and publish its key)."""
        with self.transaction() as db:
            row = db.execute("SELECT kind FROM matches WHERE match_id = ? AND status = "
                             "'running'", (match_id,)).fetchone()
            if row is None:
                return
            if row[0] == "final":
                key = f"final_attempts {match_id}"
                kept = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
                attempts = (int(kept[0]) if kept else 0) + 1
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(attempts)))
                if attempts < FINAL_ATTEMPTS:
                    db.execute("UPDATE matches SET status = 'scheduled', started_at = NULL, "
                               "error = ? WHERE match_id = ?",
                               (f"try {attempts} of {FINAL_ATTEMPTS} failed: {error}"[-4000:],
                                match_id))
                    return
            db.execute("UPDATE matches SET status = 'failed', finished_at = ?, error = ? "
                       "WHERE match_id = ?", (time.time(), error[-4000:], match_id))

    def retry_final(self) -> int:
        """The organiser's call: the final's failed matches scheduled again, with fresh
        tries; how many."""
        with self.transaction() as db:
            again = db.execute("UPDATE matches SET status = 'scheduled', started_at = NULL, "
                               "finished_at = NULL WHERE kind = 'final' AND status = 'failed'"
                               ).rowcount
            db.execute("DELETE FROM meta WHERE key LIKE 'final_attempts %'")
            db.execute("DELETE FROM meta WHERE key = 'final_note'")
        return int(again)

    def close_final(self) -> int:
        """The organiser's call: the final ends without its failed matches (its keys are
        then published); how many it ends without."""
        failed = self.count_matches("WHERE kind = 'final' AND status = 'failed'")
        self.set_meta({"final_closed": str(time.time()),
                       "final_note": f"the organiser ended the final without {failed} "
                       "match(es) the host failed"})
        return failed

    def release_matches(self) -> dict[str, int]:
        """Matches left ``running`` by players that are gone (a killed server, or a match
        loop that failed and dropped its workers): ladder ones discarded (never counted),
        final and challenge ones scheduled again."""
        with self.transaction() as db:
            discarded = db.execute(
                "UPDATE matches SET status = 'discarded', error = 'the server stopped while "
                "it was being played' WHERE status = 'running' AND kind = 'ladder'").rowcount
            again = db.execute("UPDATE matches SET status = 'scheduled', started_at = NULL "
                               "WHERE status = 'running' AND kind IN ('final', 'challenge')"
                               ).rowcount
        return {"discarded": discarded, "rescheduled": again}

    @league_reading
    def matches(self, where: str = "", params: Sequence[Any] = (), *,
                newest_first: bool = False, limit: int | None = None, offset: int = 0
                ) -> list[StoredMatch]:
        """Matches by id (``newest_first``: the highest first), ``where`` a WHERE clause
        over the matches table (``seated``'s included); ``limit`` and ``offset`` page them
        in SQLite, so a page of a large league reads only its rows."""
        versions = {row[0] for row in self.db.execute("SELECT id FROM versions")}
        order = "DESC" if newest_first else "ASC"
        page = "" if limit is None else f"LIMIT {int(limit)} OFFSET {int(offset)}"
        query = f"{_MATCH_QUERY} {where} ORDER BY match_id {order} {page}"
        rows = self._seats_read(lambda: self.db.execute(query, params).fetchall())
        return [_match(row, versions) for row in rows]

    @league_reading
    def count_matches(self, where: str = "", params: Sequence[Any] = ()) -> int:
        row = self._seats_read(lambda: self.db.execute(
            f"SELECT COUNT(*) FROM matches {where}", params).fetchone())
        return int(row[0])

    def _seats_read(self, read: Callable[[], Value]) -> Value:
        """``read``, a query that may read the seats' JSON in SQLite (``seated``): seats
        that are not JSON fail it with SQLite's bare "malformed JSON"; the whole read of
        the matches then says which row (a StoreError)."""
        try:
            return read()
        except sqlite3.OperationalError as error:
            if "JSON" in str(error):
                self.matches()
            raise

    @league_reading
    def status_counts(self, kind: str) -> dict[str, int]:
        """How many matches of a kind are in each status."""
        return {str(status): int(count) for status, count in self.db.execute(
            "SELECT status, COUNT(*) FROM matches WHERE kind = ? GROUP BY status", (kind,))}

    def match(self, match_id: str) -> StoredMatch | None:
        found = self.matches("WHERE match_id = ?", (match_id,))
        return found[0] if found else None

    @league_reading
    def settled(self, kind: str) -> tuple[str | None, Recorded]:
        """The last match id of a kind that no match still to be played precedes (every
        match of the kind up to it is done, failed or discarded: its result, if any, is
        recorded for good), and what is recorded up to it (``recorded``); None when there
        is none. Read before the results it is used with: a match recorded in between is
        then after it, read with the new ones."""
        row = self.db.execute(
            "SELECT MAX(match_id) FROM matches WHERE kind = ? AND match_id < COALESCE("
            "(SELECT MIN(match_id) FROM matches WHERE kind = ? "
            "AND status IN ('scheduled', 'running')), char(1114111))", (kind, kind)).fetchone()
        through = row[0]
        if through is None:
            return None, (0, None)
        if type(through) is not str:
            raise ValueError(f"a match id is {through!r}, not text")
        return through, self.recorded(kind, through)

    @league_reading
    def recorded(self, kind: str, through: str | None = None) -> Recorded:
        """How many matches of a kind (with ids up to ``through``) are done, and when the
        last of them was recorded: what their results are a function of. A store restored
        from a backup and played on differs (its new results are recorded later)."""
        query = "SELECT COUNT(*), MAX(finished_at) FROM matches WHERE kind = ? AND status = 'done'"
        row = (self.db.execute(query, (kind,)) if through is None else self.db.execute(
            f"{query} AND match_id <= ?", (kind, through))).fetchone()
        if row[1] is not None and type(row[1]) not in (float, int):
            raise ValueError(f"a done match's finished_at is {row[1]!r}, not a number")
        return int(row[0]), row[1]

    @league_reading
    def results(self, kind: str | None = None, match_id: str | None = None, *,
                match_ids: Sequence[str] | None = None, after: str | None = None
                ) -> list[Result]:
        """Recorded results (of one kind of match, of one match, of the matches
        ``match_ids``, of those after the id ``after``), by match and seat."""
        # Only the conditions asked for (an "? IS NULL OR" would keep SQLite from the
        # primary key's index: every result read to find one match's).
        conditions, params = ["1"], []
        if kind is not None:
            conditions.append("m.kind = ?")
            params.append(kind)
        if match_id is not None:
            conditions.append("r.match_id = ?")
            params.append(match_id)
        if match_ids is not None and len(match_ids) > IN_LIST_MOST:
            # SQLite before 3.32 binds at most 999 values to a statement.
            ordered = sorted(set(match_ids))
            return [result for start in range(0, len(ordered), IN_LIST_MOST)
                    for result in self.results(kind, match_id, after=after,
                                               match_ids=ordered[start:start + IN_LIST_MOST])]
        if match_ids is not None:
            conditions.append(f"r.match_id IN ({', '.join('?' * len(match_ids))})")
            params += match_ids
        if after is not None:
            conditions.append("r.match_id > ?")
            params.append(after)
        query = ("SELECT r.seat, r.place, r.score, r.rounds_won, r.strikes, r.disqualified, "
                 "r.faults, r.match_id, r.version_id FROM results r JOIN matches m "
                 f"ON m.match_id = r.match_id WHERE {' AND '.join(conditions)}")
        return [Result(row[0], row[1], row[2], row[3], row[4], bool(row[5]),
                       _records(row[6], f"match {row[7]!r}, seat {row[0]}: its faults are"),
                       row[7], row[8])
                for row in (checked(Result, row, f"match {row[7]!r}, seat {row[0]!r}")
                            for row in self.db.execute(
                                f"{query} ORDER BY r.match_id, r.seat", params))]

    def results_of(self, match_id: str) -> list[Result]:
        return self.results(match_id=match_id)

    def done_count(self, kind: str) -> int:
        """Matches of a kind with a recorded result (what the ratings are a function of)."""
        return self.recorded(kind)[0]

    def running_counts(self) -> dict[int, int]:
        """Ladder matches running per version id."""
        counts: dict[int, int] = {}
        for match in self.matches("WHERE status = 'running'"):
            for version in match.seats:
                counts[version] = counts.get(version, 0) + 1
        return counts
