"""What the season store and the league store are built on: an SQLite file created whole,
opened only when it holds its store's tables, written one transaction at a time, and read
through checks; every trouble is a StoreError naming the file and what to do.

A store is created whole (its schema committed under a temporary name, then renamed), so a
store file that is empty or not a database is damage, never a store to start again.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sqlite3
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar


class StoreError(Exception):
    """A store that cannot be used; the message names the file and what to do."""


@dataclass(frozen=True)
class StoreKind:
    """Which store a message is about, and what its user can do."""

    name: str
    repair: str
    """What to do with a store that is damaged."""
    folder: str
    """What to do when its folder cannot be written."""
    foreign: str
    """What to do when its file is another SQLite database."""


REPAIR = ("restore it from a backup, or delete it to play the season again from the start "
          "(the match logs are kept)")
SEASON_STORE = StoreKind("season store", REPAIR,
                         "give the season an [output] folder it may write", REPAIR)
"""The store messages are about unless told (the league server's store names its own)."""
SIDE_FILES = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database (they take the database file's permissions)."""


def _nearly_full(path: Path) -> bool:
    """Whether the file system holding ``path`` has (next to) no space left."""
    try:
        stats = os.statvfs(path.parent)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 1024 * 1024


def store_trouble(path: Path, error: BaseException, kind: StoreKind = SEASON_STORE
                  ) -> StoreError:
    """A StoreError for ``error`` met while using the store at ``path``."""
    text = str(error)
    code = error.errno if isinstance(error, OSError) else None
    name = str(getattr(error, "sqlite_errorname", ""))
    if code in (errno.ENOSPC, errno.EDQUOT) or "disk is full" in text or (
            name.startswith("SQLITE_IOERR") and _nearly_full(path)):
        # In WAL mode a full disk often shows as an I/O error (growing the log or its index).
        return StoreError(f"{path}: the disk is full; nothing of the last change was "
                          "recorded: free some space, then run the same command again")
    if name.startswith("SQLITE_IOERR"):
        return StoreError(f"{path}: cannot write the {kind.name} ({name}: {text}); nothing "
                          "of the last change was recorded: check the disk it is on, then run "
                          "the same command again")
    if isinstance(error, sqlite3.DatabaseError) and (
            "not a database" in text or "malformed" in text):
        return StoreError(f"{path}: not a {kind.name} ({text}); {kind.repair}")
    if code == errno.EROFS or "readonly" in text:
        return StoreError(f"{path}: cannot write the {kind.name} (read-only file system or "
                          f"file); {kind.folder}")
    if isinstance(error, OSError):
        return StoreError(f"{path}: {error.strerror or error}; {kind.folder}")
    return StoreError(f"{path}: the {kind.name} cannot be used ({text}); {kind.repair}")


def damaged(path: Path, what: str, kind: StoreKind = SEASON_STORE) -> StoreError:
    """A StoreError for a store whose contents are not what this version wrote."""
    return StoreError(f"{path}: the {kind.name} is damaged: a value in it is not what "
                      f"UNO Arena writes ({what}); {kind.repair}")


Params = ParamSpec("Params")
Value = TypeVar("Value")


def reading(kind: StoreKind) -> Callable[[Callable[Params, Value]], Callable[Params, Value]]:
    """A read of a store (a method of an object with a ``path``): a damaged page, or a
    column that does not hold what this version writes there (a value of another type, JSON
    that does not parse or of another shape: a store edited or damaged inside a whole
    database), raises StoreError naming the file and what is wrong."""
    def decorate(method: Callable[Params, Value]) -> Callable[Params, Value]:
        @functools.wraps(method)
        def read(*args: Params.args, **kwargs: Params.kwargs) -> Value:
            try:
                return method(*args, **kwargs)
            except sqlite3.DatabaseError as error:
                raise store_trouble(_path_of(args[0]), error, kind) from None
            except ValueError as error:  # json's errors, and the stores' own checks
                what = (str(error) if type(error) is ValueError
                        else f"{type(error).__name__}: {error}")
                raise damaged(_path_of(args[0]), what, kind) from None
        return read
    return decorate


def _path_of(store: object) -> Path:
    path = getattr(store, "path", None)
    assert isinstance(path, Path), f"{store!r} has no path"
    return path


def create(path: Path, kind: StoreKind, script: str, folder_mode: int = 0o777) -> None:
    """Write a new store at ``path``, whole or not at all: ``script`` (its tables and first
    rows) committed under a temporary name, then renamed. Only its owner may read it (a
    store holds secret keys); its folder, when made, gets ``folder_mode``."""
    try:
        path.parent.mkdir(mode=folder_mode, parents=True, exist_ok=True)
    except OSError as error:
        raise store_trouble(Path(error.filename or path.parent), error, kind) from None
    partial = path.with_name(f"{path.name}.{os.getpid()}.new")
    try:
        for suffix in ("", *SIDE_FILES):
            Path(f"{partial}{suffix}").unlink(missing_ok=True)
        os.close(os.open(partial, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
        db = sqlite3.connect(partial, isolation_level=None)
        try:
            # A rollback journal while creating: the commit lands in the file itself (a
            # write-ahead log might stay behind, under the temporary name, on a full disk);
            # the store is switched to WAL once it is in place.
            db.execute("PRAGMA journal_mode=DELETE")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(f"BEGIN; {script} COMMIT;")
        finally:
            db.close()
        os.replace(partial, path)
    except (OSError, sqlite3.Error) as error:
        for suffix in ("", *SIDE_FILES):
            with contextlib.suppress(OSError):
                Path(f"{partial}{suffix}").unlink()
        raise store_trouble(path, error, kind) from None


@contextlib.contextmanager
def closed_on_error(db: sqlite3.Connection, path: Path, kind: StoreKind
                    ) -> Iterator[sqlite3.Connection]:
    """``db`` while a store is being opened: closed if opening fails (an SQLite error
    then raised as a StoreError naming ``path``)."""
    try:
        yield db
    except sqlite3.Error as error:
        db.close()
        raise store_trouble(path, error, kind) from None
    except BaseException:
        db.close()
        raise


def connect(path: Path, kind: StoreKind, tables: Collection[str], *, read_only: bool = False,
            **options: Any) -> sqlite3.Connection:
    """A connection to the existing store at ``path`` holding ``tables``, with foreign keys
    on; ``read_only``: one that cannot write (a reader may look while another process
    writes), else in WAL mode with ``synchronous=FULL`` (a committed change survives a
    power cut). Autocommit: every change is a ``write_transaction``."""
    if path.is_file() and path.stat().st_size == 0:
        raise StoreError(f"{path}: the {kind.name} is empty (0 bytes), so it was damaged (a "
                         f"store is never empty); {kind.repair}")
    address = f"{path.resolve().as_uri()}?mode=ro" if read_only else str(path)
    try:
        db: sqlite3.Connection = sqlite3.connect(address, uri=read_only, isolation_level=None,
                                                 **options)
    except sqlite3.Error as error:
        raise store_trouble(path, error, kind) from None
    with closed_on_error(db, path, kind):
        found = {row[0] for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not found >= set(tables):
            raise StoreError(f"{path}: not a {kind.name} (an SQLite database without a "
                             f"{kind.name}'s tables); {kind.foreign}")
        db.execute("PRAGMA foreign_keys=ON")
        if not read_only:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
    return db


@contextlib.contextmanager
def write_transaction(db: sqlite3.Connection, path: Path, kind: StoreKind = SEASON_STORE
                      ) -> Iterator[sqlite3.Connection]:
    """One write transaction on ``db`` (opened with ``isolation_level=None``): all of it or
    nothing; a failure to write raises StoreError naming ``path``."""
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as error:
        raise store_trouble(path, error, kind) from None
    try:
        yield db
    except BaseException as error:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        if isinstance(error, sqlite3.OperationalError):
            raise store_trouble(path, error, kind) from None
        raise
    try:
        db.execute("COMMIT")
    except sqlite3.Error as error:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise store_trouble(path, error, kind) from None
