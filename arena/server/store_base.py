"""What the league store's parts share: the store's kind (the messages name it), Conflict,
the connection they use (``StoreBase``: the file, one write transaction at a time, the
settings in ``meta``) and the check that a row holds what this version writes."""

from __future__ import annotations

import dataclasses
import functools
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena.league.storage import StoreKind, damaged, reading, write_transaction

LEAGUE_STORE = StoreKind(
    "league store", "restore it from a backup (the uploads and match logs in the league's "
    "data folder are not in it)", "give the league a data folder it may write",
    "give the league another data folder")
league_reading = reading(LEAGUE_STORE)
"""A read of the league store: damage raises StoreError naming the file (``reading``)."""
SQLITE_INTEGERS = 2 ** 63
"""SQLite's integers are 64-bit: a larger Python int cannot be bound to a query."""


class Conflict(Exception):
    """A change the store's state refuses (a name taken, a limit reached); the message
    says what and why."""


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


def checked(cls: type, row: Sequence[Any], what: str) -> Sequence[Any]:
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


class StoreBase:
    """One connection to the league store, which its parts (``LeagueStore``'s bases) use:
    one per thread (SQLite connections are not shared between threads)."""

    path: Path
    db: sqlite3.Connection

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it or nothing."""
        with write_transaction(self.db, self.path, LEAGUE_STORE) as db:
            yield db

    @league_reading
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
