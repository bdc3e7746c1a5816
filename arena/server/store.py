"""The league store: SQLite in WAL mode, the source of truth of a league server.

Every change is one transaction (``synchronous=FULL``: a committed change survives a power
cut). A match gets its row, ``running``, in one transaction before it is played, and its
result (every seat, the log's SHA-256, ``done``) in one more after: a server killed in
between leaves a ``running`` row and no result, which the next start marks ``discarded``
(a ladder match: the matchmaker simply plays others) or ``scheduled`` again (a final match,
played again from the same deal). A result is recorded only over a ``running`` row, so a
match is never counted twice.

``LeagueStore`` is made of parts by job: this module's authors, tokens and bots, with the
schema; ``arena.server.versions``'s uploads and versions; ``arena.server.matches``'s
matches and results; ``arena.server.challenges``'s challenge matches;
``arena.server.own_bots``'s retiring and deleting by authors. A store written by an earlier
version is upgraded as it is opened (``arena.server.schema_upgrade``). The file is created
0600: it holds the token hashes and the secret keys.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import hmac
import re
import secrets
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from arena.league.results import RESULT_COLUMNS, results_table
from arena.league.storage import StoreError, closed_on_error, connect, create
from arena.server.challenges import CHALLENGE_SCHEMA, Challenges
from arena.server.matches import (
    FINAL_ATTEMPTS,
    Recorded,
    Result,
    StoredMatch,
    ladder_id,
    seated,
)
from arena.server.own_bots import OwnBots
from arena.server.queue import QUEUE_SCHEMA, ValidationQueue
from arena.server.schema_upgrade import upgrade
from arena.server.store_base import (
    LEAGUE_STORE,
    SQLITE_INTEGERS,
    Conflict,
    checked,
    league_reading,
)
from arena.server.uploads import ABANDONED_SECONDS
from arena.server.versions import Version, Versions
from arena.text import lookalike_key, name_problem

__all__ = [
    "AUTHOR_NAME", "FINAL_ATTEMPTS", "LEAGUE_STORE", "SCHEMA", "Author", "Bot", "Conflict",
    "LeagueStore", "Recorded", "Result", "StoredMatch", "Version", "ladder_id", "seated",
]
"""The league store and the values its methods take and return."""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS authors (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL,         -- argon2id of the token's secret part
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    id INTEGER PRIMARY KEY,
    author_id INTEGER NOT NULL REFERENCES authors(id),
    name TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL DEFAULT 'entered'
        CHECK (state IN ('entered', 'withdrawn', 'disqualified', 'retired')),
    reason TEXT,                      -- public: why it was disqualified
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    number INTEGER NOT NULL,
    label TEXT NOT NULL,              -- bot.toml's version
    content_hash TEXT NOT NULL,       -- SHA-256 of the sources (BotManifest.content_digest)
    archive_sha256 TEXT NOT NULL,
    folder TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN
        ('queued', 'building', 'checking', 'active', 'failed', 'retired')),
    build_log TEXT NOT NULL DEFAULT '',
    check_report TEXT NOT NULL DEFAULT '',
    submitted_by INTEGER NOT NULL REFERENCES authors(id),
    submitted_at REAL NOT NULL,
    activated_at REAL,
    retired_at REAL,
    predecessor INTEGER REFERENCES versions(id),   -- the version active when it came
    play_folder TEXT,                 -- the built folder it plays from (once validated)
    UNIQUE (bot_id, number)
);
CREATE TABLE IF NOT EXISTS uploads (    -- every upload attempt (the rate limit counts them)
    id INTEGER PRIMARY KEY,
    author_id INTEGER NOT NULL REFERENCES authors(id),
    at REAL NOT NULL,
    outcome TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('ladder', 'final', 'challenge')),
    label TEXT NOT NULL,              -- the label its deals derive under from the key
    seats TEXT NOT NULL,              -- JSON list of version ids, by seat
    status TEXT NOT NULL CHECK (status IN
        ('scheduled', 'running', 'done', 'failed', 'discarded')),
    grp INTEGER,
    deal INTEGER,
    round INTEGER,
    created_at REAL NOT NULL,
    started_at REAL,
    {RESULT_COLUMNS},
    error TEXT
);
{results_table('version_id', 'versions')}
-- What the ladder's ratings and pages ask at every new result (the settled matches,
-- the running ones, counts by status): answered from the index, not a scan of the table.
CREATE INDEX IF NOT EXISTS matches_by_state ON matches (kind, status, match_id, finished_at);
CREATE INDEX IF NOT EXISTS matches_by_kind ON matches (kind, match_id);
-- Every page reads the versions but not their logs (up to ~100 KB each, stored before the
-- columns after them): their other columns, read from this index, leave the logs unread.
CREATE INDEX IF NOT EXISTS versions_without_logs ON versions (bot_id, number, id, label,
    content_hash, archive_sha256, folder, status, submitted_at, activated_at, retired_at,
    predecessor);
CREATE TABLE IF NOT EXISTS actions (   -- the organiser's, in order (results are kept)
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    action TEXT NOT NULL,
    reason TEXT
);
"""

_INDEXES = SCHEMA[SCHEMA.index("CREATE INDEX"):SCHEMA.index("CREATE TABLE IF NOT EXISTS actions")]
"""Run at every open (``IF NOT EXISTS``): a store without these indexes gets them once."""
TABLES = {"meta", "authors", "bots", "versions", "uploads", "matches", "results", "actions"}

# Verifies only tokens kept as argon2id hashes (``_verified``), each once: a token is
# otherwise kept, and checked in constant time, as its SHA-256 (``_SHA256``).
_HASHER = PasswordHasher(time_cost=3, memory_cost=16 * 1024, parallelism=1)

AUTHOR_NAME = re.compile(r"[^\W_](?:[\w .-]{0,38}[\w.-])?")
"""Letters (any script's), digits, inner spaces, '.', '_', '-': a name shown as it is."""
_VERIFIER = concurrent.futures.ThreadPoolExecutor(max_workers=2,
                                                  thread_name_prefix="arena-token-check")
"""Argon2 checks (of tokens kept as argon2 hashes), two at a time in two threads of their
own: each takes ~16 MB and tens of milliseconds, so a flood of wrong tokens costs two
checks' memory and two cores at most, never memory that grows with the flood."""
_SHA256 = "sha256$"
"""How a token's secret is kept: its SHA-256. The secret is 32 random bytes, so a slow
hash adds nothing against a stolen store (256 bits are not searched), and a check of a
wrong token must cost next to nothing, or a flood of made-up tokens holds every page.
A token kept as an argon2 hash is checked with argon2 once, at its first right use, and
kept as SHA-256 from then on."""


def _secret_digest(secret: str) -> str:
    return _SHA256 + hashlib.sha256(secret.encode()).hexdigest()


def _verified(digest: str, secret: str) -> bool:
    try:
        return bool(_HASHER.verify(digest, secret))
    except (VerificationError, InvalidHashError):
        return False


@dataclass(frozen=True)
class Author:
    id: int
    name: str


@dataclass(frozen=True)
class Bot:
    id: int
    name: str
    author_id: int
    author: str
    state: str
    reason: str | None


def _need_json(db: sqlite3.Connection) -> None:
    """The lists read the seats' JSON in SQLite (``seated``): its JSON functions are
    built in since 3.38 (Python 3.11's own builds have them; a system SQLite may not)."""
    try:
        db.execute("SELECT count(*) FROM json_each('[1]')").fetchone()
    except sqlite3.OperationalError:
        raise StoreError(f"this Python's SQLite ({sqlite3.sqlite_version}) has no JSON "
                         "functions, which the league server needs: use a Python linked to "
                         "SQLite 3.38 or later") from None


class LeagueStore(Versions, Challenges, OwnBots, ValidationQueue):
    """One connection to the league store (one per thread: SQLite connections are not
    shared between threads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.exists():
            # One script, one transaction: the tables, a fresh secret ladder key and the
            # first phase.
            create(path, LEAGUE_STORE, f"{SCHEMA} {QUEUE_SCHEMA} {CHALLENGE_SCHEMA} "
                   "INSERT INTO meta VALUES "
                   f"('ladder_key', '{secrets.token_bytes(32).hex()}'); "
                   "INSERT INTO meta VALUES ('phase', 'open');", folder_mode=0o700)
        self.db = connect(path, LEAGUE_STORE, TABLES, check_same_thread=False, timeout=30)
        with closed_on_error(self.db, path, LEAGUE_STORE):
            upgrade(self.db, path)
            self.db.executescript(_INDEXES + QUEUE_SCHEMA + CHALLENGE_SCHEMA)
            _need_json(self.db)

    # -- authors -------------------------------------------------------------------------

    def add_author(self, name: str) -> str:
        """Create an author; returns their token (``ID.SECRET``), which is not kept.
        Conflict for a name that pages could not show as it is (empty, blank, a control
        character, a right-to-left override, longer than 40 characters)."""
        if not AUTHOR_NAME.fullmatch(name):
            raise Conflict(f"an author's name is 1 to 40 letters, digits, spaces, '.', '_' "
                           f"or '-', starting with a letter or digit; not {name[:60]!r}")
        problem = name_problem(name) or ("has two spaces in a row (a page shows one)"
                                         if "  " in name else None)
        if problem:
            raise Conflict(f"the author's name {name!r} {problem}")
        secret = secrets.token_urlsafe(32)
        digest = _secret_digest(secret)
        with self.transaction() as db:
            key = lookalike_key(name)
            alike = next((known for (known,) in db.execute("SELECT name FROM authors")
                          if lookalike_key(known) == key), None)
            if alike is not None:
                raise Conflict(f"an author named {alike!r} exists already"
                               + ("" if alike == name else f", and {name!r} reads like it"))
            cursor = db.execute("INSERT INTO authors (name, token_hash, created_at) "
                                "VALUES (?, ?, ?)", (name, digest, time.time()))
        return f"{cursor.lastrowid}.{secret}"

    def rotate_token(self, name: str) -> str:
        """A new token for the author ``name`` (``ID.SECRET``, not kept); the old one stops
        working at once. Conflict for an unknown author."""
        secret = secrets.token_urlsafe(32)
        with self.transaction() as db:
            row = db.execute("SELECT id FROM authors WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise Conflict(f"no author named {name!r}")
            db.execute("UPDATE authors SET token_hash = ? WHERE id = ?",
                       (_secret_digest(secret), row[0]))
        return f"{row[0]}.{secret}"

    def authenticate(self, token: str) -> Author | None:
        """The author whose token this is, or None (malformed, unknown or wrong)."""
        number, _, secret = token.partition(".")
        if not (number.isascii() and number.isdigit()) or not secret or len(token) > 200 \
                or int(number) >= SQLITE_INTEGERS:  # an id no row has (nor SQLite holds)
            return None
        row = self.db.execute("SELECT id, name, token_hash FROM authors WHERE id = ?",
                              (int(number),)).fetchone()
        if row is None:
            return None
        kept: str = row[2]
        if kept.startswith(_SHA256):
            if not hmac.compare_digest(_secret_digest(secret), kept):
                return None
        elif _VERIFIER.submit(_verified, kept, secret).result():
            with self.transaction() as db:  # an argon2 hash: checked once, then SHA-256
                db.execute("UPDATE authors SET token_hash = ? WHERE id = ? AND token_hash = ?",
                           (_secret_digest(secret), row[0], kept))
        else:
            return None
        return Author(row[0], row[1])

    # -- bots and the organiser's actions ------------------------------------------------

    @league_reading
    def bots(self) -> list[Bot]:
        return [Bot(*checked(Bot, row, f"bot {row[0]!r}")) for row in self.db.execute(
            "SELECT b.id, b.name, b.author_id, a.name, b.state, b.reason FROM bots b "
            "JOIN authors a ON a.id = b.author_id ORDER BY b.name")]

    def bot(self, name: str) -> Bot | None:
        return next((b for b in self.bots() if b.name == name), None)

    def act(self, bot_name: str, action: str, reason: str | None = None) -> None:
        """withdraw, disqualify (with a public reason) or readmit a bot; its results stay."""
        states = {"withdraw": "withdrawn", "disqualify": "disqualified", "readmit": "entered"}
        if action not in states:
            raise ValueError(f"unknown action {action!r}")
        with self.transaction() as db:
            row = db.execute("SELECT id, state FROM bots WHERE name = ?",
                             (bot_name,)).fetchone()
            if row is None:
                raise Conflict(f"no bot named {bot_name!r}")
            if action == "readmit" and row[1] == "entered":
                raise Conflict(f"bot {bot_name!r} is not withdrawn nor disqualified")
            if row[1] == "retired" and action != "disqualify":  # its author's to undo
                raise Conflict(f"bot {bot_name!r} was retired by its author; a new version "
                               "of it brings it back")
            db.execute("UPDATE bots SET state = ?, reason = ? WHERE id = ?",
                       (states[action], reason if action == "disqualify" else None, row[0]))
            db.execute("INSERT INTO actions (at, bot_id, action, reason) VALUES (?, ?, ?, ?)",
                       (time.time(), row[0], action, reason))

    def actions(self) -> list[dict[str, Any]]:
        return [{"at": row[0], "bot": row[1], "action": row[2], "reason": row[3]}
                for row in self.db.execute(
                    "SELECT x.at, b.name, x.action, x.reason FROM actions x "
                    "JOIN bots b ON b.id = x.bot_id ORDER BY x.id")]

    # -- at start ------------------------------------------------------------------------

    def recover(self) -> dict[str, int]:
        """At start: matches a killed server left ``running`` are discarded (ladder) or
        scheduled again (final); versions left mid-validation are queued again."""
        released = self.release_matches()
        with self.transaction() as db:
            queued = db.execute("UPDATE versions SET status = 'queued' "
                                "WHERE status IN ('building', 'checking')").rowcount
            db.execute("UPDATE validation SET taken_at = NULL, stage_started_at = NULL "
                       "WHERE version_id IN (SELECT id FROM versions WHERE status = 'queued')")
            db.execute("UPDATE uploads SET outcome = 'refused: the server stopped while "
                       "taking it' WHERE outcome = 'receiving' AND at < ?",
                       (time.time() - ABANDONED_SECONDS,))
        return {**released, "requeued": queued}
