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

from arena.referee.relay import BUDGET_BYTES, GRANT_BYTES, SeatRelay


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


def test_a_bot_over_its_budget_is_cut_off_once_and_a_request_refills_it(
        tmp_path: Path) -> None:
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer = await _connect(path)
        up_reader, _ = await _upstream(upstream)
        writer.write(b"x" * BUDGET_BYTES)  # all of it: still within the budget
        assert len(await up_reader.readexactly(BUDGET_BYTES)) == BUDGET_BYTES
        relay.grant()
        writer.write(b"y" * GRANT_BYTES)  # what one request gave back
        assert len(await up_reader.readexactly(GRANT_BYTES)) == GRANT_BYTES
        writer.write(b"z")  # one byte too many
        assert await up_reader.read() == b""  # cut off upstream...
        assert await reader.read() == b""  # ...and towards the bot
        assert floods == [BUDGET_BYTES + GRANT_BYTES + 1] and relay.flooded
        late, _ = await _connect(path)  # a flooded seat takes no new connection
        assert await late.read() == b""

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
        assert len(relay.to_bot) <= 65536, "it holds at most one read's worth"
        bot.close()

    asyncio.run(_with_relay(tmp_path, body))
