"""The match log: one gzip-compressed JSON-lines file per match.

Line kinds (field ``type``): ``header`` (match id, where its deals come from — the season
key's commitment and the match's label, or a public seed —, players, rule options, limits,
protocol version), ``seats``, ``event`` (an engine event, every card shown), ``decision``,
``timing``, ``fault`` (a strike or disqualification with its reason), ``penalty``,
``late_answer`` and ``result``.

A ``decision`` line says who decided (``seat``), the ``action`` applied (and its ``name``)
and who made the move (``source``): ``bot`` (its own answer), ``default`` (the referee's
§20 default after a fault), ``autopilot`` (the referee plays for a disqualified seat) or
``in-process`` (a built-in policy, ``arena check``). When a request went to the bot, the
line keeps the seat's view exactly as on the wire: ``asked`` is the ``DecisionRequest``
the bot received (its observation, legal actions, deadline and time bank), as the base64
of its protobuf bytes, and ``answer`` the ``Decision`` the bot sent (base64 too, its fields
the protocol knows: a bot's padding is not kept; null when none came). The events sent
with a request are the log's ``event`` lines as the seat sees them
(``arena.rules.events.seen_by``) and its ``fault`` lines. ``decode_asked`` and
``decode_answer`` read them back.

Timings live on lines of their own: each bot decision is followed by a ``timing`` line
(``seat``, ``request``, ``latency_ms`` from the request's sending to the answer's arrival,
``bank_ms`` the seat's time bank left after it). A log of the older format keeps
``latency_ms`` on the decision line instead (``decision_timing`` reads both).

**Determinism.** Every line but the ``timing`` lines is a pure function of the match key
(or seed) and the bots' answers: the same key and the same answers give the same lines,
byte for byte (``game_lines``). One wire field carries time: the ``time_bank_ms`` of a
request, which shrinks only when the bot answered past its deadline before; so the
guarantee holds for bots that answer within the deadline (as a timeout, a late answer
changes what happens anyway).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import gzip
import io
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from arena.formats import json_value
from arena.protocol import pb
from arena.rules.actions import Action, action_name
from arena.rules.events import Event, to_record

LOG_FORMAT = 1

LOG_COMPRESSION = 6
TIMING = "timing"
"""The kind of line that carries what the clock measured (outside the determinism)."""


@functools.lru_cache(maxsize=4096)
def _json_name(action: Action) -> str:
    return json.dumps(action_name(action))


@functools.lru_cache(maxsize=4096, typed=True)  # typed: events of two kinds may be equal tuples
def _event_line(event: Event) -> str:
    """An event's log line. Cached: the same events recur within a match and across a
    worker's matches (a card played, a card drawn)."""
    record = to_record(event)
    record["type"] = "event"
    return json.dumps(record, separators=(",", ":")) + "\n"


class _Decision:
    """A decision line (and its timing line), formatted at flush, off the hot path."""

    __slots__ = ("action", "answer", "asked", "bank", "latency", "request", "seat", "source")

    def __init__(self, seat: int, request: int, action: Action, source: str,
                 asked: bytes | None, answer: pb.Decision | None, latency: float,
                 bank: float) -> None:
        self.seat, self.request, self.action, self.source = seat, request, action, source
        self.asked, self.answer, self.latency, self.bank = asked, answer, latency, bank

    def lines(self) -> str:
        # As json.dumps writes the record (the fields are ints, a known source and a name).
        text = (f'{{"type":"decision","seat":{self.seat},"request":{self.request},'
                f'"action":{self.action},"name":{_json_name(self.action)},'
                f'"source":"{self.source}"}}')
        if self.asked is None:
            return text + "\n"
        # Base64 needs no JSON escaping: the wire fields are appended to the encoded line.
        encode = base64.b64encode
        answer = ("null" if self.answer is None
                  else f'"{encode(self.answer.SerializeToString()).decode()}"')
        return (f'{text[:-1]},"asked":"{encode(self.asked).decode()}","answer":{answer}}}\n'
                f'{{"type":"{TIMING}","seat":{self.seat},"request":{self.request},'
                f'"latency_ms":{round(self.latency * 1000, 3)!r},'
                f'"bank_ms":{round(self.bank * 1000, 3)!r}}}\n')


class MatchLogWriter:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # Unique per process: a worker orphaned by a killed run cannot collide with the rerun.
        self._partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        # The organiser's alone while the match is played (the log shows every hand): the
        # league server reads it then for the public view of its moves only; the finished
        # log is public.
        self._raw = os.fdopen(os.open(self._partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                                      | os.O_NOFOLLOW, 0o600), "wb")
        # mtime=0 keeps the compressed bytes free of the clock. Level 6 (gzip's own default)
        # takes half the CPU of GzipFile's 9 for 4% more bytes, CPU the bots share.
        self._gzip = gzip.GzipFile(fileobj=self._raw, mode="wb", mtime=0,
                                   compresslevel=LOG_COMPRESSION)
        self._text = io.TextIOWrapper(self._gzip, encoding="utf-8", newline="\n")
        self._pending: list[dict[str, Any] | Event | _Decision] = []
        self._held_bytes = 0

    # Records are queued and encoded by flush(), which the referee calls once the match is
    # over and, a few dozen lines at a time, just after sending a request: the encoding
    # never delays the reading of an answer, whose latency is measured on arrival.
    @property
    def held(self) -> int:
        """Lines queued, not yet encoded."""
        return len(self._pending)

    @property
    def held_bytes(self) -> int:
        """The wire bytes the queued decision lines keep (requests and answers: a bot may
        pad each answer up to the message limit)."""
        return self._held_bytes

    def write(self, record: dict[str, Any]) -> None:
        self._pending.append(record)

    def event(self, event: Event) -> None:
        self._pending.append(event)

    def events(self, events: list[Event]) -> None:
        self._pending.extend(events)

    def decision(self, seat: int, request: int, action: Action, source: str,
                 asked: bytes | None = None, answer: pb.Decision | None = None,
                 latency: float = 0.0, bank: float = 0.0) -> None:
        """A decision line; when a request went to the bot, with the seat's view (``asked``,
        the ``DecisionRequest``'s bytes as sent, and ``answer``, the bot's decision: it
        may not change after this call) and a timing line (``latency`` and the time
        ``bank`` left, in seconds)."""
        self._pending.append(_Decision(seat, request, action, source, asked, answer,
                                       latency, bank))
        if asked is not None:
            self._held_bytes += len(asked) + (0 if answer is None else answer.ByteSize())

    def flush(self) -> None:
        dumps, write = json.dumps, self._text.write
        for item in self._pending:
            if type(item) is _Decision:
                write(item.lines())
                continue
            if not isinstance(item, dict):
                write(_event_line(item))
                continue
            write(dumps(item, separators=(",", ":")) + "\n")
        self._pending.clear()
        self._held_bytes = 0
        # Into the file, whole lines decodable so far (a sync flush): a reader of the
        # match in play (the league server's live view) sees every line written.
        self._text.flush()
        self._gzip.flush(zlib.Z_SYNC_FLUSH)

    def close(self) -> None:
        """Finish the file and move it into place: a log exists whole or not at all."""
        self.flush()
        self._text.close()
        self._raw.close()
        os.chmod(self._partial, 0o644)
        self._partial.replace(self.path)

    def abandon(self) -> None:
        """Drop the unfinished log (also when the disk is full: closing it may fail)."""
        for stream in (self._text, self._raw):
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        with contextlib.suppress(OSError):
            self._partial.unlink(missing_ok=True)


LINE_MOST = 1 << 20
"""The longest line a match log may hold (bytes, uncompressed). The referee's longest are a
few kilobytes (the header; a decision line with its request, a hand of a hundred cards):
a longer one is a damaged log or a decompression bomb (a 2 MB file can unpack to a single
2 GB line, which reading whole would hold in memory)."""


def log_lines(path: Path) -> Iterator[bytes]:
    """The lines of a match log, uncompressed, each at most ``LINE_MOST`` bytes (ValueError
    at the first longer one, having read no more of it than that)."""
    with gzip.open(path, "rb") as stream:
        while line := stream.readline(LINE_MOST + 1):
            if len(line) > LINE_MOST:
                raise ValueError(f"a line longer than {LINE_MOST:,} bytes (no match log's "
                                 "line is: a damaged log, or a decompression bomb)")
            yield line


def read_log(path: Path) -> Iterator[dict[str, Any]]:
    for line in log_lines(path):
        yield parse_line(line)


_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
"""Every digit as ``0``, every other byte as a space: a long run of digits is then found
by ``bytes.find`` (a regular expression costs as much as the parse)."""
_LONG_RUN = b"0" * 19


def parse_line(line: bytes) -> Any:
    """A JSON line (UTF-8), as ``json.loads`` reads it: by orjson (a third of the time: a
    report reads every line of every new log), and by ``json`` what orjson refuses or
    reads otherwise (NaN, a lone surrogate, a number out of a double's range, a run of 19
    digits: an integer past 64 bits, which orjson reads as a float), so that a line reads
    the same either way and a damaged one raises ``json``'s own error."""
    if line.translate(_DIGITS).find(_LONG_RUN) < 0:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json_value(line)


def _integer(value: object) -> bool:
    return type(value) is int


def _number(value: object) -> bool:
    return type(value) in (int, float)


def log_problem(records: list[Any]) -> str | None:
    """Why ``records`` (a log's lines, parsed) are not a match log's as far as a reader
    relies on them, or None: each line an object with a type; the header's players, rules
    and limits of their kinds; every seat named one of the match's; a decision's source
    text, its numbers numbers. A hand-edited log (a line ``5``, a seat ``-5``, ``players``
    as text) would otherwise end ``view``, ``replay`` and ``refeed`` in tracebacks."""
    from arena.rules.match import MAX_PLAYERS
    from arena.rules.options import RuleOptions

    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            return f"line {number} is not a record (a JSON object with a type)"
    if not records or records[0]["type"] != "header":
        return "no header line"
    header = records[0]
    players = header.get("players")
    if not (_integer(players) and 2 <= players <= MAX_PLAYERS):
        return f"the header's players is {players!r}, not 2 to {MAX_PLAYERS}"
    rules, limits = header.get("rules", {}), header.get("limits", {})
    if not isinstance(rules, dict) or not isinstance(limits, dict):
        return "the header's rules or limits are not a table"
    if not all(_number(value) for value in limits.values()):
        return "the header's limits are not all numbers"
    try:
        RuleOptions.from_dict(rules)
    except (TypeError, ValueError) as error:
        return f"the header's rules: {error}"
    for number, record in enumerate(records, start=1):
        kind = record["type"]
        seats = record.get("seats") if kind == "seats" else [record]
        if not isinstance(seats, list):
            return f"line {number}: seats is not a list"
        for item in seats:
            if not isinstance(item, dict) or ("seat" in item and not (
                    _integer(item["seat"]) and 0 <= item["seat"] < players)):
                return f"line {number}: a seat that is not one of the match's 0 to {players - 1}"
        if kind == "decision" and not (isinstance(record.get("source", "bot"), str)
                                       and _integer(record.get("action", 0))
                                       and _integer(record.get("request", 0))):
            return f"line {number}: a decision's source, action or request of the wrong kind"
        if kind == "timing" and not all(record.get(key) is None or _number(record[key])
                                        for key in ("latency_ms", "bank_ms")):
            return f"line {number}: a timing that is not a number"
    return None


def game_lines(path: Path) -> bytes:
    """The log's lines without its ``timing`` lines, as bytes: what the same key and the
    same answers reproduce exactly (see the module's docstring)."""
    return b"".join(line for line in log_lines(path)
                    if not line.startswith(b'{"type":"timing"'))


def decode_asked(record: dict[str, Any]) -> pb.DecisionRequest | None:
    """The request a decision line says its seat received; None when none was sent (or
    the log predates the seat's view). ValueError when the field is damaged."""
    text = record.get("asked")
    if text is None:
        return None
    request = pb.DecisionRequest()
    _decode(request, text)
    return request


def decode_answer(record: dict[str, Any]) -> pb.Decision | None:
    text = record.get("answer")
    if text is None:
        return None
    answer = pb.Decision()
    _decode(answer, text)
    return answer


def _decode(message: Any, text: object) -> None:
    try:
        message.ParseFromString(base64.b64decode(str(text), validate=True))
    except Exception as error:  # binascii.Error, protobuf's DecodeError
        raise ValueError(f"a damaged wire message ({error})") from None


def decision_timing(record: dict[str, Any]) -> tuple[float | None, float | None]:
    """``(latency_ms, bank_ms)`` of a ``timing`` line, or of an older log's decision line
    (latency only); None for what is not known."""
    latency = record.get("latency_ms")
    bank = record.get("bank_ms")
    return (None if latency is None else float(latency),
            None if bank is None else float(bank))
