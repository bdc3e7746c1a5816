"""Challenge matches: an author asks for a match of their bot against another active bot,
played like a ladder match (its log and replay, the same executors) but unranked: its kind
is ``challenge``, which the ladder's ratings, standings, record and head-to-head leave out
(they read ``ladder`` matches only).

A challenge is recorded ``scheduled`` when asked for, seating the newest active version
of each bot (the asker's first), and an author may ask for ``[challenges] per_hour`` in
any hour. It is played in one of the ladder's ``parallel`` slots (``ChallengeTurns``): at
most ``CHALLENGES_AT_ONCE`` at a time, first asked first played, and never twice in a row
while the ladder has a match to start, so the ladder keeps at least every other start of a
slot. A challenge whose bot left the ladder before it was played is discarded; one left
``running`` by a stopped server is played again at the next start.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.league.executor import MatchJob
from arena.rules.seeds import MatchSeed
from arena.sandbox import ManifestError
from arena.server.matches import Matches, StoredMatch, ladder_id
from arena.server.store_base import Conflict, league_reading

CHALLENGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS challenges (   -- who asked for each challenge match, and when
    match_id TEXT PRIMARY KEY REFERENCES matches(match_id),
    author_id INTEGER NOT NULL REFERENCES authors(id),
    asked_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS challenges_by_author ON challenges (author_id, asked_at);
"""
"""Run at every open (``IF NOT EXISTS``): a store made before it gets the table once."""

CHALLENGES_AT_ONCE = 1
"""Challenge matches running at once, at most: the other slots stay the ladder's."""
WINDOW_SECONDS = 3600.0
"""The rate limit's window: ``per_hour`` challenges in any hour."""


def challenge_id(number: int) -> str:
    """The id of the ``number``-th challenge: ``C000001``..., sorting as ladder ids do."""
    return f"C{ladder_id(number)[1:]}"


class TooSoon(Conflict):
    """An author past the hourly number of challenges; ``retry_at``: when the next is
    allowed (Unix time)."""

    def __init__(self, message: str, retry_at: float) -> None:
        super().__init__(message)
        self.retry_at = retry_at


@dataclass(frozen=True)
class Challenge:
    match: StoredMatch
    asked_by: str
    """The name of the author who asked for it."""
    asked_by_id: int
    asked_at: float


@dataclass(frozen=True)
class Quota:
    """An author's challenges in the last hour, against the league's ``per_hour``."""

    per_hour: int
    left: int
    next_at: float | None
    """When the next is allowed, while none is left (None: one may be asked at once)."""


_PLAYABLE = ("SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.id = ? "
             "AND b.state = 'entered' AND v.status = 'active' ORDER BY v.number DESC LIMIT 1")


class Challenges(Matches):
    """``LeagueStore``'s challenge matches."""

    @league_reading
    def challenge_quota(self, author_id: int, per_hour: int, now: float | None = None
                        ) -> Quota:
        now = time.time() if now is None else now
        asked = [row[0] for row in self.db.execute(
            "SELECT asked_at FROM challenges WHERE author_id = ? AND asked_at > ? "
            "ORDER BY asked_at", (author_id, now - WINDOW_SECONDS))]
        left = max(0, per_hour - len(asked))
        next_at = None if left or not per_hour else \
            asked[len(asked) - per_hour] + WINDOW_SECONDS
        return Quota(per_hour, left, next_at)

    def ask_challenge(self, author_id: int, bot_id: int, opponent_id: int,
                      per_hour: int) -> str:
        """A challenge of the bot ``bot_id`` (the author's) against ``opponent_id``,
        recorded ``scheduled`` with the newest active version of each: its match id.
        Conflict when either bot has no active version on the ladder, TooSoon past
        ``per_hour`` challenges in the last hour (counted in the same transaction as the
        new one is noted, so challenges asked at once cannot pass the limit together)."""
        now = time.time()
        with self.transaction() as db:
            quota = self.challenge_quota(author_id, per_hour, now)
            if quota.next_at is not None:
                raise TooSoon(f"at most {per_hour} challenges an hour ([challenges] "
                              f"per_hour); the next is allowed at "
                              f"{time.strftime('%H:%M:%S UTC', time.gmtime(quota.next_at))}",
                              quota.next_at)
            seats = []
            for bot in (bot_id, opponent_id):
                row = db.execute(_PLAYABLE, (bot,)).fetchone()
                if row is None:
                    name, state = db.execute("SELECT name, state FROM bots WHERE id = ?",
                                             (bot,)).fetchone()
                    raise Conflict(f"the bot {name!r} is {state}: it plays no match" if
                                   state != "entered" else f"the bot {name!r} has no active "
                                   "version: a challenge plays active versions only")
                seats.append(int(row[0]))
            count = db.execute("SELECT COUNT(*) FROM matches WHERE kind = 'challenge'"
                               ).fetchone()[0]
            match_id = challenge_id(count + 1)
            db.execute("INSERT INTO matches (match_id, kind, label, seats, status, "
                       "created_at) VALUES (?, 'challenge', ?, ?, 'scheduled', ?)",
                       (match_id, match_id, json.dumps(seats), now))
            db.execute("INSERT INTO challenges (match_id, author_id, asked_at) "
                       "VALUES (?, ?, ?)", (match_id, author_id, now))
        return match_id

    def start_challenge(self) -> StoredMatch | None:
        """The oldest scheduled challenge, marked running, unless ``CHALLENGES_AT_ONCE``
        run already; one seating a bot that is not entered (or a version that failed) is
        discarded on the way."""
        if not self.count_matches("WHERE kind = 'challenge' AND status = 'scheduled'"):
            return None  # the common case, asked at every free slot: no write transaction
        with self.transaction() as db:
            running = db.execute("SELECT COUNT(*) FROM matches WHERE kind = 'challenge' "
                                 "AND status = 'running'").fetchone()[0]
            if running >= CHALLENGES_AT_ONCE:
                return None
            for match_id, seats in db.execute(
                    "SELECT match_id, seats FROM matches WHERE kind = 'challenge' "
                    "AND status = 'scheduled' ORDER BY match_id").fetchall():
                ids = json.loads(seats)
                gone = db.execute(
                    "SELECT b.name FROM versions v JOIN bots b ON b.id = v.bot_id WHERE "
                    f"v.id IN ({', '.join('?' * len(ids))}) AND (b.state != 'entered' "
                    "OR v.status = 'failed')", ids).fetchone()
                if gone is not None:
                    db.execute("UPDATE matches SET status = 'discarded', error = ? "
                               "WHERE match_id = ?",
                               (f"the bot {gone[0]} left the ladder before it was played",
                                match_id))
                    continue
                db.execute("UPDATE matches SET status = 'running', started_at = ? "
                           "WHERE match_id = ?", (time.time(), match_id))
                break
            else:
                return None
        return self.match(match_id)

    def drop_challenges(self, reason: str) -> int:
        """The challenges not yet started, discarded with ``reason``: how many."""
        if not self.count_matches("WHERE kind = 'challenge' AND status = 'scheduled'"):
            return 0  # the common case: no write transaction
        with self.transaction() as db:
            return int(db.execute("UPDATE matches SET status = 'discarded', error = ? "
                                  "WHERE kind = 'challenge' AND status = 'scheduled'",
                                  (reason,)).rowcount)

    @league_reading
    def challenges(self, version_ids: Sequence[int], author_id: int, limit: int
                   ) -> list[Challenge]:
        """The challenges the author asked for or that seat one of ``version_ids``,
        newest first."""
        marks = ", ".join("?" * len(version_ids)) or "NULL"
        rows = self.db.execute(
            "SELECT c.match_id, a.name, c.author_id, c.asked_at FROM challenges c "
            "JOIN authors a ON a.id = c.author_id JOIN matches m ON m.match_id = c.match_id "
            "WHERE c.author_id = ? OR EXISTS (SELECT 1 FROM json_each(m.seats) seat "
            f"WHERE seat.value IN ({marks})) ORDER BY c.match_id DESC LIMIT ?",
            (author_id, *version_ids, limit)).fetchall()
        matches = {m.match_id: m for m in self.matches(
            f"WHERE match_id IN ({', '.join('?' * len(rows)) or 'NULL'})",
            [row[0] for row in rows])}
        return [Challenge(matches[row[0]], row[1], row[2], row[3]) for row in rows]


JobMaker = Callable[[str, MatchSeed, Sequence[int]], MatchJob]
"""The service's making of a match's job: (match id, seed, version ids by seat)."""


class ChallengeTurns:
    """Who takes the free match slots in the ladder's phases: the ladder and the
    challenges in turn (the module's rule), for one match loop."""

    def __init__(self) -> None:
        self.ladder_owed = False
        """A challenge took the last turn: the ladder has the next, if it has a match."""

    def jobs(self, store: Challenges, slots: int, ladder_jobs: Callable[[int], list[MatchJob]],
             job: JobMaker) -> list[MatchJob]:
        """Up to ``slots`` matches to start (recorded ``running``)."""
        ladder_first = self.ladder_owed
        jobs = ladder_jobs(slots) if ladder_first else []
        if jobs:
            self.ladder_owed = False
        if len(jobs) < slots:
            match = store.start_challenge()
            if match is not None:
                try:
                    jobs.append(job(match.match_id,
                                    MatchSeed.keyed(store.key("ladder_key"), match.label),
                                    match.seats))
                    self.ladder_owed = True
                except (ManifestError, OSError) as error:  # a bot's folder is gone
                    store.record_failure(match.match_id, f"cannot start the match: {error}")
        if not ladder_first and len(jobs) < slots:
            more = ladder_jobs(slots - len(jobs))
            if more:
                self.ladder_owed = False
            jobs += more
        return jobs
