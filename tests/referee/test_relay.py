"""The seat's socket relay (arena/referee/relay.py) on its own, over plain sockets: bytes
pass both ways and in order, the budget (bytes, frames, header blocks, reads) cuts a bot
off once, one connection at a time (a hung-up one gives its place), a shut side is passed
on, and a reader that stops reading stops the relay reading the other side (so a stalled
write stays stalled upstream)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.referee import eventloop
from arena.referee.relay import (
    BUDGET_BYTES,
    FRAME_COST,
    GRANT_BYTES,
    HEADERS,
    READ_COST,
    STREAM_COST,
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


async def _connected(path: Path, upstream: list[tuple[asyncio.StreamReader,
                                                      asyncio.StreamWriter]]
                     ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter,
                                asyncio.StreamReader, asyncio.StreamWriter]:
    """A bot connected to the relay: its reader and writer, and the relayed connection's
    ends upstream (gRPC's)."""
    return (*await _connect(path), *await _upstream(upstream))


def test_bytes_pass_both_ways_and_a_shut_side_is_passed_on(tmp_path: Path) -> None:
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_reader, up_writer = await _connected(path, upstream)
        writer.write(b"hello referee")
        assert await up_reader.readexactly(13) == b"hello referee"
        up_writer.write(b"a request")
        assert await reader.readexactly(9) == b"a request"
        writer.write_eof()  # the bot shuts its side: the referee reads the end
        assert await up_reader.read() == b""
        up_writer.write(b"the end")  # the other way still works
        up_writer.write_eof()
        assert await reader.read() == b"the end"
        assert floods == [] and relay.received == 13 and relay.reads == 1

    eventloop.run(_with_relay(tmp_path, body))


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = 0x4


def frame(kind: int, payload: bytes = b"", flags: int = 0, stream: int = 0) -> bytes:
    return (len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big")
            + payload)


STREAM = PREFACE + frame(SETTINGS) + frame(HEADERS, b"h" * 300, 0x4, 1) + frame(
    0, b"d" * 70_000, stream=1) + frame(8, bytes(4)) + frame(HEADERS, b"t", 0x5, 1)
"""A client's bytes: preface, SETTINGS, a stream's HEADERS, a long DATA frame, a
WINDOW_UPDATE, a second header block."""


@given(st.lists(st.integers(min_value=1, max_value=20_000), max_size=30))
def test_frames_and_header_blocks_are_counted_however_the_bytes_are_cut(cuts: list[int]
                                                                        ) -> None:
    counter, frames, headers, at = FrameCounter(), 0, 0, 0
    for size in [*cuts, len(STREAM)]:
        piece = STREAM[at:at + size]
        at += len(piece)
        counted = counter.count(piece)
        frames, headers = frames + counted[0], headers + counted[1]
    assert (frames, headers) == (5, 2)


AFTER_PREFACE = BUDGET_BYTES - len(PREFACE) - READ_COST
"""The budget left once a client's preface is read."""


async def _spend_until_cut_off(writer: asyncio.StreamWriter, reader: asyncio.StreamReader,
                               up_reader: asyncio.StreamReader, data: bytes,
                               preface: bool = True) -> int:
    """Write the preface, then ``data`` again and again, one read of the relay's each (seen
    upstream before the next), until the relay cuts the bot off; how many were passed on."""
    if preface:
        writer.write(PREFACE)
        await up_reader.readexactly(len(PREFACE))
    for passed in range(BUDGET_BYTES):
        writer.write(data)
        try:
            await asyncio.wait_for(up_reader.readexactly(len(data)), 10)
        except asyncio.IncompleteReadError:
            assert await asyncio.wait_for(reader.read(), 10) == b"", "cut off towards the bot"
            return passed
    raise AssertionError("never cut off")


def test_each_read_frame_and_header_block_is_charged_and_a_request_refills_it(
        tmp_path: Path) -> None:
    """Each write of an empty frame below is one read: it costs its 9 bytes, a frame and a
    read, so the budget pays for so many and not one more; a request's grant for so many
    more."""
    cost = 9 + FRAME_COST + READ_COST

    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_reader, _ = await _connected(path, upstream)
        passed = await _spend_until_cut_off(writer, reader, up_reader, frame(SETTINGS))
        assert passed == AFTER_PREFACE // cost
        assert floods == [len(PREFACE) + 9 * (passed + 1)] and relay.flooded
        assert relay.reads == passed + 2
        late, _ = await _connect(path)  # a flooded seat takes no new connection
        assert await late.read() == b""

    async def refilled(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                       ) -> None:
        reader, writer, up_reader, _ = await _connected(path, upstream)
        writer.write(PREFACE)
        await up_reader.readexactly(len(PREFACE))
        for _ in range(AFTER_PREFACE // cost):  # all of the budget that frames can spend
            writer.write(frame(SETTINGS))
            await up_reader.readexactly(9)
        relay.grant()
        passed = await _spend_until_cut_off(writer, reader, up_reader, frame(SETTINGS),
                                            preface=False)
        assert passed == (AFTER_PREFACE % cost + GRANT_BYTES) // cost and len(floods) == 1
        for _ in range(100):
            relay.grant()
        assert relay.balance == BUDGET_BYTES, "no more than the budget is ever held"

    for name, scenario in (("spent", body), ("refilled", refilled)):
        (tmp_path / name).mkdir()
        eventloop.run(_with_relay(tmp_path / name, scenario))


def test_a_bot_dripping_one_byte_a_write_is_cut_off_for_its_reads(tmp_path: Path) -> None:
    """Bytes and frames alone would let a bot send its answers a byte at a time, each byte
    a wake-up of the referee: the reads are what cuts it off, long before its bytes."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_reader, _ = await _connected(path, upstream)
        passed = await _spend_until_cut_off(writer, reader, up_reader, b"\0")
        balance, expected = AFTER_PREFACE, 0  # every ninth byte ends a frame's header
        while (balance := balance - 1 - READ_COST - FRAME_COST * ((expected + 1) % 9 == 0)
               ) >= 0:
            expected += 1
        assert passed == expected < 200 and floods == [len(PREFACE) + passed + 1]

    eventloop.run(_with_relay(tmp_path, body))


def test_each_header_block_costs_a_stream(tmp_path: Path) -> None:
    """A bot opens one stream a match: opening and resetting streams costs it a request's
    grant each, so a handful cut it off."""
    headers = frame(HEADERS, b"h", 0x4, 1)
    cost = len(headers) + FRAME_COST + READ_COST + STREAM_COST

    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_reader, _ = await _connected(path, upstream)
        assert await _spend_until_cut_off(writer, reader, up_reader, headers) == (
            AFTER_PREFACE // cost)

    eventloop.run(_with_relay(tmp_path, body))


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

    eventloop.run(_with_relay(tmp_path, body))


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

    eventloop.run(_with_relay(tmp_path, body))


def test_a_seated_bot_is_the_seats_only_connection(tmp_path: Path) -> None:
    """Once the seat's token is used no other connection can serve it: none is taken,
    while the one that said hello goes on."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_reader, up_writer = await _connected(path, upstream)
        relay.seated()
        with pytest.raises(OSError):  # refused: nobody listens on the path any more
            await _connect(path)
        writer.write(b"still here")
        assert await up_reader.readexactly(10) == b"still here"
        up_writer.write(b"good")
        assert await reader.readexactly(4) == b"good"

    eventloop.run(_with_relay(tmp_path, body))


def test_empty_frames_spend_the_budget_their_bytes_would_not(tmp_path: Path) -> None:
    """With bytes alone, 250 KB of empty SETTINGS frames (each one acknowledged by gRPC)
    would cost the referee 15 ms a decision, the bot nothing. 2,000 of them
    are 18 KB: they cut it off."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer = await _connect(path)
        await _upstream(upstream)
        writer.write(PREFACE + frame(4) * 2000)
        assert await asyncio.wait_for(reader.read(), 10) == b"", "not cut off"
        assert floods == [len(PREFACE) + 9 * 2000]

    eventloop.run(_with_relay(tmp_path, body))
