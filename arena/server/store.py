"""The league store: SQLite in WAL mode, the source of truth of a league server.

Every change is one transaction (``synchronous=FULL``: a committed change survives a power
cut). A match gets its row, ``running``, in one transaction before it is played, and its
result (every seat, the log's SHA-256, ``done``) in one more after: a server killed in
between leaves a ``running`` row and no result, which the next start marks ``discarded``
(a ladder match: the matchmaker simply plays others) or ``scheduled`` again (a final match,
played again from the same deal). A result is recorded only over a ``running`` row, so a
match is never counted twice.

The file is created 0600: it holds the token hashes and the secret keys.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import hashlib
import hmac
import json
import os
import re
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from arena.formats import json_value
from arena.league.store import (
    MatchRecord,
    StoreError,
    StoreKind,
    damaged,
    reading,
    store_trouble,
    write_transaction,
)
from arena.server.uploads import ABANDONED_SECONDS
from arena.text import lookalike_key, name_problem

SCHEMA = """
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
        CHECK (state IN ('entered', 'withdrawn', 'disqualified')),
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
    kind TEXT NOT NULL CHECK (kind IN ('ladder', 'final')),
    label TEXT NOT NULL,              -- the label its deals derive under from the key
    seats TEXT NOT NULL,              -- JSON list of version ids, by seat
    status TEXT NOT NULL CHECK (status IN
        ('scheduled', 'running', 'done', 'failed', 'discarded')),
    grp INTEGER,
    deal INTEGER,
    round INTEGER,
    created_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    seconds REAL,
    decisions INTEGER,
    rounds INTEGER,
    round_limit_reached INTEGER,
    log_path TEXT,
    log_sha256 TEXT,
    error TEXT
);
CREATE TABLE IF NOT EXISTS results (
    match_id TEXT NOT NULL REFERENCES matches(match_id),
    seat INTEGER NOT NULL,
    version_id INTEGER NOT NULL REFERENCES versions(id),
    place INTEGER NOT NULL,
    score INTEGER NOT NULL,
    rounds_won INTEGER NOT NULL,
    strikes INTEGER NOT NULL,
    disqualified INTEGER NOT NULL,
    faults TEXT NOT NULL,
    PRIMARY KEY (match_id, seat)
);
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
"""Added when a store made before them is opened (``IF NOT EXISTS``: once)."""
TABLES = {"meta", "authors", "bots", "versions", "uploads", "matches", "results", "actions"}
PENDING = ("queued", "building", "checking")
FINAL_ATTEMPTS = 3
"""Tries of a final match the host fails (a worker killed, a host short of memory)."""

# Token secrets are 32 random bytes: argon2's cost guards against a stolen store, not
# against guessing, so the lighter RFC 9106 "low memory" profile keeps each check quick.
_HASHER = PasswordHasher(time_cost=3, memory_cost=16 * 1024, parallelism=1)

LEAGUE_STORE = StoreKind(
    "league store", "restore it from a backup (the uploads and match logs in the league's "
    "data folder are not in it)", "give the league a data folder it may write")

AUTHOR_NAME = re.compile(r"[^\W_](?:[\w .-]{0,38}[\w.-])?")
"""Letters (any script's), digits, inner spaces, '.', '_', '-': a name shown as it is."""


def ladder_id(number: int) -> str:
    """The id of the ``number``-th ladder match: ``L000001``...``L999999``, then a ``~``
    for each digit past six (``L~1000000``, ``L~~10000000``), so that ids sort as text in
    the order they were given (lists, pages and the settled mark compare them as text;
    ``L1000000`` would have sorted before ``L999999``)."""
    digits = f"{number:06d}"
    return f"L{'~' * (len(digits) - 6)}{digits}"


IN_LIST_MOST = 500
"""Values bound to one ``IN (...)``: SQLite before 3.32 binds at most 999 a statement."""
Recorded = tuple[int, float | None]
"""Done matches and the time the last was recorded (``LeagueStore.recorded``)."""
_VERIFIER = concurrent.futures.ThreadPoolExecutor(max_workers=2,
                                                  thread_name_prefix="arena-token-check")
"""Token checks, two at a time in two threads of their own: each takes ~16 MB and tens of
milliseconds of argon2, and a flood of wrong tokens (found by attack: 44 a second grew the
server from 98 to 970 MB, kept) then costs two checks' memory and two cores at most."""


_SHA256 = "sha256$"
"""How a token's secret is kept: its SHA-256. The secret is 32 random bytes, so a slow
hash adds nothing against a stolen store (256 bits are not searched), and a check of a
wrong token must cost nothing: each argon2 check took tens of milliseconds, two at a
time, and 100-150 made-up tokens a second held every page for 4-6 s (review, stop 38).
Stores made before keep argon2 hashes, each replaced at its token's first right use."""


def _secret_digest(secret: str) -> str:
    return _SHA256 + hashlib.sha256(secret.encode()).hexdigest()


def _verified(digest: str, secret: str) -> bool:
    try:
        return bool(_HASHER.verify(digest, secret))
    except (VerificationError, InvalidHashError):
        return False


SQLITE_INTEGERS = 2 ** 63
"""SQLite's integers are 64-bit: a larger Python int cannot be bound to a query."""


@dataclass(frozen=True)
class Author:
    id: int
    name: str


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


@dataclass(frozen=True)
class Bot:
    id: int
    name: str
    author_id: int
    author: str
    state: str
    reason: str | None


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
class Result:
    match_id: str
    seat: int
    version_id: int
    place: int
    score: int
    rounds_won: int
    strikes: int
    disqualified: bool
    faults: tuple[dict[str, object], ...]


_VERSION_QUERY = """
SELECT v.id, v.bot_id, b.name, b.author_id, a.name, v.number, v.label, v.content_hash,
       v.archive_sha256, v.folder, v.status, {logs}, v.submitted_at,
       v.activated_at, v.retired_at, v.predecessor, b.state, b.reason
FROM versions v JOIN bots b ON b.id = v.bot_id JOIN authors a ON a.id = b.author_id
"""
_MATCH_QUERY = """
SELECT match_id, kind, label, seats, status, grp, deal, created_at, finished_at, seconds,
       decisions, rounds, round_limit_reached, log_path, log_sha256, error FROM matches
"""


_RAW = {"int": (int,), "bool": (int, type(None)), "float": (float, int), "str": (str,),
        "None": (type(None),)}
"""What SQLite hands back for a field of each type (a bool is kept as 0 or 1, NULL while
unknown; anything else, a tuple, as JSON text)."""


_TYPE_NAMES = {int: "an integer", float: "a number", str: "text", type(None): "NULL"}


@functools.cache
def _raw_types(cls: type) -> tuple[tuple[str, tuple[type, ...]], ...]:
    """Each field of a row dataclass, and the types its column may hold."""
    return tuple((field.name, tuple(kind for part in str(field.type).split(" | ")
                                    for kind in _RAW.get(part, (str,))))
                 for field in dataclasses.fields(cls))


def _checked(cls: type, row: Sequence[Any], what: str) -> Sequence[Any]:
    """``row``, the columns of a ``cls``; ValueError naming the first column whose value
    is not of its type (a store edited or damaged inside a whole database)."""
    fields = _raw_types(cls)
    if not all(type(value) in kinds for value, (_, kinds) in zip(row, fields, strict=True)):
        for value, (name, kinds) in zip(row, fields, strict=True):
            if type(value) not in kinds:
                shown = repr(value) if len(repr(value)) <= 60 else f"{repr(value)[:57]}..."
                names = [_TYPE_NAMES[kind] for kind in kinds
                         if not (kind is int and float in kinds)]  # a number: int or float
                raise ValueError(f"{what}: its {name} is {shown}, not {' or '.join(names)}")
    return row


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
    row = _checked(StoredMatch, row, what)
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


def _need_json(db: sqlite3.Connection) -> None:
    """The lists read the seats' JSON in SQLite (``seated``): its JSON functions are
    built in since 3.38 (Python 3.11's own builds have them; a system SQLite may not)."""
    try:
        db.execute("SELECT count(*) FROM json_each('[1]')").fetchone()
    except sqlite3.OperationalError:
        db.close()
        raise StoreError(f"this Python's SQLite ({sqlite3.sqlite_version}) has no JSON "
                         "functions, which the league server needs: use a Python linked to "
                         "SQLite 3.38 or later") from None


_reading = reading(LEAGUE_STORE)
Value = TypeVar("Value")


class Conflict(Exception):
    """A change the store's state refuses (a name taken, a limit reached); the message
    says what and why."""


class LeagueStore:
    """One connection to the league store (one per thread: SQLite connections are not
    shared between threads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.exists():
            self._create()
        elif path.stat().st_size == 0:
            raise StoreError(f"{path}: the league store is empty (0 bytes), so it was "
                             "damaged; restore it from a backup")
        try:
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                      timeout=30)
            tables = {row[0] for row in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables >= TABLES:
                self.db.close()
                raise StoreError(f"{path}: not a league store (an SQLite database without "
                                 "the league's tables); give the league another data folder")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(_INDEXES)
            _need_json(self.db)
        except sqlite3.Error as error:
            raise store_trouble(path, error, LEAGUE_STORE) from None

    def _create(self) -> None:
        """The store whole or not at all: written under a temporary name, then renamed."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.new")
        partial.unlink(missing_ok=True)
        os.close(os.open(partial, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
        try:
            db = sqlite3.connect(partial, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=DELETE")
                # One script, one transaction: the tables, a fresh secret ladder key and
                # the first phase.
                db.executescript(f"BEGIN; {SCHEMA} INSERT INTO meta VALUES ('ladder_key', "
                                 f"'{secrets.token_bytes(32).hex()}'); "
                                 "INSERT INTO meta VALUES ('phase', 'open'); COMMIT;")
            finally:
                db.close()
            os.replace(partial, self.path)
        except (sqlite3.Error, OSError) as error:
            partial.unlink(missing_ok=True)
            raise store_trouble(self.path, error, LEAGUE_STORE) from None

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it or nothing."""
        with write_transaction(self.db, self.path, LEAGUE_STORE) as db:
            yield db

    # -- meta ----------------------------------------------------------------------------

    @_reading
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is not None and type(row[0]) is not str:
            raise ValueError(f"the setting {key!r} is {row[0]!r:.60}, not text")
        return None if row is None else row[0]

    def key(self, name: str) -> bytes:
        """A secret key kept in the store (``ladder_key``, ``final_key``): 32 bytes;
        StoreError when it is missing or damaged (deals made from no key would be public)."""
        text = self.meta(name)
        try:
            key = bytes.fromhex(text or "")
        except ValueError:
            key = b""
        if len(key) != 32:
            problem = "missing" if text is None else "not 32 bytes in hex"
            raise damaged(self.path, f"the {name} is {problem}", LEAGUE_STORE)
        return key

    def set_meta(self, values: dict[str, str]) -> None:
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    # -- authors -------------------------------------------------------------------------

    def add_author(self, name: str) -> str:
        """Create an author; returns their token (``ID.SECRET``), which is not kept.
        Conflict for a name that pages could not show as it is (found by attack: empty,
        blank, a newline, a right-to-left override, 100 kB were all taken)."""
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
            with self.transaction() as db:  # a store made before: argon2 once, no more
                db.execute("UPDATE authors SET token_hash = ? WHERE id = ? AND token_hash = ?",
                           (_secret_digest(secret), row[0], kept))
        else:
            return None
        return Author(row[0], row[1])

    # -- uploads and versions ------------------------------------------------------------

    def uploads_since(self, author_id: int, since: float) -> int:
        row = self.db.execute("SELECT COUNT(*) FROM uploads WHERE author_id = ? AND at >= ?",
                              (author_id, since)).fetchone()
        return int(row[0])

    def reserve_upload(self, author_id: int, since: float, most: int) -> int | None:
        """In one transaction, the author's uploads since ``since`` counted and, below
        ``most``, this one noted as being received: its row's id, or None at the limit.
        (Counted when it arrives: found by attack, twenty uploads sent at once each passed
        a check made before any of them was recorded.)"""
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
                owned = db.execute("SELECT COUNT(*) FROM bots WHERE author_id = ?",
                                   (author_id,)).fetchone()[0]
                if owned >= max_bots:
                    raise Conflict(f"you have {owned} bot(s), the league's limit per author "
                                   f"(max_bots_per_author); submit a new version of one of "
                                   "them (the same name in bot.toml) instead")
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
            number = db.execute("SELECT COALESCE(MAX(number), 0) + 1 FROM versions "
                                "WHERE bot_id = ?", (bot_id,)).fetchone()[0]
            version_id = db.execute(
                "INSERT INTO versions (bot_id, number, label, content_hash, archive_sha256, "
                "folder, submitted_by, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (bot_id, number, label, content_hash, archive_sha256, folder, author_id,
                 now)).lastrowid
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

    @_reading
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
            found.append(Version(*_checked(Version, row, f"version {row[0]!r}")))
        return found

    def version(self, version_id: int) -> Version | None:
        """The version of that id; None when there is none (an id past SQLite's 64-bit
        integers, from an address, included: no row has it)."""
        if not -SQLITE_INTEGERS <= version_id < SQLITE_INTEGERS:
            return None
        found = self.versions("WHERE v.id = ?", (version_id,), logs=True)
        return found[0] if found else None

    def next_queued(self) -> Version | None:
        """The next version to validate, the authors taking turns: the oldest queued one of
        the author whose latest version taken from the queue is the oldest. In order of
        submission, one author's slow builds kept everyone else's versions waiting (review,
        stop 38)."""
        row = self.db.execute(
            "SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot_id "
            "WHERE v.status = 'queued' ORDER BY ("
            "  SELECT COALESCE(MAX(w.id), 0) FROM versions w JOIN bots c ON c.id = w.bot_id "
            "  WHERE c.author_id = b.author_id AND w.status != 'queued'), v.id LIMIT 1"
        ).fetchone()
        return None if row is None else self.version(row[0])

    def set_status(self, version_id: int, status: str, *, build_log: str | None = None,
                   check_report: str | None = None) -> None:
        with self.transaction() as db:
            db.execute("UPDATE versions SET status = ?, build_log = COALESCE(?, build_log), "
                       "check_report = COALESCE(?, check_report) WHERE id = ?",
                       (status, build_log, check_report, version_id))

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
        return retired

    # -- bots and the organiser's actions ------------------------------------------------

    @_reading
    def bots(self) -> list[Bot]:
        return [Bot(*_checked(Bot, row, f"bot {row[0]!r}")) for row in self.db.execute(
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
            db.execute("UPDATE bots SET state = ?, reason = ? WHERE id = ?",
                       (states[action], reason if action == "disqualify" else None, row[0]))
            db.execute("INSERT INTO actions (at, bot_id, action, reason) VALUES (?, ?, ?, ?)",
                       (time.time(), row[0], action, reason))

    def actions(self) -> list[dict[str, Any]]:
        return [{"at": row[0], "bot": row[1], "action": row[2], "reason": row[3]}
                for row in self.db.execute(
                    "SELECT x.at, b.name, x.action, x.reason FROM actions x "
                    "JOIN bots b ON b.id = x.bot_id ORDER BY x.id")]

    # -- matches -------------------------------------------------------------------------

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
            changed = db.execute(
                "UPDATE matches SET status = 'done', finished_at = ?, seconds = ?, "
                "decisions = ?, rounds = ?, round_limit_reached = ?, log_path = ?, "
                "log_sha256 = ? WHERE match_id = ? AND status = 'running'",
                (time.time(), record.seconds, record.decisions, record.rounds,
                 int(record.round_limit_reached), record.log_path, record.log_sha256,
                 record.match_id)).rowcount
            if changed != 1:
                return False
            db.executemany(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(record.match_id, s.seat, seats[s.seat], s.place, s.score, s.rounds_won,
                  s.strikes, int(s.disqualified), json.dumps(list(s.faults)))
                 for s in record.seats])
        return True

    def record_failure(self, match_id: str, error: str) -> None:
        """A match that could not be played (the referee's or the host's trouble, never a
        bot's: a bot's faults are in its result). A final match is scheduled again, up to
        ``FINAL_ATTEMPTS`` tries: one failure lost it for good, and the final, complete
        without it, published its key (review, stop 38)."""
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

    def recover(self) -> dict[str, int]:
        """At start: matches a killed server left ``running`` are discarded (ladder) or
        scheduled again (final); versions left mid-validation are queued again."""
        released = self.release_matches()
        with self.transaction() as db:
            queued = db.execute("UPDATE versions SET status = 'queued' "
                                "WHERE status IN ('building', 'checking')").rowcount
            db.execute("UPDATE uploads SET outcome = 'refused: the server stopped while "
                       "taking it' WHERE outcome = 'receiving' AND at < ?",
                       (time.time() - ABANDONED_SECONDS,))
        return {**released, "requeued": queued}

    def release_matches(self) -> dict[str, int]:
        """Matches left ``running`` by players that are gone (a killed server, or a match
        loop that failed and dropped its workers): ladder ones discarded (never counted),
        final ones scheduled again."""
        with self.transaction() as db:
            discarded = db.execute(
                "UPDATE matches SET status = 'discarded', error = 'the server stopped while "
                "it was being played' WHERE status = 'running' AND kind = 'ladder'").rowcount
            again = db.execute("UPDATE matches SET status = 'scheduled', started_at = NULL "
                               "WHERE status = 'running' AND kind = 'final'").rowcount
        return {"discarded": discarded, "rescheduled": again}

    @_reading
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

    @_reading
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

    @_reading
    def status_counts(self, kind: str) -> dict[str, int]:
        """How many matches of a kind are in each status."""
        return {str(status): int(count) for status, count in self.db.execute(
            "SELECT status, COUNT(*) FROM matches WHERE kind = ? GROUP BY status", (kind,))}

    def match(self, match_id: str) -> StoredMatch | None:
        found = self.matches("WHERE match_id = ?", (match_id,))
        return found[0] if found else None

    @_reading
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

    @_reading
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

    @_reading
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
        query = ("SELECT r.match_id, r.seat, r.version_id, r.place, r.score, r.rounds_won, "
                 "r.strikes, r.disqualified, r.faults FROM results r JOIN matches m "
                 f"ON m.match_id = r.match_id WHERE {' AND '.join(conditions)}")
        return [Result(row[0], row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]),
                       _records(row[8], f"match {row[0]!r}, seat {row[1]}: its faults are"))
                for row in (_checked(Result, row, f"match {row[0]!r}, seat {row[1]!r}")
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
