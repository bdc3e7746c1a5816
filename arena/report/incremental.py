"""What the last render left and what must be made again.

The state file keeps, for each file or page a render can reuse, the key of everything it
shows: a page whose key is unchanged and that is still in the site is not rendered again.
Every file is replaced whole, so a render stopped midway leaves a site the next render
mends."""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from arena.formats import json_value
from arena.league.store import SeasonStore, StoreError
from arena.report.data import MatchRow, SeasonData
from arena.report.logcheck import LogProblem

STATE_FILE = ".render-state.json"
STATE_FORMAT = 2
"""Format 2 keeps one record a match under ``matches`` (``MatchRecord``); a state of
format 1 (three string keys a match) is still read."""

MatchRecord = list[Any]
"""What the state keeps of a played match: [its pages' key, its log's check stamp, its
seats' median think times (ms)], each None until known."""


@dataclass(frozen=True)
class Inspection:
    """The last render as it stands: what it left in the state file and the site, and
    which played matches need nothing done (``inspect_site``)."""

    previous: dict[str, str]
    """The last render's keys of lists, parts and the archive."""
    known: dict[str, MatchRecord]
    """Its records of the matches not settled."""
    settled: dict[str, tuple[MatchRecord, int]]
    """Played matches whose log is the file checked last time and whose pages were
    rendered from it under these templates and are all in the site: the last render's
    record and the log's size, by match id."""
    whole: set[str]
    """Of the matches not settled, those whose files are all in the site."""


def inspect_site(out: Path, version: str, store_path: Path | None) -> Inspection:
    """Read the last render's state, list the site's folders and stat every played match's
    log (``store_path``'s; None: none), to settle the matches a render has nothing to do
    for; a helper does this while the render reads the store (nearly a second at 50,000
    results). A store that does not read settles nothing: the render reads it and says
    why."""
    previous, known = read_state(out / STATE_FILE)
    try:
        whole = whole_matches(out)
    except OSError:  # no site yet, or a folder of it missing
        whole = set()
    logs: list[tuple[str, str | None, str | None]] = []
    with contextlib.suppress(StoreError):
        store = SeasonStore(store_path, read_only=True) if store_path else None
        try:
            logs = store.played_logs() if store else []
        finally:
            if store:
                store.close()
    settled: dict[str, tuple[MatchRecord, int]] = {}
    for match_id, log_path, sha in logs:
        before = known.get(match_id)
        if before is None or not sha or not log_path or match_id not in whole:
            continue
        try:
            stat = os.stat(log_path)
        except OSError:
            continue
        if before[1] == checked_stamp(sha, stat) and before[0] == log_key(version, stat):
            settled[match_id] = (before, stat.st_size)
            del known[match_id]
    return Inspection(previous, known, settled, whole - settled.keys())


def whole_matches(out: Path) -> set[str]:
    """The matches whose files are all in the site: page, replay, replay data and log
    (each folder listed once)."""
    def ids(names: list[str], suffix: str) -> set[str]:
        return {name.removesuffix(suffix) for name in names if name.endswith(suffix)}

    replays = os.listdir(out / "replays")
    return (ids(os.listdir(out / "matches"), ".html") & ids(replays, ".html")
            & ids(replays, ".js") & ids(os.listdir(out / "logs"), ".jsonl.gz"))


def checked_stamp(sha256: str, stat: os.stat_result) -> str:
    """What the check of a log recorded with this SHA-256 is reused under: the file it
    read (same inode, size, modification and change times: any write, rename over it or
    touch changes the change time, which no user can set back)."""
    return f"{sha256}:{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}"


def log_key(version: str, stat: os.stat_result) -> str:
    """A log's pages are reused while the templates and the log's size and time stay."""
    return f"{version}:{stat.st_size}:{stat.st_mtime_ns}"


def read_state(path: Path) -> tuple[dict[str, str], dict[str, MatchRecord]]:
    """The last render's state: its keys of lists, parts and the archive, and its record
    of each played match. A state of format 1 is read into records, so a site it describes
    is not rendered again whole; a state that does not read is no state (everything is
    rendered again)."""
    try:
        loaded = json_value(path.read_text())
    except (OSError, ValueError):
        return {}, {}
    if not isinstance(loaded, dict):
        return {}, {}
    match_state: dict[str, MatchRecord] = {}
    if loaded.pop("format", None) == STATE_FORMAT:
        matches = loaded.pop("matches", None)
        if isinstance(matches, dict):
            match_state = {str(k): v for k, v in matches.items() if _is_record(v)}
        return {str(k): str(v) for k, v in loaded.items()}, match_state
    flat: dict[str, str] = {}
    for key, value in loaded.items():
        kind, slash, match_id = str(key).partition("/")
        if not slash and key != "_templates":
            match_state.setdefault(key, [None, None, None])[0] = value
        elif kind == "checked":
            match_state.setdefault(match_id, [None, None, None])[1] = value
        elif kind == "time":
            with contextlib.suppress(ValueError, TypeError):
                medians = json_value(value)
                if _is_record([None, None, medians]):
                    match_state.setdefault(match_id, [None, None, None])[2] = medians
        else:
            flat[str(key)] = str(value)
    return flat, match_state


_MEDIAN_TYPES = {int, float, type(None)}
_MEDIAN_LIMIT = 2 ** 63


def _is_record(value: object) -> bool:
    """Whether a state file's match record has a record's shape (a damaged or edited state
    loses that record only: its match is looked at again): its think times numbers of
    milliseconds from 0 to 2^63 (not NaN, not an integer the state file cannot hold)."""
    if not isinstance(value, list) or len(value) != 3:
        return False
    key, stamp, medians = value
    return (isinstance(key, str | None) and isinstance(stamp, str | None)
            and (medians is None or (isinstance(medians, list)
                                     and set(map(type, medians)) <= _MEDIAN_TYPES
                                     and all(m is None or 0 <= m < _MEDIAN_LIMIT
                                             for m in medians))))


def state_json(state: dict[str, str], match_state: dict[str, MatchRecord]) -> bytes:
    """The state file, keys sorted (the same season gives the same file), compact as
    ``json.dumps(..., sort_keys=True, separators=(",", ":"))`` writes it, by orjson (a
    fifth of json's time: 10 MB at 50,000 results)."""
    whole = {**state, "format": STATE_FORMAT, "matches": match_state}
    try:
        return orjson.dumps(whole, option=orjson.OPT_SORT_KEYS) + b"\n"
    except orjson.JSONEncodeError:  # a think time past 64 bits, from a log made by hand
        return (json.dumps(whole, sort_keys=True, separators=(",", ":")) + "\n").encode()


def list_page_context(data: SeasonData, problems: dict[str, LogProblem], pages: int
                      ) -> str:
    """What every page of the match list shows besides its rows."""
    bots = sorted((b.id, b.name, b.version, b.slug) for b in [*data.ranked, *data.unrated])
    # Nothing that moves with every result (the live ratings, the calibrated draw
    # probability: the footer gives it on the standings page only), or every page would.
    return repr((data.name, bots, [b.id for b in data.unrated],
                 sorted(data.settings.items()), data.tiebreak, len(data.matches), pages,
                 sorted((p.match_id, p.kind, p.detail) for p in problems.values())))


def match_row_keys(matches: list[MatchRow], problems: dict[str, LogProblem],
                   listed_on: dict[str, str]) -> dict[str, bytes]:
    """Everything a match's row shows in a list (the match list, a bot's list of
    matches, the results download), to key the pages that list it. Marshalled (format 2:
    no references, no mark of interned strings, so equal values give equal bytes), which
    takes half of ``repr``'s time for the 80,000 rows of a large season."""
    dumps = marshal.dumps
    return {m.match_id: dumps((
        m.match_id, m.status, m.round, m.seats, m.chance,
        [(r.entrant_id, r.place, r.score, r.disqualified, len(r.faults)) for r in m.results],
        [(other, listed_on.get(other)) for other in m.deal_matches], m.net, m.rounds,
        m.round_limit_reached, m.decisions, m.seconds, m.finished_at, m.error,
        bool(m.log_path), m.match_id in problems), 2) for m in matches}


def list_key(version: str, context: str, number: int, rows: Iterable[bytes]) -> str:
    """The digest of everything one page of a list shows: what every page shows besides
    its rows (``context``), its number and its rows' keys."""
    digest = hashlib.sha256(f"{version}\0{context}\0{number}".encode())
    for row in rows:
        digest.update(row)
    return digest.hexdigest()


def write_in_parts(path: Path, head: bytes, parts: list[tuple[str, Callable[[], bytes]]],
                   separator: bytes, tail: bytes, previous: dict[str, str],
                   state: dict[str, str]) -> None:
    """Write ``head``, the parts (key, maker) joined by ``separator``, and ``tail``; a
    part whose key the file written last time holds is copied from it, not made again."""
    known = parts_record(previous.get(f"parts/{path.name}"))
    old = path.read_bytes() if known and path.is_file() else b""
    kept: dict[str, bytes] = {}
    if old and known and hashlib.sha256(old).hexdigest() == known[0]:
        kept = {key: old[start:end] for key, start, end in known[1]}
    pieces, spans, at = [head], [], len(head)
    for index, (key, make) in enumerate(parts):
        if index:
            pieces.append(separator)
            at += len(separator)
        piece = kept.get(key)
        piece = make() if piece is None else piece
        pieces.append(piece)
        spans.append((key, at, at + len(piece)))
        at += len(piece)
    pieces.append(tail)
    content = b"".join(pieces)
    state[f"parts/{path.name}"] = json.dumps([hashlib.sha256(content).hexdigest(), spans])
    if content != old:
        replace(path, content)


def parts_record(text: str | None) -> tuple[str, list[tuple[str, int, int]]] | None:
    """A state's record of a file written in parts: its SHA-256 and each part's key and
    span; None when there is none, or it is not of that shape (a state edited or damaged:
    the file is then made again whole)."""
    try:
        digest, spans = json_value(text or "")
        parts = [(str(key), int(start), int(end)) for key, start, end in spans]
    except (ValueError, TypeError):
        return None
    return (digest, parts) if isinstance(digest, str) else None


def replace(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` unless it holds it already, whole or not at all (a
    render killed midway leaves the last file or the new one, never a part of one)."""
    if path.is_file() and path.read_bytes() == content:
        return
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(content)
    os.replace(partial, path)
