"""The referee's gRPC side: who may sit where (one-time tokens, hellos, variants) and the
``Play`` handler that seats a bot and feeds its inbox.

gRPC reads and writes every message of a seat's stream. ``Play`` reads the hello, seats the
bot on its token's seat, then hands each message it reads to the seat's inbox as bytes
parsed once; the match loop takes them from there (``arena.referee.loop``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import shutil
import time
from pathlib import Path
from typing import Any

import grpc

from arena.protocol import pb, pb_grpc
from arena.protocol.convert import variants_from_wire
from arena.referee.connection import (
    DISCONNECTED,
    INBOX_BYTES,
    INBOX_FLOOD,
    INBOX_MESSAGES,
    MAX_MESSAGE_BYTES,
    Connection,
    parse,
)
from arena.referee.relay import SeatRelay
from arena.rules.options import RuleOptions, missing_variants

MAX_METADATA_BYTES = 8 * 1024
STREAMS_PER_CONNECTION = 2
"""A bot needs one stream; HTTP/2 refuses more on the same connection."""
PENDING_HELLOS = 16
"""Streams still waiting for their hello, at most: a new one past this evicts the one that
has waited longest (a real bot says hello at once, so silent streams cannot keep it out)."""
REFUSED_KEPT = 8
"""Refused tokens remembered (for the NO_HELLO reason), at most."""


class Seating:
    """Who sits where: the seats' one-time tokens, the bots seated, and the seats refused
    or cut off, shared by the ``Play`` handlers and the match loop."""

    def __init__(self, seats: int, options: RuleOptions, hello_timeout: float) -> None:
        self.seats = seats
        """How many seats are to be filled (a re-fed decision fills one)."""
        self.options = options
        self.hello_timeout = hello_timeout
        self.tokens: dict[str, int] = {}
        """Each unclaimed token's seat: a token is removed as its bot is seated."""
        self.connections: dict[int, Connection] = {}
        self.others: set[int] = set()
        """Seats that need no connection (in-process seats)."""
        self.relays: dict[int, SeatRelay] = {}
        """Each seat's socket relay (``arena.referee.relay``)."""
        self.refused = 0
        self.refused_tokens: list[str] = []
        """The first few refused tokens' first characters (for the log)."""
        self.floods: list[tuple[int, str]] = []
        """Seats cut off for flooding, with why, not yet recorded as faults."""
        self.unsupported: dict[int, str] = {}
        """Seats refused for not supporting the match's variants (§21-§32), with why."""
        self.hellos: dict[int, pb.Hello] = {}
        """The hello of each seat that sent a valid one (seated or refused for variants)."""
        self.all_in = asyncio.Event()
        """Set once every seat is seated, in process, or refused."""

    def unclaimed(self, seat: int | None) -> bool:
        """Whether a token is left to claim at ``seat``'s address (any, when None)."""
        return bool(self.tokens) if seat is None else seat in self.tokens.values()

    def claim(self, token: str, seat: int | None) -> int | None:
        """The seat ``token`` is for (now used), if it may be claimed at ``seat``'s
        address; else None (the refusal counted)."""
        claimed = self.tokens.get(token)
        if claimed is not None and seat in (None, claimed):
            del self.tokens[token]
            return claimed
        self.refused += 1
        if len(self.refused_tokens) < REFUSED_KEPT:
            self.refused_tokens.append(token[:8])
        return None

    def refusal(self, seat: int, hello: pb.Hello) -> str:
        """Why a bot whose hello does not declare every variant of the match may not sit,
        or "" when it may."""
        self.hellos[seat] = hello
        declared = variants_from_wire(hello.variants)
        missing = missing_variants(self.options, declared)
        if not missing:
            return ""
        # No name in the reason: pages show it beside the seat's name, as the referee's word.
        self.unsupported[seat] = (
            f"the bot does not support the variant(s) {', '.join(missing)} of this match "
            f"(its hello declares {', '.join(declared) or 'none'}); not seated")
        self.check_all_in()
        return self.unsupported[seat]

    def attach(self, seat: int, connection: Connection) -> None:
        self.connections[seat] = connection
        self.hellos[seat] = connection.hello
        self.check_all_in()

    def check_all_in(self) -> None:
        if len(self.connections) + len(self.others) + len(self.unsupported) >= self.seats:
            self.all_in.set()

    def flooded(self, seat: int, reason: str) -> None:
        self.floods.append((seat, reason))


class PlayServicer(pb_grpc.RefereeServiceServicer):
    """``Play`` for one seat's server (every seat's when ``seat`` is None)."""

    def __init__(self, seating: Seating, seat: int | None, folder: Path | None = None
                 ) -> None:
        self.seating = seating
        self.seat = seat
        self.folder = folder
        """The seat's socket folder, removed once its bot has said hello: no one may
        connect after that (the connection made stays)."""
        self.waiting: collections.deque[asyncio.Task[Any]] = collections.deque()
        """Streams waiting for their hello (a silent stream crowds out only the streams of
        its own address)."""

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        seating = self.seating
        if not seating.unclaimed(self.seat):
            await context.abort(grpc.StatusCode.PERMISSION_DENIED,
                                "unknown or used token: the seat has connected")
            return
        connection = await self._seat(context)
        if connection is None:
            return
        seat, inbox = connection.seat, connection.inbox
        flooded = False
        try:
            while True:
                data = await context.read()
                if data is grpc.aio.EOF:
                    break
                message = parse(data)
                if not inbox.admit(time.perf_counter(), message, message.ByteSize()):
                    flooded = True
                    break
        except (grpc.RpcError, asyncio.CancelledError, Exception):
            pass
        finally:
            connection.alive = False
            connection.closed.set()
            if flooded:
                seating.flooded(seat, INBOX_FLOOD)
            inbox.put_nowait((time.perf_counter(), DISCONNECTED, 0))
        if flooded:
            with contextlib.suppress(Exception):
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"more than {INBOX_MESSAGES} messages or {INBOX_BYTES} bytes sent ahead "
                    "of the referee")
        # The stream stays open until the match has sent its last message.
        with contextlib.suppress(asyncio.CancelledError):
            await connection.finished.wait()

    async def _seat(self, context: grpc.aio.ServicerContext) -> Connection | None:
        """Read the stream's hello and seat its bot: its connection, or None (the stream
        aborted or given up)."""
        seating = self.seating
        waiting, me = self.waiting, asyncio.current_task()
        if len(waiting) >= PENDING_HELLOS:
            waiting.popleft().cancel()  # the stream silent the longest
        if me is not None:
            waiting.append(me)
        try:
            first = await asyncio.wait_for(context.read(), seating.hello_timeout)
        except (TimeoutError, grpc.RpcError, asyncio.CancelledError):
            return None
        finally:
            with contextlib.suppress(ValueError):
                waiting.remove(me)  # type: ignore[arg-type]
        request = None if first is grpc.aio.EOF else parse(first)
        if request is None or not request.HasField("hello"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be hello")
            return None
        hello = request.hello  # type: ignore[union-attr]
        seat = seating.claim(hello.token, self.seat)
        if seat is None:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown or used token")
            return None
        refusal = seating.refusal(seat, hello)
        if refusal:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, refusal)
            return None
        relay = seating.relays.get(seat)
        connection = Connection(context, hello, seat, relay)
        seating.attach(seat, connection)
        if relay is not None:
            relay.seated()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        return connection


def serialize(message: pb.PlayResponse | bytes) -> bytes:
    """A response's bytes: the match loop hands most requests over already serialized, so
    the bytes sent are the bytes logged."""
    return message if type(message) is bytes else message.SerializeToString()  # type: ignore[union-attr]


async def start_server(servicer: PlayServicer, address: str, hello_timeout: float
                       ) -> grpc.aio.Server:
    """A gRPC server for ``servicer``, started on ``address``. A seat's relay is its only
    client: one connection at a time is the relay's rule, not a cap here, which would
    refuse a reconnecting bot while gRPC still held the connection it left."""
    server = grpc.aio.server(options=[
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_metadata_size", MAX_METADATA_BYTES),
        ("grpc.max_concurrent_streams", STREAMS_PER_CONNECTION),
        # Connections that hold no stream are closed: they cost memory and serve nothing.
        ("grpc.max_connection_idle_ms", int(hello_timeout * 1000)),
        ("grpc.http2.bdp_probe", 0),  # keep flow-control windows at their small default
        ("grpc.so_reuseport", 0),
    ])
    # A bot's messages come as bytes (no deserializer): ``Play`` parses each once, and one
    # protobuf cannot parse is struck as malformed rather than ending the stream.
    handlers = {"Play": grpc.stream_stream_rpc_method_handler(
        servicer.Play, response_serializer=serialize)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "uno_arena.v1.RefereeService", handlers),))
    server.add_registered_method_handlers("uno_arena.v1.RefereeService", handlers)
    server.add_insecure_port(address)
    await server.start()
    return server

