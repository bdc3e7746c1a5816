"""The seat's socket relay (arena/referee/relay.py) on its own, over plain sockets: bytes
pass both ways and in order, the budget cuts a bot off once, one connection at a time (a
hung-up one gives its place), a shut side is passed on, and a reader that stops reading
stops the relay reading the other side (so a stalled write stays stalled upstream)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from arena.referee.relay import (
    BUDGET_BYTES,
    FRAME_COST,
    GRANT_BYTES,
    FrameCounter,
    SeatRelay,
)


async def _with_relay(tmp_path: Path, body: Callable[[SeatRelay, Path, list[
        tuple[asyncio.StreamReader, asyncio.StreamWriter]], list[int]], Awaitable[None]]
                      ) -> None:
    """A relay in front of an upstream that keeps each connection it gets; ``body`` runs
    with the relay, the bots' socket path, the upstream connections and the floods seen."""
    upstream: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def keep(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream.append((reader, writer))

    server = await asyncio.start_unix_server(keep, path=str(tmp_path / "up.sock"))
    floods: list[int] = []
    relay = SeatRelay(asyncio.get_running_loop(), tmp_path / "seat.sock",
                      f"unix:{tmp_path / 'up.sock'}", floods.append)
    try:
        await body(relay, tmp_path / "seat.sock", upstream, floods)
    finally:
        relay.close()
        server.close()


async def _connect(path: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_unix_connection(str(path))


async def _upstream(upstream: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]],
                    count: int = 1) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    for _ in range(200):
        if len(upstream) >= count:
            return upstream[count - 1]
        await asyncio.sleep(0.005)
    raise AssertionError("the relay did not connect upstream")


def test_bytes_pass_both_ways_and_a_shut_side_is_passed_on(tmp_path: Path) -> None:
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer = await _connect(path)
        up_reader, up_writer = await _upstream(upstream)
        writer.write(b"hello referee")
        assert await up_reader.readexactly(13) == b"hello referee"
        up_writer.write(b"a request")
        assert await reader.readexactly(9) == b"a request"
        writer.write_eof()  # the bot shuts its side: the referee reads the end
        assert await up_reader.read() == b""
        up_writer.write(b"the end")  # the other way still works
        up_writer.write_eof()
        assert await reader.read() == b"the end"
        assert floods == [] and relay.received == 13

    asyncio.run(_with_relay(tmp_path, body))


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(kind: int, payload: bytes = b"") -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, 0]) + bytes(4) + payload


def test_frames_are_counted_however_the_bytes_are_cut() -> None:
    stream = (PREFACE + frame(4) + frame(1, b"h" * 300) + frame(0, b"d" * 70_000)
              + frame(8, bytes(4)))
    whole = FrameCounter()
    assert whole.count(stream) == 4
    for size in (1, 5, 9, 10, 4096):
        pieces = FrameCounter()
        assert sum(pieces.count(stream[at:at + size])
                   for at in range(0, len(stream), size)) == 4, size


def test_a_bot_over_its_budget_is_cut_off_once_and_a_request_refills_it(
        tmp_path: Path) -> None:
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer = await _connect(path)
        up_reader, _ = await _upstream(upstream)
        first = PREFACE + frame(0, b"x" * (BUDGET_BYTES - len(PREFACE) - 9 - FRAME_COST))
        writer.write(first)  # all of the budget: a frame's bytes and its cost
        assert await up_reader.readexactly(len(first)) == first
        relay.grant()
        second = frame(0, b"y" * (GRANT_BYTES - 9 - FRAME_COST))
        writer.write(second)  # what one request gave back
        assert await up_reader.readexactly(len(second)) == second
        writer.write(b"z")  # one byte too many
        assert await asyncio.wait_for(up_reader.read(), 10) == b""  # cut off upstream...
        assert await reader.read() == b""  # ...and towards the bot
        assert floods == [len(first) + len(second) + 1] and relay.flooded
        late, _ = await _connect(path)  # a flooded seat takes no new connection
        assert await late.read() == b""

    asyncio.run(_with_relay(tmp_path, body))


def test_empty_frames_spend_the_budget_their_bytes_would_not(tmp_path: Path) -> None:
    """Found by re-attack: with bytes alone, 250 KB of empty SETTINGS frames (each one
    acknowledged by gRPC) cost the referee 15 ms a decision, the bot nothing. 2,000 of them
    are 18 KB: they cut it off."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer = await _connect(path)
        await _upstream(upstream)
        writer.write(PREFACE + frame(4) * 2000)
        assert await asyncio.wait_for(reader.read(), 10) == b"", "not cut off"
        assert floods == [len(PREFACE) + 9 * 2000]

    asyncio.run(_with_relay(tmp_path, body))


def test_one_connection_at_a_time_and_a_hung_up_one_gives_its_place(tmp_path: Path) -> None:
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        _, first = await _connect(path)
        await _upstream(upstream)
        second, _ = await _connect(path)
        assert await second.read() == b"", "a second connection is closed at once"
        first.close()  # hung up: the next connection takes its place
        await first.wait_closed()
        reader, writer = await _connect(path)
        up_reader, up_writer = await _upstream(upstream, 2)
        writer.write(b"again")
        assert await up_reader.readexactly(5) == b"again"
        up_writer.write(b"ok")
        assert await reader.readexactly(2) == b"ok"

    asyncio.run(_with_relay(tmp_path, body))


def test_a_bot_that_stops_reading_stops_the_relay_reading_upstream(tmp_path: Path) -> None:
    """The referee's writes then stall in gRPC (its deadline cuts them off), rather than
    piling up in the relay's memory."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        bot = socket.socket(socket.AF_UNIX)
        bot.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        bot.connect(str(path))  # and never reads
        _, up_writer = await _upstream(upstream)
        chunk = b"r" * 65536
        written = 0
        for _ in range(400):  # 25 MB offered; the relay must stop taking it
            up_writer.write(chunk)
            written += len(chunk)
            try:
                await asyncio.wait_for(up_writer.drain(), 0.05)
            except TimeoutError:
                break
        else:
            raise AssertionError("the relay kept reading what its bot did not")
        assert relay.legs is not None and len(relay.legs[1].pending) <= 65536, (
            "it holds at most one read's worth")
        bot.close()

    asyncio.run(_with_relay(tmp_path, body))


def test_a_seated_bot_is_the_seats_only_connection(tmp_path: Path) -> None:
    """Once the seat's token is used no other connection can serve it: none is taken,
    while the one that said hello goes on."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer = await _connect(path)
        up_reader, up_writer = await _upstream(upstream)
        relay.seated()
        with pytest.raises(OSError):  # refused: nobody listens on the path any more
            await _connect(path)
        writer.write(b"still here")
        assert await up_reader.readexactly(10) == b"still here"
        up_writer.write(b"good")
        assert await reader.readexactly(4) == b"good"

    asyncio.run(_with_relay(tmp_path, body))
