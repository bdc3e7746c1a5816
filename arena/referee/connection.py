"""A seated bot's stream, as the match loop sees it: an inbox of what the bot sent, and a
way to write to it that a bot which stops reading cannot hold for ever."""

from __future__ import annotations

import asyncio
import collections
import time
from typing import Any

import grpc
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]

from arena.protocol import pb
from arena.referee.relay import SeatRelay

MAX_MESSAGE_BYTES = 16 * 1024
"""Largest message a bot may send (a decision is ~10 bytes, a hello ~100)."""
INBOX_MESSAGES = 32
INBOX_BYTES = 64 * 1024
"""A seat's unread messages, at most: beyond either, the seat is cut off for flooding."""
INBOX_FLOOD = (f"sent more than {INBOX_MESSAGES} messages or {INBOX_BYTES} bytes ahead of the "
               "referee; its stream was cut off")
TIMER_SLACK = 0.001
"""A wait's timer is set this much after its end: uvloop's clock counts milliseconds, and
a timer may run up to one early (the wait then goes on: its end is by
``time.perf_counter``, the clock latencies are measured on)."""

DISCONNECTED = object()
"""The inbox's last item: the bot's stream has ended."""


class Unreadable:
    """A message from a bot that is not a ``PlayRequest`` (protobuf cannot parse it). gRPC
    would end the stream on a parse error, as if the bot had hung up; handed on instead, it
    reads as a message with no field set, and the match strikes it as malformed."""

    __slots__ = ("reason", "size")

    def __init__(self, reason: str, size: int) -> None:
        self.reason, self.size = reason, size

    def HasField(self, _: str) -> bool:
        return False

    def ByteSize(self) -> int:
        return self.size


def parse(data: bytes) -> pb.PlayRequest | Unreadable:
    """A bot's message, from its bytes."""
    try:
        request: pb.PlayRequest = pb.PlayRequest.FromString(data)
        return request
    except DecodeError as error:
        return Unreadable(f"not a PlayRequest: {error}", len(data))


class Inbox:
    """Messages from one bot with their arrival time (``time.perf_counter``).

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
        would take the inbox past its bounds."""
        if len(self.backlog) >= INBOX_MESSAGES or self.unread_bytes + size > INBOX_BYTES:
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

    def get_nowait(self) -> tuple[float, Any]:
        arrived, message, size = self.backlog.popleft()
        self.unread_bytes -= size
        return arrived, message

    async def get(self, until: float) -> tuple[float, Any] | None:
        """The next message, or None once ``until`` (``time.perf_counter``) has passed."""
        loop = asyncio.get_running_loop()
        while not self.backlog:
            remaining = until - time.perf_counter()
            if remaining <= 0:
                return None
            waiter = self.waiter = loop.create_future()
            timer = loop.call_later(remaining + TIMER_SLACK, _wake, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self.waiter = None
        return self.get_nowait()


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Connection:
    """One seated bot's stream: its hello, its inbox, and writes to it."""

    def __init__(self, context: grpc.aio.ServicerContext, hello: pb.Hello, seat: int = 0,
                 relay: SeatRelay | None = None) -> None:
        self.context = context
        self.hello = hello
        self.seat = seat
        self.relay = relay
        """The seat's socket relay (none on a shared ``--listen`` address)."""
        self.inbox = Inbox()
        self.finished = asyncio.Event()
        """Set when the match has nothing more to send: the stream may end."""
        self.closed = asyncio.Event()
        """Set when the bot's side of the stream has ended."""
        self.alive = True

    async def write(self, message: pb.PlayResponse | bytes) -> bool:
        """Send a message (or its serialized bytes); False when the stream is gone."""
        if not self.alive:
            return False
        try:
            await self.context.write(message)
            return True
        except Exception:  # the stream is gone; the loop disqualifies the seat
            self.alive = False
            return False

    async def write_until(self, message: pb.PlayResponse | bytes, until: float) -> bool:
        """``write``, given up at ``until`` (``time.perf_counter``): a bot that stops reading
        shuts its HTTP/2 window and would hold the write for ever. False when the stream is
        gone or the write was given up (the stream then counts as gone)."""
        try:
            async with asyncio.timeout(max(0.0, until - time.perf_counter()) + TIMER_SLACK):
                return await self.write(message)
        except TimeoutError:
            self.alive = False
            return False
