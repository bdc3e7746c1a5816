"""Run one match between bot processes over gRPC (the referee's core loop).

The bots are gRPC clients of a ``grpc.aio`` server listening on a Unix socket private to
the match. Each seat is bound by a one-time token. The loop drives the rules engine and,
at every decision, sends the seat its pending events plus a decision request, and waits
for the answer within the deadline and the seat's time bank; faults follow RULES.md §20.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]

from arena.bots.policies import GreedyPolicy, Policy
from arena.processes import owner_tag, raise_descriptor_limit
from arena.protocol import PROTOCOL_VERSION, pb, pb_grpc
from arena.protocol.convert import (
    ProtocolError,
    action_from_message,
    rules_message,
    variants_from_wire,
)
from arena.protocol.wire import decision_request_bytes, event_entry, fault_entry, request_entry
from arena.referee.faults import DISQUALIFYING, Fault, FaultKind, default_action
from arena.referee.launch import BotProcess, SeatLauncher
from arena.referee.limits import Limits
from arena.referee.log import LOG_FORMAT, MatchLogWriter
from arena.referee.relay import BUDGET_BYTES, FRAME_COST, GRANT_BYTES, SeatRelay
from arena.rules import events as ev
from arena.rules.actions import UNO_CALL, Action, DecisionKind, action_name
from arena.rules.options import OFFICIAL, RuleOptions, missing_variants
from arena.rules.seeds import MatchSeed
from arena.rules.state import Match
from arena.text import visible

# What a bot may make the referee hold: its memory must not depend on what bots send.
MAX_MESSAGE_BYTES = 16 * 1024
"""Largest message a bot may send (a decision is ~10 bytes, a hello ~100)."""
INBOX_MESSAGES = 32
INBOX_BYTES = 64 * 1024
"""A seat's unread messages, at most: beyond either, the seat is cut off for flooding."""
INBOX_FLOOD = (f"sent more than {INBOX_MESSAGES} messages or {INBOX_BYTES} bytes ahead of the "
               "referee; its stream was cut off")
MAX_METADATA_BYTES = 8 * 1024
STREAMS_PER_CONNECTION = 2
"""A bot needs one stream; HTTP/2 refuses more on the same connection."""
PENDING_HELLOS = 16
"""Streams still waiting for their hello, at most: a new one past this evicts the one that
has waited longest (a real bot says hello at once, so flooding the referee with silent
streams cannot keep it out)."""
REFUSED_KEPT = 8
"""Refused tokens remembered (for the NO_HELLO reason), at most."""
TIMER_SLACK = 0.001
"""A deadline's timer is set this much after it: uvloop's clock counts milliseconds, and
a timer set for the deadline itself may run up to one before it (it is then set again:
a request expires by ``time.perf_counter``, the clock its latency is measured on)."""
LOG_HELD_MOST = 20_000
"""Log lines held unencoded while the bots play, at most (a 2-player match to 500 holds
500 to 2,000): a longer match encodes them as it goes."""
LOG_HELD_BYTES = 4 * 1024 * 1024
"""The wire bytes of the held decision lines, at most (a 2-player match to 500 holds 20 to
90 KB; a bot padding every answer to the message limit reaches this in 256 decisions)."""


@dataclass(frozen=True)
class MatchSpec:
    match_id: str
    seed: int | MatchSeed
    """Where the deals come from: a secret key (seasons, ``arena play``) or a public seed."""
    players: int
    options: RuleOptions = OFFICIAL
    limits: Limits = field(default_factory=Limits)
    log_path: Path | None = None
    sandbox: dict[str, Any] = field(default_factory=dict)
    """How the bots are isolated (backend, resource limits, warnings); logged in the header."""
    entered: tuple[tuple[str, str] | None, ...] = ()
    """The name and version each seat is entered as (its bot.toml), which the log, pages
    and terminals show: a bot's hello could otherwise name it anything, another entrant
    or a verdict on one (found by review). A seat not listed (a bot started by hand) is
    shown as its hello says."""


@dataclass(frozen=True)
class InProcessSeat:
    """A seat played by an in-process policy (for ``arena check`` and tests)."""

    policy: Policy
    name: str
    version: str = "built-in"


Seat = SeatLauncher | InProcessSeat | None


@dataclass
class SeatReport:
    seat: int
    name: str = ""
    version: str = ""
    connected: bool = False
    strikes: int = 0
    disqualified: bool = False
    faults: list[Fault] = field(default_factory=list)
    decisions: int = 0
    think_seconds: float = 0.0
    asked: dict[str, int] = field(default_factory=dict)
    """Decision kinds this seat was asked, by name."""
    mishandled: dict[str, int] = field(default_factory=dict)
    """Decision kinds it answered late, illegally or not at all (the default was played)."""


@dataclass(frozen=True)
class MatchOutcome:
    match_id: str
    seed: int | MatchSeed
    scores: tuple[int, ...]
    places: tuple[int, ...]
    rounds: int
    round_limit_reached: bool
    seats: tuple[SeatReport, ...]
    rounds_won: tuple[int, ...]
    decisions: int
    seconds: float
    """Wall time of the whole match, bot start-up and the log's encoding included."""
    play_seconds: float
    """Wall time from match start to match end (start-up excluded)."""
    log_path: Path | None

    @property
    def disqualified(self) -> tuple[int, ...]:
        return tuple(s.seat for s in self.seats if s.disqualified)


_DISCONNECTED = object()

_KIND_NAMES = {kind: kind.name for kind in DecisionKind}
"""A decision kind's name, as the reports count it (``Enum.name`` is slow on a hot path)."""


class _Unreadable:
    """A message from a bot that is not a ``PlayRequest`` (protobuf cannot parse it: bytes
    its SDK garbled, groups nested past protobuf's depth). gRPC would end the stream on a
    parse error, as if the bot had hung up; handed on instead, it reads as a message with
    no field set, and the match strikes it as malformed, saying why."""

    __slots__ = ("reason", "size")

    def __init__(self, reason: str, size: int) -> None:
        self.reason, self.size = reason, size

    def HasField(self, _: str) -> bool:
        return False

    def ByteSize(self) -> int:
        return self.size


def _deserialize(data: bytes) -> pb.PlayRequest | _Unreadable:
    try:
        request: pb.PlayRequest = pb.PlayRequest.FromString(data)
        return request
    except DecodeError as error:
        return _Unreadable(f"not a PlayRequest: {error}", len(data))


class _Inbox:
    """Messages from one bot with their arrival time. A match reads it as its stream's
    reader hands it on (``_MatchLoop.drive``); ``get`` waits for a message (a refeed).

    Bounded: a bot is asked one thing at a time, so it has no reason to get more than a few
    messages ahead of the referee. ``admit`` refuses a message past ``INBOX_MESSAGES`` or
    ``INBOX_BYTES`` unread, and the seat is then cut off for flooding: the referee's memory
    does not depend on what a bot sends."""

    def __init__(self) -> None:
        self.backlog: collections.deque[tuple[float, Any, int]] = collections.deque()
        self.waiter: asyncio.Future[None] | None = None
        self.unread_bytes = 0

    def admit(self, arrived: float, message: Any, size: int) -> bool:
        """Queue a bot's message of ``size`` bytes; False (and nothing queued) when it
        would take the inbox past its budget."""
        if (len(self.backlog) >= INBOX_MESSAGES
                or self.unread_bytes + size > INBOX_BYTES):
            return False
        self.unread_bytes += size
        self.put_nowait((arrived, message, size))
        return True

    def put_nowait(self, item: tuple[float, Any, int]) -> None:
        self.backlog.append(item)
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def empty(self) -> bool:
        return not self.backlog

    def _take(self) -> tuple[float, Any]:
        arrived, message, size = self.backlog.popleft()
        self.unread_bytes -= size
        return arrived, message

    def get_nowait(self) -> tuple[float, Any]:
        return self._take()

    async def get(self, timeout: float) -> tuple[float, Any]:
        """The next message; TimeoutError after ``timeout`` seconds."""
        if not self.backlog:
            loop = asyncio.get_running_loop()
            waiter = self.waiter = loop.create_future()
            timer = loop.call_later(timeout, _expire, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self.waiter = None
            if not self.backlog:
                raise TimeoutError
        return self._take()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class _Connection:
    """One bot's stream, seen from the match loop."""

    def __init__(self, context: grpc.aio.ServicerContext, hello: pb.Hello,
                 write_seconds: float = 60.0) -> None:
        self.context = context
        self.hello = hello
        self.write_seconds = write_seconds
        """The longest a write to the bot may wait for it to read (``send``)."""
        self.inbox = _Inbox()
        self.relay: SeatRelay | None = None
        """The seat's socket relay (none on a shared ``--listen`` address)."""
        self.finished = asyncio.Event()
        self.closed = asyncio.Event()
        """Set when the bot's side of the stream has ended."""
        self.alive = True
        self.taken = 1
        """The stream's messages the match has, the hello included: each one comes from the
        seat's relay as it passes (``_picked``) or from gRPC's reading, whichever is first,
        and a copy is known by its number (the relay keeps from gRPC most of what it hands
        on: ``SeatRelay.kept``)."""

    async def write(self, message: pb.PlayResponse | bytes) -> bool:
        """Send a message (or its serialized bytes); False when the stream is gone. By the
        seat's relay once it writes for gRPC (``SeatRelay.writes_itself``), else by gRPC.
        No timeout of its own: a request's stuck write is cut off at its deadline and time
        bank (``_MatchLoop._on_timer``), for nothing per request, where ``asyncio.timeout``
        cost 5 us of a decision's path (a timer set and cancelled)."""
        if not self.alive:
            return False
        relay = self.relay
        if relay is not None:
            # A cancel while the bot's windows hold it back leaves it on its way, as gRPC
            # would: only ``give_up`` drops it (found by re-attack: a hang-up of the bot
            # whose task drove the write dropped another bot's request).
            sent = self.write_now(_serialize(message))
            if sent is not None:
                return True if sent is True else await self.sent(sent)
            relay.to_grpc += 5 + (len(message) if isinstance(message, bytes)
                                  else message.ByteSize())
        try:
            await self.context.write(message)
            return True
        except Exception:  # the stream is gone; the loop disqualifies the seat
            self.alive = False
            return False

    def write_now(self, message: bytes) -> asyncio.Future[bool] | bool | None:
        """``write`` with no await, by the seat's relay once it writes for gRPC
        (``SeatRelay.writes_itself``: no hand-off to gRPC's threads): True once the message
        is in the bot's socket, a future of it while the bot's windows hold it back, False
        when the stream is gone; None when only gRPC may write it (``write``)."""
        relay = self.relay
        if not self.alive or relay is None or not relay.writes_itself():
            return None
        sent = relay.write(message)
        if sent is False:
            self.alive = False
        return sent

    async def sent(self, sending: asyncio.Future[bool] | bool) -> bool:
        """Whether a write the relay has under way (``sending``) reached the bot's
        socket; False when the stream is gone."""
        if sending is True:
            return True
        if sending is False or not await sending:
            self.alive = False
            return False
        return True

    async def send(self, message: pb.PlayResponse | bytes) -> bool:
        """``write`` in at most ``write_seconds``; False when the stream is gone or stuck."""
        try:
            # A bot that stops reading (its HTTP/2 window shut) would hold the write, and
            # the match with it, for ever: a loss never recorded (found by review).
            async with asyncio.timeout(self.write_seconds):
                return await self.write(message)
        except TimeoutError:  # the loop disqualifies the seat
            self.give_up()
            return False

    def give_up(self) -> None:
        """The bot did not take what it was written in time: the stream counts as gone,
        and nothing held back of it is written later (after gRPC's trailers)."""
        self.alive = False
        if self.relay is not None:
            self.relay.abandon()


class _Servicer(pb_grpc.RefereeServiceServicer):
    def __init__(self, referee: _Referee, seat: int | None, folder: Path | None = None
                 ) -> None:
        self.referee = referee
        self.seat = seat
        """The seat this server listens for; None when every seat shares one address."""
        self.folder = folder
        """The seat's socket folder, removed once its bot has said hello: no one may
        connect after that (the connections made stay)."""
        self.waiting: collections.deque[asyncio.Task[Any]] = collections.deque()
        """Streams waiting for their hello (a stream that never speaks crowds out only the
        streams of its own address)."""

    def _unclaimed(self) -> bool:
        tokens = self.referee.tokens
        return bool(tokens) if self.seat is None else self.seat in tokens.values()

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        referee = self.referee
        if not self._unclaimed():  # nothing is left to claim here
            await context.abort(grpc.StatusCode.PERMISSION_DENIED,
                                "unknown or used token: the seat has connected")
            return
        waiting = self.waiting
        me = asyncio.current_task()
        if len(waiting) >= PENDING_HELLOS:
            waiting.popleft().cancel()  # the stream silent the longest
        if me is not None:
            waiting.append(me)
        try:
            first = await asyncio.wait_for(context.read(), referee.spec.limits.hello_timeout)
        except (TimeoutError, grpc.RpcError, asyncio.CancelledError):
            return
        finally:
            with contextlib.suppress(ValueError):
                waiting.remove(me)  # type: ignore[arg-type]
        if first is not grpc.aio.EOF:
            first = _deserialize(first)
        if first is grpc.aio.EOF or not first.HasField("hello"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be hello")
            return
        seat = referee.tokens.get(first.hello.token)
        if seat is not None and self.seat in (None, seat):
            del referee.tokens[first.hello.token]  # one-time: a reuse finds nothing
        else:
            seat = None  # unknown, used, or another seat's (which it keeps)
        if seat is None:
            referee.refused += 1
            if len(referee.refused_tokens) < REFUSED_KEPT:
                referee.refused_tokens.append(first.hello.token[:8])
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown or used token")
            return
        refusal = referee.refuse_unsupported(seat, first.hello)
        if refusal:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, refusal)
            return
        limits = referee.spec.limits
        connection = _Connection(context, first.hello,
                                 limits.decision_deadline + limits.time_bank)
        connection.relay = referee.relays.get(seat)
        referee.attach(seat, connection)
        if connection.relay is not None:
            # Not on a call with a deadline (grpc-timeout): gRPC cancels it at the deadline
            # and drops what it has not read, which the relay may have picked out already
            # (found by re-attack: an answer sent at the deadline was applied).
            connection.relay.seated(
                None if context.time_remaining() is not None else
                functools.partial(_picked, referee, seat, connection),
                functools.partial(_handed_on, referee, seat))
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        inbox = connection.inbox
        relay = connection.relay
        flooded = False
        read = 1  # the hello
        try:
            while True:
                data = await context.read()
                if data is grpc.aio.EOF:
                    break
                read += 1
                # Its number on the stream: the relay keeps from gRPC messages it handed on.
                number = read + relay.kept if relay is not None else read
                if number <= connection.taken:
                    continue  # the relay handed it on already: not parsed again
                connection.taken = number
                message = _deserialize(data)
                if not inbox.admit(time.perf_counter(), message, message.ByteSize()):
                    flooded = True
                    break
                driver = referee.driver
                if driver is not None and driver.waiting_on == seat:
                    # The answer the match waits for: play on in this task, up to the next
                    # request sent (no hand-off to another task on a decision's path).
                    await driver.drive(me)
        except (grpc.RpcError, asyncio.CancelledError, Exception):
            pass
        finally:
            connection.alive = False
            connection.closed.set()
            if flooded:
                referee.floods.append((seat, INBOX_FLOOD))
            inbox.put_nowait((time.perf_counter(), _DISCONNECTED, 0))
            driver = referee.driver
            if driver is not None and driver.waiting_on == seat:
                driver.drive_soon()
        if flooded:
            with contextlib.suppress(Exception):
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"more than {INBOX_MESSAGES} messages or {INBOX_BYTES} bytes sent ahead "
                    "of the referee")
        # Keep the stream open until the match has sent its last message.
        with contextlib.suppress(asyncio.CancelledError):
            await connection.finished.wait()


def _picked(referee: _Referee, seat: int, connection: _Connection, number: int,
            data: bytes) -> bool:
    """The seat's relay saw the bot send its stream's message ``number``: the match takes
    it now if it is the next one (gRPC's reading brings what the relay does not pick out,
    and the copies of what it passes on); whether it took it. Playing on waits for the
    read's end (``_handed_on``). A message that would overflow the inbox is recorded as a
    flood and left to gRPC's reading, which cuts the bot off."""
    if number != connection.taken + 1 or not connection.alive:
        return False
    message = _deserialize(data)
    if not connection.inbox.admit(time.perf_counter(), message, message.ByteSize()):
        # Recorded now, before the match can ask this seat and strike what it holds as out
        # of turn (found in CI: gRPC's reading, no longer fed the messages before, came
        # later); gRPC's reading of this one cuts the bot off.
        referee.floods.append((seat, INBOX_FLOOD))
        return False
    connection.taken = number
    return True


def _handed_on(referee: _Referee, seat: int) -> None:
    """The seat's relay handed on what it read, the match took some: play on if it waits
    for that seat (at once: ``drive_now``). Not at each message: a second one in the same
    read, sent before its request could have been read, is then struck as out of turn
    rather than taken as that request's answer (found by re-attack)."""
    driver = referee.driver
    if driver is not None and driver.waiting_on == seat:
        driver.drive_now()


class _Referee:
    def __init__(self, spec: MatchSpec) -> None:
        self.spec = spec
        self.tokens: dict[str, int] = {}
        self.connections: dict[int, _Connection] = {}
        self.refused = 0
        self.refused_tokens: list[str] = []
        """The first few refused tokens' first characters (for the log)."""
        self.floods: list[tuple[int, str]] = []
        """Seats cut off for flooding, with why, not yet recorded as faults by the match
        loop."""
        self.relays: dict[int, SeatRelay] = {}
        """Each seat's socket relay, by seat (``arena.referee.relay``)."""
        self.in_process: dict[int, Policy] = {}
        self.processes: dict[int, BotProcess] = {}
        self.all_connected = asyncio.Event()
        self.reports = [SeatReport(seat) for seat in range(spec.players)]
        self.unsupported: dict[int, str] = {}
        """Seats refused for not supporting the match's variants (§21-§32), with why."""
        self.driver: _MatchLoop | None = None
        """The match in play: a stream reader hands it the answer it waits for."""

    def attach(self, seat: int, connection: _Connection) -> None:
        self.connections[seat] = connection
        report = self.reports[seat]
        report.connected = True
        # What the bot says it is, shown in logs, terminals and to the other seats: its
        # control characters as escapes.
        self._name(seat, connection.hello)
        self._check_all_in()

    def _name(self, seat: int, hello: pb.Hello) -> None:
        report = self.reports[seat]
        entered = self.spec.entered[seat] if seat < len(self.spec.entered) else None
        if entered is not None:
            report.name, report.version = entered
        else:
            report.name = visible(hello.bot_name[:100])
            report.version = visible(hello.bot_version[:100])

    def _check_all_in(self) -> None:
        seated = len(self.connections) + len(self.in_process) + len(self.unsupported)
        if seated == self.spec.players:
            self.all_connected.set()

    def refuse_unsupported(self, seat: int, hello: pb.Hello) -> str:
        """Refuse a bot whose hello does not declare every variant of the match: the reason,
        or "" when it may sit."""
        declared = variants_from_wire(hello.variants)
        missing = missing_variants(self.spec.options, declared)
        if not missing:
            return ""
        self._name(seat, hello)
        # No name in the reason: pages show it beside the seat's name, as the referee's word.
        self.unsupported[seat] = (
            f"the bot does not support the variant(s) {', '.join(missing)} of this match "
            f"(its hello declares {', '.join(declared) or 'none'}); not seated")
        self._check_all_in()
        return self.unsupported[seat]


async def run_match(
    spec: MatchSpec,
    launchers: list[Seat],
    *,
    address: str | None = None,
    on_progress: Any = None,
    announce: Any = None,
) -> MatchOutcome:
    """Play a match. ``launchers[seat]`` starts that seat's bot; an InProcessSeat plays
    in-process; None means the bot is started by hand with the address and token printed
    (``arena play --listen``): ``announce(seat, address, token)`` is called for it, or the
    address and token are printed."""
    if len(launchers) != spec.players:
        raise ValueError("one launcher per seat")
    referee = _Referee(spec)
    listening = await _serve(referee, address, [
        seat for seat, launcher in enumerate(launchers)
        if not isinstance(launcher, InProcessSeat)])
    processes: list[BotProcess] = []
    tokens = [secrets.token_hex(16) for _ in range(spec.players)]
    referee.tokens = {token: seat for seat, token in enumerate(tokens)}
    log = MatchLogWriter(spec.log_path) if spec.log_path else None
    started = time.perf_counter()
    finished = False
    try:
        for seat, launcher in enumerate(launchers):
            if isinstance(launcher, InProcessSeat):
                report = referee.reports[seat]
                report.connected, report.name, report.version = (
                    True, launcher.name, launcher.version)
                referee.in_process[seat] = launcher.policy
                if len(referee.connections) + len(referee.in_process) == spec.players:
                    referee.all_connected.set()
                continue
            listen = listening.addresses[seat]
            if launcher is None:
                if announce is not None:
                    announce(seat, listen, tokens[seat])
                else:
                    print(f"seat {seat}: start your bot with ARENA_ADDRESS={listen} "
                          f"ARENA_TOKEN={tokens[seat]}", flush=True)
            else:
                referee.processes[seat] = launcher(
                    {"ARENA_ADDRESS": listen, "ARENA_TOKEN": tokens[seat],
                     "ARENA_SEAT": str(seat)}, listening.folders[seat])
                processes.append(referee.processes[seat])
        loop = _MatchLoop(spec, referee, log)
        outcome = await loop.run(started, on_progress)
        finished = True
        if log:
            log.close()
        return outcome
    except BaseException:
        if log:
            log.abandon()
        raise
    finally:
        await _close(referee, listening, processes, finished)


@dataclass(slots=True)
class _Listening:
    """Where a match's bots connect."""

    folder: Path
    """The match's socket folder (mode 0711: it cannot be listed)."""
    addresses: dict[int, str]
    """Each seat's address."""
    folders: dict[int, Path]
    """Each seat's socket folder, the only one its sandbox is shown."""
    servers: list[grpc.aio.Server]
    relays: list[SeatRelay] = field(default_factory=list)


async def _serve(referee: _Referee, address: str | None, seats: list[int]) -> _Listening:
    """The match's gRPC servers, started. Each seat has a server of its own, on a socket in
    a folder of its own under an unguessable name: a bot reaches no other seat's socket,
    so it can neither crowd out another bot's connection before its hello (a stream that
    never speaks evicts the oldest waiting one of its server) nor claim its seat. With
    ``address`` (``arena play --listen``, bots started by hand) every seat shares it."""
    raise_descriptor_limit()  # a bot's connections must not use up the others' descriptors
    # Named after its owner (pid and start time): a start-up sweep removes it if we die.
    folder = Path(tempfile.mkdtemp(prefix=f"arena-match-{owner_tag()}-"))
    listening = _Listening(folder, {}, {}, [])
    try:
        os.chmod(folder, 0o711)  # bots may run under other uids: they may pass, not list
        if address is not None:
            # Bots started by hand share the address, with no relay: what a seat's own
            # socket stops (a second connection, a flood) is then the starter's business.
            listening.servers.append(await _server(referee, None, address))
            listening.addresses = dict.fromkeys(seats, address)
            listening.folders = dict.fromkeys(seats, folder)
            return listening
        # The gRPC servers listen where no bot can reach: a bot reaches its seat's socket,
        # which the seat's relay holds (arena.referee.relay: what a bot sends is counted).
        private = folder / f"referee-{secrets.token_hex(8)}"
        private.mkdir(mode=0o700)
        loop = asyncio.get_running_loop()
        for seat in seats:
            seat_folder = folder / f"seat{seat}-{secrets.token_hex(8)}"
            seat_folder.mkdir(mode=0o755)
            upstream = f"unix:{private / f'seat{seat}.sock'}"
            listening.servers.append(await _server(referee, seat, upstream, seat_folder))
            socket = seat_folder / "referee.sock"
            relay = SeatRelay(loop, socket, upstream, functools.partial(_flooded, referee, seat),
                              MAX_MESSAGE_BYTES)
            listening.relays.append(relay)
            referee.relays[seat] = relay
            os.chmod(socket, 0o777)  # bots may run under other uids
            listening.addresses[seat] = f"unix:{socket}"
            listening.folders[seat] = seat_folder
    except BaseException:
        for relay in listening.relays:
            relay.close()
        for server in listening.servers:
            await server.stop(grace=None)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return listening


def _flooded(referee: _Referee, seat: int, received: int) -> None:
    """The seat's relay cut its bot off for sending more than its budget."""
    referee.floods.append((seat, (
        f"sent {received} bytes, more than its budget of {BUDGET_BYTES} bytes ahead of the "
        f"referee (each HTTP/2 frame counting {FRAME_COST} more, each request adding "
        f"{GRANT_BYTES}); its connection was cut off")))
    # Its stream breaks as gRPC finds the connection closed: the match then records this.


async def _server(referee: _Referee, seat: int | None, address: str,
                  folder: Path | None = None) -> grpc.aio.Server:
    """A server for ``seat``'s bot (every seat's when None), started on ``address`` (in
    ``folder``, the seat's own). A seat's relay is its only client: one connection at a
    time is the relay's rule (``arena.referee.relay``), not a cap here, which would refuse
    a reconnecting bot while gRPC still held the connection it left."""
    server = grpc.aio.server(options=[
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_metadata_size", MAX_METADATA_BYTES),
        ("grpc.max_concurrent_streams", STREAMS_PER_CONNECTION),
        # Connections that hold no stream are closed: they cost memory and serve nothing.
        ("grpc.max_connection_idle_ms", int(referee.spec.limits.hello_timeout * 1000)),
        ("grpc.http2.bdp_probe", 0),  # keep flow-control windows at their small default
        ("grpc.so_reuseport", 0),
        # A seat's server does not strike a bot's PINGs: its relay's budget bounds them, and
        # once the relay writes the referee's messages gRPC writes no more, which is what
        # forgives them (found by attack: three PINGs cut in two over a match, passed on to
        # gRPC, ended a legal bot's connection). A shared --listen address keeps them.
        *([("grpc.http2.max_ping_strikes", 0)] if seat is not None else []),
    ])
    # The generated registration, with a serializer that also passes bytes through: a
    # decision request is serialized once, by the match loop, and the same bytes are sent
    # and logged (the seat's view "exactly as on the wire"). What a bot sends comes as
    # bytes, parsed by ``Play`` unless the relay already handed that message on.
    handlers = {"Play": grpc.stream_stream_rpc_method_handler(
        _Servicer(referee, seat, folder).Play, response_serializer=_serialize)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "uno_arena.v1.RefereeService", handlers),))
    server.add_registered_method_handlers("uno_arena.v1.RefereeService", handlers)
    server.add_insecure_port(address)
    await server.start()
    return server


def _serialize(message: pb.PlayResponse | bytes) -> bytes:
    return message if type(message) is bytes else message.SerializeToString()  # type: ignore[union-attr]


async def _close(referee: _Referee, listening: _Listening, processes: list[BotProcess],
                 finished: bool) -> None:
    """End a match's (or a refeed's) bots, streams and server; remove its socket folder."""
    try:
        for connection in referee.connections.values():
            connection.finished.set()
        # Let well-behaved bots read the match end and hang up before they are killed
        # (not when the match was cancelled or broke: nobody told them it ended).
        closing = [asyncio.ensure_future(c.closed.wait())
                   for c in referee.connections.values() if not c.closed.is_set()]
        if closing and finished:
            _, pending = await asyncio.wait(closing, timeout=1.0)
            for waiter in pending:
                waiter.cancel()
        for waiter in closing:
            waiter.cancel()
        for process in processes:
            process.kill()
        # Streams of killed bots break now: let their handlers return before the server
        # stops, rather than cancelling them mid-read (which grpc reports as an error).
        closing = [asyncio.ensure_future(c.closed.wait())
                   for c in referee.connections.values() if not c.closed.is_set()]
        if closing:
            _, pending = await asyncio.wait(closing, timeout=1.0)
            for waiter in pending:
                waiter.cancel()
        await asyncio.sleep(0)
        await asyncio.gather(*(server.stop(grace=0.5) for server in listening.servers))
    finally:
        for relay in listening.relays:
            relay.close()
        # Also when cancelled during the clean-up above (a worker stopped just as its
        # match ended): no bot, no socket folder outlives the match.
        for process in processes:
            process.kill()
        shutil.rmtree(listening.folder, ignore_errors=True)


_PUBLIC_REASON = {kind: kind.name.lower().replace("_", " ") for kind in FaultKind}
"""What the other seats are told of a fault: its kind, in words."""


@dataclass(slots=True, eq=False)
class _Pending:
    """A decision asked of a bot, from its request until it is answered or expires."""

    seat: int
    request_id: int
    observation: Any
    legal: list[Action]
    connection: _Connection
    request: bytes
    """The serialized DecisionRequest."""
    message: bytes
    """What is sent: the seat's new events, then the request."""
    sent: float = 0.0
    give_up: float = 0.0
    """When it expires (``time.perf_counter``, as ``sent``)."""
    asked: bytes | None = None
    """The request, once sent (for the log)."""
    answer: pb.Decision | None = None
    """The bot's last decision message for it (for the log)."""
    expired: bool = False
    broken: bool = False
    """The stream broke as the request was sent."""
    stalled: bool = False
    """The request's write was still going at its deadline and time bank (cut off)."""


class _MatchLoop:
    def __init__(self, spec: MatchSpec, referee: _Referee, log: MatchLogWriter | None
                 ) -> None:
        self.spec = spec
        self.referee = referee
        self.log = log
        self.processes = referee.processes
        self.reports = referee.reports
        self.chance = (spec.seed if isinstance(spec.seed, MatchSeed)
                       else MatchSeed.public(spec.seed))
        self.match = Match(spec.players, self.chance.deck_rng(), spec.options)
        # Everything a bot is told, in order: engine events and faults.
        self.timeline: list[ev.Event | Fault] = []
        self.synced = 0
        self.cursors = [0] * spec.players
        """Per seat, how much of the timeline is encoded for it (``_encode_events``)."""
        self.encoded: list[list[bytes]] = [[] for _ in range(spec.players)]
        """Per seat, the encoded events not sent yet."""
        self.time_bank = [spec.limits.time_bank] * spec.players
        self.autopilots = [GreedyPolicy(self.chance.seat_seed(seat))
                           for seat in range(spec.players)]
        self.request_ids = [0] * spec.players
        """Each seat's own count of requests: one count for all told a bot how many
        decisions the others made that no event shows (a playable drawn card kept, a
        jump-in passed; found by review)."""
        self.decisions = 0
        self.pending: _Pending | None = None
        """The decision a bot is asked and has not answered."""
        self.busy = False
        """A task is playing the match on (see ``drive``)."""
        self.driving: asyncio.Task[Any] | None = None
        """The task playing the match on, or the last one."""
        self.writing: _Pending | None = None
        """The decision whose request ``driving`` is writing."""
        self.started = True
        """Whether ``driving`` has begun (a task ``drive_now`` handed a write to may not
        have yet)."""
        self.done: asyncio.Future[None] | None = None
        self.drivers: set[asyncio.Task[None]] = set()
        self.timer: asyncio.TimerHandle | None = None
        """Set for the earliest time a pending decision may expire, or earlier."""
        self.timer_due = 0.0
        """The time ``timer`` is set for (``time.perf_counter``)."""
        self.on_progress: Any = None
        self.loop: asyncio.AbstractEventLoop
        """The event loop the match runs on (set by ``run``)."""
        self.log_error: Exception | None = None
        """An error of the log's encoding or writing (a full disk), raised by the loop."""
        # Requests that timed out: a late answer to one is dropped, not struck twice.
        self.expired: list[set[int]] = [set() for _ in range(spec.players)]
        # The bots' processes that can be paused off turn (a sandbox's), looked up once.
        self.pausers = {seat: pause for seat, process in self.processes.items()
                        if (pause := getattr(process, "pause", None)) is not None}
        self.resumers = {seat: resume for seat, process in self.processes.items()
                         if (resume := getattr(process, "resume", None)) is not None}

    # -- bookkeeping ---------------------------------------------------------------------

    def _flush_log(self) -> None:
        """Encode the queued log lines: an event-loop callback, so an error is kept for the
        match loop to raise rather than lost in the loop's exception handler."""
        if self.log is not None and self.log_error is None:
            try:
                self.log.flush()
            except Exception as error:
                self.log_error = error

    def _sync_events(self) -> None:
        events = self.match.events
        new = events[self.synced:]
        self.synced = len(events)
        self.timeline.extend(new)
        if self.log:
            self.log.events(new)

    def _fault(self, seat: int, kind: FaultKind, reason: str) -> None:
        report = self.reports[seat]
        if report.disqualified:
            return
        if kind is FaultKind.ILLEGAL_ACTION and self.spec.options.mistake_penalty and (
            self.match.penalise(seat)
        ):  # §32: two cards instead of a strike (then the default action, as for a strike)
            self._record_fault(report, Fault(seat, kind, reason + "; draws 2 (§32)",
                                             report.strikes, False, penalised=True))
            if self.log:
                self.log.write({"type": "penalty", "seat": seat})
            return
        disqualify = kind in DISQUALIFYING
        if not disqualify:
            report.strikes += 1
        fault = Fault(seat, kind, reason, report.strikes, disqualify)
        self._record_fault(report, fault)
        if not disqualify and report.strikes >= self.spec.limits.strike_limit:
            self._record_fault(report, Fault(
                seat, FaultKind.STRIKE_LIMIT,
                f"reached the strike limit of {self.spec.limits.strike_limit}",
                report.strikes, True))

    def _record_floods(self) -> None:
        floods = self.referee.floods
        while floods:
            seat, reason = floods.pop(0)
            self._fault(seat, FaultKind.FLOODED, reason)

    def _record_fault(self, report: SeatReport, fault: Fault) -> None:
        report.faults.append(fault)
        report.disqualified = report.disqualified or fault.disqualified
        self.timeline.append(fault)
        if self.log:
            self.log.write({"type": "fault", **fault.to_record()})

    def _wire_events(self, seat: int) -> bytes:
        """The events the seat has not been sent, as ``PlayResponse.events`` entries (a
        response's bytes are its events' then its payload's: protobuf writes fields in
        number order)."""
        self._encode_events(seat)
        out, self.encoded[seat] = self.encoded[seat], []
        return b"".join(out)

    def _encode_events(self, seat: int) -> None:
        """Encode the events the seat has not been sent (``_wire_events`` sends them). Done
        for the seats not asked once a request is sent, while its bot thinks: the next
        request to them then encodes only what happened since."""
        timeline, start = self.timeline, self.cursors[seat]
        self.cursors[seat] = len(timeline)
        out = self.encoded[seat]
        for item in timeline[start:]:
            if isinstance(item, Fault):
                # The other seats read a fixed text per kind: the reason quotes what the bot
                # sent (a request id, an index), which carried 64 bits a strike to a
                # partner (found by review); the seat itself and the log get it whole.
                out.append(fault_entry(pb.Fault(
                    seat=item.seat, kind=int(item.kind),  # type: ignore[arg-type]
                    reason=item.reason if item.seat == seat else _PUBLIC_REASON[item.kind],
                    strikes=item.strikes, disqualified=item.disqualified,
                    penalised=item.penalised)))
                continue
            out.append(event_entry(ev.seen_by(item, seat)))  # cached: encoded once

    # -- the match -----------------------------------------------------------------------

    async def run(self, started: float, on_progress: Any) -> MatchOutcome:
        spec, referee = self.spec, self.referee
        self.loop = asyncio.get_running_loop()
        if self.log:
            self.log.write({
                "type": "header", "format": LOG_FORMAT, "match_id": spec.match_id,
                **self.chance.to_record(), "players": spec.players,
                "protocol_version": int(PROTOCOL_VERSION),
                "rules": spec.options.to_dict(), "limits": spec.limits.to_record(),
                "sandbox": spec.sandbox,
            })
        await self._wait_for_hellos()
        self._record_floods()
        if self.log:
            self.log.write({"type": "seats", "seats": [
                {"seat": r.seat, "name": r.name, "version": r.version, "connected": r.connected}
                for r in self.reports]})
        players = [pb.Player(seat=r.seat, name=r.name, version=r.version)
                   for r in self.reports]
        self._sync_events()
        for seat, connection in referee.connections.items():
            start = pb.MatchStart(
                match_id=spec.match_id, seat=seat, players=players,
                rules=rules_message(spec.options),
                limits=pb.Limits(
                    decision_deadline_ms=int(spec.limits.decision_deadline * 1000),
                    time_bank_ms=int(spec.limits.time_bank * 1000),
                    strike_limit=spec.limits.strike_limit),
                seed=self.chance.seat_seed(seat), protocol_version=PROTOCOL_VERSION)
            if not await connection.send(pb.PlayResponse(match_start=start)):
                self._record_floods()  # why, if it flooded (found by re-attack)
                self._fault(seat, FaultKind.DISCONNECTED, "stream closed before match start")
        self._off_turn(self.processes)
        match = self.match
        play_started = time.perf_counter()
        self.on_progress = on_progress
        self.done = self.loop.create_future()
        referee.driver = self
        try:
            # Stream readers play the match on as answers arrive (``drive``); this task
            # waits for its end (cancelling it cancels ``done``, which stops them).
            self.drive_soon()
            await self.done
        finally:
            referee.driver = None
            if self.timer is not None:
                self.timer.cancel()
        if self.log_error is not None:
            raise self.log_error
        self._record_floods()
        final_places = match.standing([r.seat for r in self.reports if r.disqualified])
        for seat in self.processes:
            self._on_turn(seat)  # every bot reads the match's end
        await self._finish(final_places)
        play_seconds = time.perf_counter() - play_started
        if self.log:
            self.log.flush()  # the lines held while the bots played (see MatchLogWriter)
        outcome = MatchOutcome(
            spec.match_id, spec.seed, tuple(match.scores), final_places, match.rounds_played,
            match.round_limit_reached, tuple(self.reports), self._rounds_won(), self.decisions,
            time.perf_counter() - started, play_seconds, spec.log_path)
        if self.log:
            self.log.write({"type": "result", "scores": list(outcome.scores),
                            "places": list(outcome.places),
                            "disqualified": list(outcome.disqualified),
                            "rounds": outcome.rounds,
                            "round_limit_reached": outcome.round_limit_reached,
                            "decisions": outcome.decisions})
        return outcome

    def _on_turn(self, seat: int) -> None:
        """Let the seat's bot run (see ``_off_turn``)."""
        resume = self.resumers.get(seat)
        if resume is not None:
            resume()

    def _off_turn(self, seats: Any) -> None:
        """Only the seat on turn runs: a sandbox that can (``SandboxProcess.pause``) freezes
        a bot off turn, so it can neither take CPU from the seat thinking nor watch it. The
        pause is made once the next request is on its way (``call_soon``: when the loop
        next waits), off the path of the next decision."""
        for seat in seats:
            pause = self.pausers.get(seat)
            if pause is not None:
                self.loop.call_soon(self._pause_unless_on_turn, seat, pause)

    def _pause_unless_on_turn(self, seat: int, pause: Any) -> None:
        if not self.match.is_over and self.match.current_seat != seat:
            pause()

    def _rounds_won(self) -> tuple[int, ...]:
        won = [0] * self.spec.players
        for event in self.match.events:
            if type(event) is ev.RoundEnded and event.winner >= 0:
                won[event.winner] += 1
        return tuple(won)

    async def _wait_for_hellos(self) -> None:
        referee = self.referee
        deadline = time.perf_counter() + self.spec.limits.hello_timeout
        while not referee.all_connected.is_set():
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                break
            # Stop waiting early when every missing bot has already exited (or was cut off).
            missing = [s for s in range(self.spec.players)
                       if s not in referee.connections and s not in referee.in_process]
            flooded = {seat for seat, _ in referee.floods}
            if all(s in flooded or (s in self.processes and self.processes[s].poll() is not None)
                   for s in missing):
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(referee.all_connected.wait(), min(remaining, 0.05))
        self._record_floods()  # a seat cut off before its hello: that is its fault
        for seat in range(self.spec.players):
            if seat in referee.unsupported:
                self._fault(seat, FaultKind.UNSUPPORTED_VARIANTS, referee.unsupported[seat])
            elif seat not in referee.connections and seat not in referee.in_process:
                exited = seat in self.processes and self.processes[seat].poll() is not None
                reason = ("the bot exited before saying hello" if exited else
                          f"no valid hello within {self.spec.limits.hello_timeout:g} s")
                if referee.refused:
                    reason += (f"; {referee.refused} connection(s) refused for an unknown"
                               " or used token")
                self._fault(seat, FaultKind.NO_HELLO, reason)

    def _strike_stale(self, seat: int, connection: _Connection) -> bool:
        """Strike every answer that arrived while no request was pending (out of turn)."""
        inbox = connection.inbox
        while not inbox.empty():
            _, message = inbox.get_nowait()
            if message is _DISCONNECTED:
                self._record_floods()  # a seat cut off for flooding: that is its fault
                self._fault(seat, FaultKind.DISCONNECTED, "the bot closed its stream")
                return False
            if self._is_late_answer(seat, message):
                continue
            if type(message) is _Unreadable:
                self._fault(seat, FaultKind.MALFORMED, message.reason)
                continue
            self._fault(seat, FaultKind.OUT_OF_TURN, "a message arrived while no decision "
                        "was asked of this seat")
        return not self.reports[seat].disqualified

    # -- playing on -----------------------------------------------------------------------

    @property
    def waiting_on(self) -> int:
        """The seat whose answer the match waits for; -1 when none."""
        pending = self.pending
        return -1 if pending is None else pending.seat

    def drive_soon(self, first: _Pending | None = None,
                   sending: asyncio.Future[bool] | None = None) -> None:
        """Play on in a task of its own (at the start, after a timeout, a hang-up; or from
        ``drive_now``'s ``first`` request, whose write is under way when ``sending``: the
        task then takes over its ``busy``, so that nothing plays on meanwhile and the request
        cannot go stale, found by re-attack)."""
        if self.done is None or self.done.done():
            if first is not None:
                self.busy = False
            return
        task = self.loop.create_task(self.drive(first=first, sending=sending,
                                                owned=first is not None))
        if first is not None:
            self.writing, self.driving, self.started = first, task, False
        self.drivers.add(task)
        task.add_done_callback(self.drivers.discard)

    def drive_now(self) -> None:
        """Play on at once, in the turn of the loop the answer came in (the seat's relay
        handed on a read's messages, ``_handed_on``), while each request goes straight into its
        bot's socket (the relay's writing: nothing to wait for); the rest in a task of its
        own from the request that must wait (a task less a decision, and a turn of the
        loop)."""
        done = self.done
        if self.busy or done is None or done.done():
            return
        self.busy = True
        pending: _Pending | None = None
        sent: asyncio.Future[bool] | bool = False
        try:
            while not done.done() and (pending := self._advance()) is not None:
                written = pending.connection.write_now(pending.message)  # (bytes: _request)
                if written is None:
                    break  # gRPC writes it, in a task
                if written is not True and written is not False:
                    sent = written
                    break  # the bot's windows hold it back: a task waits for it
                self._written(pending, written)
                pending = None
        except Exception as error:
            pending = None
            if not done.done():
                done.set_exception(error)
        if pending is None:
            self.busy = False
        else:  # still busy: the task takes it over
            self.drive_soon(pending, None if isinstance(sent, bool) else sent)

    async def drive(self, task: asyncio.Task[Any] | None = None,
                    first: _Pending | None = None,
                    sending: asyncio.Future[bool] | None = None, owned: bool = False) -> None:
        """Play on until a bot must answer, sending each request on the way; an error ends
        the match (``done``). Run by the stream reader that received the answer from gRPC,
        or in a task of its own (``drive_soon``, ``drive_now``; from ``first``, its write
        under way when ``sending``); one at a time (``busy``): what arrives meanwhile
        waits in the inboxes, and the timer only marks its decision expired, both seen by
        ``_advance`` once the write in progress is done."""
        done = self.done
        if (self.busy and not owned) or done is None:
            return
        self.busy, self.started = True, True
        # The task running this (the stream reader's, passed in). Asking asyncio for the
        # running loop costs a getpid system call (3% of the referee's thread in a match,
        # profiled): it is given the loop.
        self.driving = task or asyncio.current_task(self.loop)
        pending = first
        try:
            while not done.done() and (
                    pending is not None or (pending := self._advance()) is not None):
                self.writing = pending
                try:
                    if sending is not None:  # (the first request's only)
                        waiting, sending = sending, None
                        sent = await pending.connection.sent(waiting)
                    else:
                        sent = await pending.connection.write(pending.message)
                except asyncio.CancelledError:
                    # ``_on_timer`` cancels a write still going at the request's deadline
                    # and time bank (its bot stopped reading); any other cancel goes on up.
                    if not pending.stalled or self.driving.uncancel():  # type: ignore[union-attr]
                        raise
                    pending.connection.give_up()
                    sent = False
                self._written(pending, sent)
                pending = None
        except asyncio.CancelledError:
            # This task's own stream was cancelled (its bot hung up) while it drove. A write
            # is handed to gRPC (or the relay) before its first await, so the request is on
            # its way: play goes on in another task.
            if pending is not None:
                pending.asked = pending.request
            self.drive_soon()  # its task starts after this one's ``finally``
            raise
        except Exception as error:
            if not done.done():
                done.set_exception(error)
        finally:
            self.busy = False
            self.writing = None  # (no await between a write and the next one's start)

    def _written(self, pending: _Pending, sent: bool) -> None:
        """``pending``'s request was sent (the others' events since it encoded for them),
        or its stream broke (the fault recorded)."""
        if sent:
            pending.asked = pending.request
            for seat in self.referee.connections:
                if seat != pending.seat and not self.reports[seat].disqualified:
                    self._encode_events(seat)
            return
        if self.referee.floods:  # why its stream broke, if it flooded
            self._record_floods()
        self._fault(pending.seat, FaultKind.DISCONNECTED,
                    "did not read its request within the deadline and time bank"
                    if pending.stalled else "the stream broke")
        pending.broken = True

    def _advance(self) -> _Pending | None:
        """Play every decision that needs no bot (in-process seats, the autopilot) and the
        pending one once answered or expired: the next request to send (the pending
        decision), or None while the match waits for an answer or when it is over."""
        match, referee = self.match, self.referee
        while True:
            if self.log_error is not None:
                raise self.log_error
            pending = self.pending
            if pending is not None:
                answer = self._answer(pending)
                if answer is None:
                    return None
                self.pending = None
                action, latency = answer
                self._decide(pending.seat, pending.observation, action, latency,
                             pending.asked, pending.answer)
                continue
            if match.is_over:
                self.done.set_result(None)  # type: ignore[union-attr]
                return None
            if referee.floods:
                self._record_floods()
            seat = match.current_seat
            observation = match.observation(seat)
            legal = match.legal_actions()
            in_process = referee.in_process.get(seat)
            if in_process is not None:
                self._apply(seat, in_process.decide(observation, legal), "in-process")
            elif self.reports[seat].disqualified:
                self._apply(seat, self.autopilots[seat].decide(observation, legal), "autopilot")
            else:
                self._on_turn(seat)
                pending = self._request(seat, observation, legal)
                if pending is not None:
                    return pending

    def _request(self, seat: int, observation: Any, legal: list[Action]) -> _Pending | None:
        """Ask the seat's bot: the pending decision, its request built (sent by ``drive``);
        None when the seat was disqualified first (its default played)."""
        connection = self.referee.connections[seat]
        asked = self.reports[seat].asked
        kind = _KIND_NAMES[observation.decision]
        asked[kind] = asked.get(kind, 0) + 1
        if not self._strike_stale(seat, connection):
            self._decide(seat, observation, None, 0.0, None, None)
            return None
        limits = self.spec.limits
        self.request_ids[seat] += 1
        request_id = self.request_ids[seat]
        request = decision_request_bytes(
            request_id, observation, legal, int(limits.decision_deadline * 1000),
            int(self.time_bank[seat] * 1000))
        # Built here, so the logged request is the one sent.
        message = self._wire_events(seat) + request_entry(request)
        loop = self.loop
        if self.log and (self.log.held >= LOG_HELD_MOST
                         or self.log.held_bytes >= LOG_HELD_BYTES):
            # A very long match, or padded answers: encode what is held once the request is
            # on its way (the loop runs this once the send is under way).
            loop.call_soon(self._flush_log)
        pending = self.pending = _Pending(seat, request_id, observation, legal,
                                          connection, request, message)
        relay = connection.relay
        if relay is not None:
            relay.grant()
        pending.sent = now = time.perf_counter()
        pending.give_up = now + limits.decision_deadline + self.time_bank[seat]
        timer = self.timer
        # One timer for every request: a deadline is seconds, a decision a millisecond, so
        # the timer set for an earlier request usually fires first and is then moved on.
        if timer is None or self.timer_due > pending.give_up:
            if timer is not None:
                timer.cancel()
            self._set_timer(pending.give_up, now)
        return pending

    def _set_timer(self, due: float, now: float) -> None:
        self.timer_due = due
        self.timer = self.loop.call_later(due - now + TIMER_SLACK, self._on_timer)

    def _on_timer(self) -> None:
        self.timer = None
        pending = self.pending
        if pending is None or self.done is None or self.done.done():
            return
        loop = self.loop
        now = time.perf_counter()
        if now >= pending.give_up:
            pending.expired = True
            if not self.busy:
                self.drive_soon()
            elif self.writing is pending:
                # Its request is still being written: the bot stopped reading. Cut the
                # write off after what the loop has queued, so that a write that ended in
                # this same turn of the loop returns first (found by review: it was taken
                # for a stall, and the bot that had read its request was disqualified).
                loop.call_soon(self._cut_off, pending)
        else:
            self._set_timer(pending.give_up, now)

    def _cut_off(self, pending: _Pending) -> None:
        """Cancel the write of ``pending``'s request, if it is still going (``drive``); once
        the task handed it (``drive_soon``) has begun, cancelled before its first step it
        would never let ``busy`` go."""
        if self.writing is pending and not self.started:
            self.loop.call_soon(self._cut_off, pending)
            return
        if self.writing is pending and self.driving is not None:
            pending.stalled = True
            self.driving.cancel()

    def _answer(self, pending: _Pending) -> tuple[Action | None, float] | None:
        """The pending decision's outcome, from what its seat sent: (its action, or None
        for the default; the latency), or None while it may still answer."""
        seat = pending.seat
        if pending.broken:
            return None, 0.0
        report = self.reports[seat]
        limits = self.spec.limits
        inbox = pending.connection.inbox
        while not inbox.empty():
            arrived, reply = inbox.get_nowait()
            latency = arrived - pending.sent
            if reply is _DISCONNECTED:
                self._record_floods()  # a seat cut off for flooding: that is its fault
                process_note = ""
                if seat in self.processes:
                    process = self.processes[seat]
                    code = process.poll()
                    note = getattr(process, "exit_note", lambda: "")()
                    if note:
                        process_note = f" ({note})"
                    elif code is not None:
                        process_note = f" (process exited with code {code})"
                self._fault(seat, FaultKind.DISCONNECTED, "the bot closed its stream"
                            + process_note)
                return None, latency
            if not reply.HasField("decision"):
                self._fault(seat, FaultKind.MALFORMED, reply.reason if type(reply) is _Unreadable
                            else "expected a decision message")
                if report.disqualified:
                    return None, latency
                continue
            decision = reply.decision
            if self.expired[seat] and self._is_late_answer(seat, reply):
                continue
            # Kept for the log without fields the protocol does not know: a bot padding its
            # answers to the message limit would make its logs a hundred times longer.
            decision.DiscardUnknownFields()
            pending.answer = decision
            request_id = pending.request_id
            if decision.request_id != request_id:
                # An id from the future is an answer to nothing: say so, as when it arrives
                # between requests (which of the two happens is down to timing).
                never = (", but no decision was asked with that id"
                         if decision.request_id > request_id else "")
                self._fault(seat, FaultKind.OUT_OF_TURN, f"answered request "
                            f"{decision.request_id}{never}; pending is {request_id}")
                if report.disqualified:
                    return None, latency
                continue
            if latency > limits.decision_deadline:
                self.time_bank[seat] = max(
                    0.0, self.time_bank[seat] - (latency - limits.decision_deadline))
            report.decisions += 1
            report.think_seconds += latency
            return self._read_action(seat, decision, pending.legal), latency
        if pending.expired:
            self.time_bank[seat] = 0.0
            self.expired[seat].add(pending.request_id)
            self._fault(seat, FaultKind.TIMEOUT, f"no answer to request {pending.request_id} "
                        f"within the deadline and time bank")
            return None, time.perf_counter() - pending.sent
        return None

    def _decide(self, seat: int, observation: Any, action: Action | None, latency: float,
                asked: bytes | None, answer: pb.Decision | None) -> None:
        """A bot's decision is made: its action, or its default when it gave none."""
        self._off_turn([seat])
        source = "bot"
        if action is None:
            kind = _KIND_NAMES[observation.decision]
            mishandled = self.reports[seat].mishandled
            mishandled[kind] = mishandled.get(kind, 0) + 1
            action = default_action(observation)
            source = "autopilot" if self.reports[seat].disqualified else "default"
        self._apply(seat, action, source, latency, asked, answer)

    def _apply(self, seat: int, action: Action, source: str, latency: float = 0.0,
               asked: bytes | None = None, answer: pb.Decision | None = None) -> None:
        match = self.match
        match.apply(action)
        self.decisions += 1
        if self.log:
            self.log.decision(seat, self.request_ids[seat], action, source, asked, answer, latency,
                              self.time_bank[seat])
        self._sync_events()
        if self.on_progress is not None and isinstance(match.events[-1], ev.RoundEnded):
            self.on_progress(match)

    def _is_late_answer(self, seat: int, message: Any) -> bool:
        """A late answer to a request that already timed out: logged and dropped."""
        if message.HasField("decision") and message.decision.request_id in self.expired[seat]:
            self.expired[seat].discard(message.decision.request_id)
            if self.log:
                self.log.write({"type": "late_answer", "seat": seat,
                                "request": message.decision.request_id})
            return True
        return False

    def _read_action(self, seat: int, decision: pb.Decision, legal: list[Action]
                     ) -> Action | None:
        choice = decision.WhichOneof("choice")
        if choice == "action_index":
            if decision.action_index < len(legal):
                return legal[decision.action_index]
            self._fault(seat, FaultKind.ILLEGAL_ACTION,
                        f"action index {decision.action_index} out of range 0..{len(legal) - 1}")
            return None
        if choice == "action":
            try:
                action = action_from_message(decision.action)
            except ProtocolError as error:
                self._fault(seat, FaultKind.ILLEGAL_ACTION, str(error))
                return None
            if action in legal or (action < 128 and (action ^ UNO_CALL) in legal):
                return action
            self._fault(seat, FaultKind.ILLEGAL_ACTION,
                        f"{action_name(action)} is not among the legal actions")
            return None
        self._fault(seat, FaultKind.MALFORMED, "a decision with no action")
        return None

    async def _finish(self, final_places: tuple[int, ...]) -> None:
        match = self.match
        end = pb.MatchEnd(scores=match.scores, places=final_places,
                          disqualified=[r.seat for r in self.reports if r.disqualified],
                          rounds=match.rounds_played,
                          round_limit_reached=match.round_limit_reached)
        for seat, connection in self.referee.connections.items():
            if connection.alive:
                await connection.send(self._wire_events(seat)
                                      + pb.PlayResponse(match_end=end).SerializeToString())
            connection.finished.set()
