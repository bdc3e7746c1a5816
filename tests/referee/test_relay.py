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
from hypothesis import given
from hypothesis import strategies as st

from arena.referee import eventloop
from arena.referee.relay import (
    ACK,
    BUDGET_BYTES,
    CONTINUATION,
    DATA,
    END_HEADERS,
    FRAME_COST,
    GRANT_BYTES,
    HEADERS,
    PING,
    SETTINGS,
    WINDOW_UPDATE,
    FrameReader,
    SeatRelay,
)
from arena.referee.relay import RST_STREAM as RESET


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
        assert floods == [] and relay.received == 13

    eventloop.run(_with_relay(tmp_path, body))


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(kind: int, payload: bytes = b"", flags: int = 0, stream: int = 0) -> bytes:
    return (len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big")
            + payload)


END_STREAM = 0x1


def message(body: bytes, compressed: int = 0) -> bytes:
    """A gRPC message: its compressed flag and length, then the message."""
    return bytes([compressed]) + len(body).to_bytes(4, "big") + body


PRIORITY, RST_STREAM, PUSH_PROMISE, GOAWAY = 2, 3, 5, 7
PADDED, PRIORITY_FLAG = 0x8, 0x20
HELLO, ANSWER, THIRD = b"hello, token", b"\x12\x02\x08\x01", b"x" * 40
OPENING = (PREFACE + frame(SETTINGS, bytes([0, 4, 0, 0x40, 0, 0])) + frame(WINDOW_UPDATE, bytes(
    [0, 0, 0x10, 0])) + frame(HEADERS, b"h" * 40, END_HEADERS, 1) + frame(SETTINGS, flags=ACK))
"""A client's connection as gRPC's opens it: preface, SETTINGS (a 4 MiB window), a
WINDOW_UPDATE, the stream's HEADERS, the server's SETTINGS acknowledged."""
PICKED = [(1, HELLO), (2, ANSWER), (3, THIRD), (4, THIRD)]


def picked(stream: bytes, size: int | None = None) -> tuple[int, list[tuple[int, bytes]]]:
    """The frames counted and the messages picked out of ``stream`` read in pieces of
    ``size`` bytes (whole when None), taken after each read as the relay does."""
    reader, frames, taken = FrameReader(), 0, []
    size = size or len(stream)
    for at in range(0, len(stream), size):
        frames += reader.read(stream[at:at + size])
        taken += reader.take()
    return frames, taken


def test_the_streams_messages_are_picked_out_however_the_bytes_are_cut() -> None:
    """Messages split across frames and frames across reads, a header block continued,
    empty frames, and the frames of the plain path between them (one SETTINGS between two
    messages, a PING, acknowledgements, window updates)."""
    third = message(THIRD)
    opening = (PREFACE + frame(SETTINGS) + frame(HEADERS, b"h" * 20, 0, 1)
               + frame(CONTINUATION, b"h" * 20, END_HEADERS, 1))
    stream = (opening + frame(DATA, message(HELLO), stream=1) + frame(WINDOW_UPDATE, bytes(
        [0, 0, 1, 0])) + frame(PING, bytes(8)) + frame(SETTINGS, bytes([0, 3, 0, 0, 0, 9]))
              + frame(DATA, message(ANSWER) + third[:10], stream=1) + frame(DATA, stream=1)
              + frame(PING, bytes(8), ACK) * 3 + frame(SETTINGS, flags=ACK)
              + frame(WINDOW_UPDATE, bytes([0, 0, 0, 9]), stream=1)
              + frame(DATA, third[10:], stream=1) + frame(SETTINGS, bytes([0xFE, 3, 0, 0, 0, 1]))
              + frame(DATA, message(THIRD), stream=1))
    for size in (None, 1, 2, 5, 9, 10, 13, 64):
        assert picked(stream, size) == (17, PICKED), size


@given(st.lists(st.integers(1, 40), max_size=30))
def test_picked_the_same_whatever_the_reads(cuts: list[int]) -> None:
    stream = (OPENING + frame(DATA, message(HELLO) + message(ANSWER)[:3], stream=1)
              + frame(DATA, message(ANSWER)[3:] + message(THIRD), stream=1)
              + frame(DATA, message(THIRD), stream=1))
    reader, at, taken = FrameReader(), 0, []
    for cut in cuts:
        reader.read(stream[at:at + cut])
        taken += reader.take()
        at += cut
    reader.read(stream[at:])
    assert taken + reader.take() == PICKED


THIRD_DATA = frame(DATA, message(THIRD), stream=1)
# (case, what the bot sends after its hello and answer on stream 1, before a third message:
# from there nothing is picked out; a bot that strays from the plain path loses only its
# head start, gRPC reads the rest, or refuses what the reader must not pick out)
STRAYS = [
    ("a second stream", frame(HEADERS, b"h", END_HEADERS, 3)),
    ("a compressed message", frame(DATA, message(THIRD, 1), stream=1)),
    ("a message past the limit", frame(DATA, message(b"x" * (16 * 1024 + 1)), stream=1)),
    ("a frame past the limit", frame(DATA, bytes(16 * 1024 + 1), stream=1)),
    ("a padded frame (gRPC refuses it)", frame(DATA, bytes([2]) + message(THIRD) + bytes(2),
                                               PADDED, 1)),
    ("the stream's end", frame(DATA, message(THIRD), END_STREAM, 1)),
    ("the stream reset", frame(RST_STREAM, bytes(4), stream=1)),
    ("another stream reset", frame(RST_STREAM, bytes(4), stream=7)),
    ("the connection going away", frame(GOAWAY, bytes(8))),
    ("trailers on the stream", frame(HEADERS, b"t", END_STREAM | END_HEADERS, 1)),
    ("a priority frame", frame(PRIORITY, bytes(5), stream=1)),
    ("a push promise", frame(PUSH_PROMISE, bytes(8), END_HEADERS, 1)),
    ("a frame of an unknown type", frame(0xA, bytes(3))),
    ("a continuation with no header block", frame(CONTINUATION, b"h", END_HEADERS, 1)),
    ("data on a stream never opened", frame(DATA, message(b"?"), stream=5)),
    ("data on stream 0", frame(DATA, message(b"?"))),
    ("a SETTINGS frame of 5 bytes (found by attack)", frame(SETTINGS, bytes(5))),
    ("a SETTINGS acknowledgement with a payload", frame(SETTINGS, bytes(6), ACK)),
    ("a second SETTINGS acknowledgement (found by re-attack)", frame(SETTINGS, flags=ACK)),
    ("SETTINGS on a stream", frame(SETTINGS, stream=1)),
    ("push enabled as 2", frame(SETTINGS, bytes([0, 2, 0, 0, 0, 2]))),
    ("gRPC's true-binary setting as 2 (found by re-attack)",
     frame(SETTINGS, bytes([0xFE, 3, 0, 0, 0, 2]))),
    ("a setting of an unknown identifier", frame(SETTINGS, bytes([0, 9, 0, 0, 0, 1]))),
    ("a frame size under the least", frame(SETTINGS, bytes([0, 5, 0, 0, 0x10, 0]))),
    ("a window of 2 GiB", frame(SETTINGS, bytes([0, 4, 0x7F, 0xFF, 0xFF, 0xFF]))),
    ("two SETTINGS between messages", frame(SETTINGS) * 2),
    ("a PING of 7 bytes", frame(PING, bytes(7))),
    ("a PING on a stream", frame(PING, bytes(8), stream=1)),
    ("two PINGs between requests (gRPC's ping strikes)", frame(PING, bytes(8)) * 2),
    ("a window update of 0", frame(WINDOW_UPDATE, bytes(4), stream=1)),
    ("a window update of 3 bytes", frame(WINDOW_UPDATE, bytes(3))),
    ("a window update on another stream", frame(WINDOW_UPDATE, bytes([0, 0, 0, 1]), stream=3)),
    ("window updates past the most", frame(WINDOW_UPDATE, bytes([0x20, 0, 0, 1]))),
]


@pytest.mark.parametrize(("case", "after"), STRAYS, ids=[c[0] for c in STRAYS])
def test_a_bot_that_strays_from_the_plain_path_has_nothing_more_picked_out(
        case: str, after: bytes) -> None:
    """Nor anything its straying read picked out before: gRPC drops the messages it holds
    unread when a frame ends the connection (found by re-attack)."""
    start = OPENING + frame(DATA, message(HELLO) + message(ANSWER), stream=1)
    for size in (None, 1, 7):
        reader = FrameReader()
        reader.read(start)
        assert reader.take() == PICKED[:2]
        rest = after + THIRD_DATA
        for at in range(0, len(rest), size or len(rest)):
            reader.read(rest[at:at + (size or len(rest))])
            assert reader.take() == [] or not size, (case, size)
        assert reader.take() == [] and not reader.picking, (case, size)
    assert picked(start + THIRD_DATA * 2)[1] == PICKED, "the same with nothing astray"


def test_one_ping_between_two_requests_keeps_to_the_plain_path() -> None:
    """gRPC forgives a client's PINGs when it writes, not when the client sends a message
    (found by re-attack: four PINGs before as many answers, in one write, went through)."""
    for asked in (True, False):
        reader = FrameReader()
        reader.read(OPENING + frame(PING, bytes(8)) + frame(DATA, message(HELLO), stream=1))
        assert reader.take() == PICKED[:1]
        if asked:
            reader.granted()  # a request went to the bot
        reader.read(frame(PING, bytes(8)) + frame(DATA, message(ANSWER), stream=1))
        assert reader.take() == (PICKED[1:2] if asked else [])
        assert reader.picking is asked


def test_the_picking_stops_at_the_end_of_the_streams_first_window() -> None:
    """gRPC's server grants its window back as it reads, which the reader does not follow:
    it stops where a client could not go without those grants."""
    reader, number = FrameReader(), 1
    reader.read(OPENING + frame(DATA, message(HELLO), stream=1))
    taken, sent = reader.take(), len(message(HELLO))
    big = message(b"b" * 16_000)
    while sent + len(big) <= 65_535:
        reader.read(frame(DATA, big, stream=1))
        taken += reader.take()
        sent += len(big)
        number += 1
    assert [n for n, _ in taken] == list(range(1, number + 1)) and number == 5
    reader.read(frame(DATA, big, stream=1))
    assert reader.take() == [] and not reader.picking


def test_a_bot_far_ahead_of_the_referee_has_nothing_more_picked_out() -> None:
    """Found by attack: 49,000 empty messages in 245 KB (within the budget) made the reader
    pick out each one. A bot is asked one thing at a time: more than a few messages in one
    read end the picking."""
    stream = OPENING + frame(DATA, message(HELLO) + message(b"") * 3_000, stream=1)
    reader = FrameReader()
    reader.read(stream)
    assert reader.take() == [] and not reader.picking


def test_frames_are_counted_however_the_bytes_are_cut() -> None:
    stream = (PREFACE + frame(4) + frame(1, b"h" * 300) + frame(0, b"d" * 70_000)
              + frame(8, bytes(4)))
    whole = FrameReader()
    assert whole.read(stream) == 4
    for size in (1, 5, 9, 10, 4096):
        pieces = FrameReader()
        assert sum(pieces.read(stream[at:at + size])
                   for at in range(0, len(stream), size)) == 4, size


def test_a_bot_over_its_budget_is_cut_off_once_and_a_request_refills_it(
        tmp_path: Path) -> None:
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_reader, _ = await _connected(path, upstream)
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

    eventloop.run(_with_relay(tmp_path, body))


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


async def _seat_and_answer(relay: SeatRelay, writer: asyncio.StreamWriter,
                           up_reader: asyncio.StreamReader) -> list[tuple[int, bytes]]:
    """The bot says hello, is seated, then answers: what the relay handed on by then (each
    write seen upstream first)."""
    handed: list[tuple[int, bytes]] = []
    for data in (OPENING + frame(DATA, message(HELLO), stream=1),
                 frame(DATA, message(ANSWER), stream=1)):
        writer.write(data)
        assert await up_reader.readexactly(len(data)) == data
        if data.startswith(OPENING):
            relay.seated(lambda number, data: handed.append((number, data)))
    return handed


def test_a_seated_bots_messages_are_handed_on_as_they_pass(tmp_path: Path) -> None:
    """Numbered on the stream (the hello first), only once the bot is seated, and none of a
    read that takes the bot past its budget."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_reader, _ = await _connected(path, upstream)
        handed = await _seat_and_answer(relay, writer, up_reader)
        assert handed == [(2, ANSWER)]  # as it was passed on
        writer.write(frame(DATA, message(THIRD) + bytes(BUDGET_BYTES), stream=1))
        assert await asyncio.wait_for(reader.read(), 10) == b""
        assert floods and handed == [(2, ANSWER)]

    eventloop.run(_with_relay(tmp_path, body))


def test_nothing_is_picked_out_for_a_bot_that_reconnected_before_its_hello(
        tmp_path: Path) -> None:
    """Which connection its hello came by is gRPC's to know: the relay hands nothing on,
    and gRPC's reading brings every message."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        _, first = await _connect(path)
        await _upstream(upstream)
        first.close()
        await first.wait_closed()
        _, writer = await _connect(path)
        up_reader, _ = await _upstream(upstream, 2)
        assert await _seat_and_answer(relay, writer, up_reader) == []
        assert not relay.frames.picking, "nothing to hand on: the reader only counts"

    eventloop.run(_with_relay(tmp_path, body))


# -- the relay writing the referee's messages itself ---------------------------------------

START = message(b"match start")
"""The first message gRPC writes on the stream (the match's start), after its headers."""


def opening(window: int = 0x400000) -> bytes:
    """``OPENING`` with the bot's initial stream window set to ``window``."""
    return OPENING.replace(bytes([0, 4, 0, 0x40, 0, 0]), bytes([0, 4]) + window.to_bytes(4, "big"))


async def _frame_from(reader: asyncio.StreamReader) -> tuple[int, int, int, bytes]:
    """The next frame the bot receives: (type, flags, stream, payload)."""
    header = await asyncio.wait_for(reader.readexactly(9), 10)
    payload = await reader.readexactly(int.from_bytes(header[:3], "big"))
    return header[3], header[4], int.from_bytes(header[5:], "big"), payload


async def _seated(relay: SeatRelay, path: Path, upstream: list[Any], window: int,
                  take: Callable[[int, bytes], bool],
                  on_read: Callable[[], None] | None = None) -> tuple[Any, Any, Any, Any]:
    """A bot connected with a stream window of ``window``, its hello passed on to gRPC, then
    seated (``take`` told its messages, ``on_read`` each read's end): the bot's reader and
    writer, gRPC's."""
    reader, writer, up_reader, up_writer = await _connected(path, upstream)
    hello = opening(window) + frame(DATA, message(HELLO), stream=1)
    writer.write(hello)
    assert await up_reader.readexactly(len(hello)) == hello
    relay.seated(take, on_read)
    return reader, writer, up_reader, up_writer


async def _writing_relay(relay: SeatRelay, path: Path, upstream: list[Any], window: int,
                         take: Callable[[int, bytes], bool]) -> tuple[Any, Any, Any, Any]:
    """A bot seated (``_seated``), gRPC's response begun (its headers and first message
    passed to the bot): the relay writes from then on."""
    reader, writer, up_reader, up_writer = await _seated(relay, path, upstream, window, take)
    assert not relay.writes_itself(), "not before gRPC's response has begun"
    relay.to_grpc += len(START)
    response = frame(HEADERS, b"h" * 10, END_HEADERS, 1) + frame(DATA, START, stream=1)
    up_writer.write(response[:20])  # in two pieces: the relay waits for the rest
    assert await reader.readexactly(20) == response[:20]
    assert not relay.writes_itself()
    up_writer.write(response[20:])
    assert await reader.readexactly(len(response) - 20) == response[20:]
    assert relay.writes_itself()
    return reader, writer, up_reader, up_writer


async def _marker(writer: Any, up_reader: asyncio.StreamReader) -> None:
    """A frame gRPC must see (SETTINGS): what the bot sent before it and the relay passed
    on came first."""
    marker = frame(SETTINGS, bytes([0, 2, 0, 0, 0, 0]))
    writer.write(marker)
    assert await asyncio.wait_for(up_reader.readexactly(len(marker)), 10) == marker


def test_answers_the_match_took_are_kept_from_grpc_and_granted_back(tmp_path: Path) -> None:
    """Kept: gRPC never reads them (the marker after them is the next thing it gets), and
    their DATA bytes are granted back to the bot on the connection and the stream, along
    with the next message the relay writes it, in one DATA frame of gRPC's framing."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        handed: list[tuple[int, bytes]] = []
        reader, writer, up_reader, _ = await _writing_relay(
            relay, path, upstream, 0x400000, lambda n, m: handed.append((n, m)) is None)
        for body in (ANSWER, THIRD):
            writer.write(frame(DATA, message(body), stream=1))
        await _marker(writer, up_reader)
        assert handed == [(2, ANSWER), (3, THIRD)] and relay.kept == 2
        assert relay.write(b"a request") is True
        granted = len(message(ANSWER)) + len(message(THIRD))
        assert [await _frame_from(reader) for _ in range(3)] == [
            (WINDOW_UPDATE, 0, 0, granted.to_bytes(4, "big")),
            (WINDOW_UPDATE, 0, 1, granted.to_bytes(4, "big")),
            (DATA, 0, 1, message(b"a request"))]

    eventloop.run(_with_relay(tmp_path, body))


def test_a_message_the_match_does_not_take_goes_to_grpc_and_so_does_all_after_it(
        tmp_path: Path) -> None:
    """gRPC numbers what it reads after the messages kept (``kept``): so none is kept once
    one went to gRPC."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        _, writer, up_reader, _ = await _writing_relay(
            relay, path, upstream, 0x400000, lambda number, _: number != 3)
        second, third, fourth = (frame(DATA, message(body), stream=1)
                                 for body in (ANSWER, THIRD, ANSWER))
        writer.write(second + third)  # in one read: the second kept, the third passed on
        assert await asyncio.wait_for(up_reader.readexactly(len(third)), 10) == third
        writer.write(fourth)  # taken, and passed on all the same
        assert await asyncio.wait_for(up_reader.readexactly(len(fourth)), 10) == fourth
        assert relay.kept == 1 and not relay.frames.keeping

    eventloop.run(_with_relay(tmp_path, body))


def test_the_relay_writes_within_the_windows_the_bot_grants(tmp_path: Path) -> None:
    """A bot with a 20-byte stream window (gRPC's first message spent 16 of it): a request
    goes out in pieces as the bot grants more, the write done only once all of it is in
    the bot's socket; a SETTINGS change shifts the window."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, _, _ = await _writing_relay(
            relay, path, upstream, 20, lambda *_: True)
        request = message(b"r" * 30)
        sent = relay.write(b"r" * 30)
        assert isinstance(sent, asyncio.Future)
        assert await _frame_from(reader) == (DATA, 0, 1, request[:4])  # 20 - len(START)
        writer.write(frame(WINDOW_UPDATE, (10).to_bytes(4, "big"), stream=1))
        assert await _frame_from(reader) == (DATA, 0, 1, request[4:14])
        assert not sent.done()
        # The initial window up by 100: the stream's window too (RFC 9113, 6.9.2).
        writer.write(frame(SETTINGS, bytes([0, 4]) + (120).to_bytes(4, "big")))
        assert await _frame_from(reader) == (DATA, 0, 1, request[14:])
        assert await asyncio.wait_for(sent, 10) is True

    eventloop.run(_with_relay(tmp_path, body))


def test_once_writing_the_relay_answers_pings_and_keeps_grants_from_grpc(
        tmp_path: Path) -> None:
    """gRPC, which no longer writes, would count a bot's PINGs against it (its ping
    strikes): the relay answers them itself, and keeps the bot's WINDOW_UPDATEs, which
    grant what only the relay spends."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_reader, _ = await _writing_relay(
            relay, path, upstream, 0x400000, lambda *_: True)
        writer.write(frame(PING, b"12345678") + frame(WINDOW_UPDATE, (99).to_bytes(4, "big")))
        assert await _frame_from(reader) == (PING, ACK, 0, b"12345678")
        await _marker(writer, up_reader)
        assert relay.granted[0] == 0x10000 + 0x1000 - 1 + 99  # (OPENING's grant)

    eventloop.run(_with_relay(tmp_path, body))


def test_a_bot_that_resets_its_stream_is_written_nothing_more(tmp_path: Path) -> None:
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        _, writer, up_reader, _ = await _writing_relay(
            relay, path, upstream, 0x400000, lambda *_: True)
        reset = frame(RESET, bytes(4), stream=1)
        writer.write(reset)
        assert await up_reader.readexactly(len(reset)) == reset  # gRPC ends the call
        assert relay.write(b"a request") is False

    eventloop.run(_with_relay(tmp_path, body))


async def _held_back(relay: SeatRelay, path: Path, upstream: list[Any]
                     ) -> tuple[Any, Any, Any, asyncio.Future[bool]]:
    """A writing relay whose bot's 20-byte window (16 of it spent by gRPC's first message)
    holds back most of a 35-byte message: the bot's reader and writer, gRPC's writer, and
    the write under way."""
    reader, writer, _, up_writer = await _writing_relay(
        relay, path, upstream, 20, lambda *_: True)
    sent = relay.write(b"r" * 30)
    assert isinstance(sent, asyncio.Future)
    assert (await _frame_from(reader))[0] == DATA  # the 4 bytes the window let through
    return reader, writer, up_writer, sent


def test_a_write_given_up_on_sends_nothing_more(tmp_path: Path) -> None:
    """Found by attack: what the windows held back of a write the match gave up on went out
    after gRPC's trailers once the bot granted more. Now nothing more is written."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_writer, sent = await _held_back(relay, path, upstream)
        relay.abandon()
        assert await sent is False and relay.write(b"more") is False
        writer.write(frame(WINDOW_UPDATE, (100).to_bytes(4, "big"), stream=1))
        trailers = frame(HEADERS, b"t" * 5, END_HEADERS | END_STREAM, 1)
        up_writer.write(trailers)
        assert await _frame_from(reader) == (HEADERS, END_HEADERS | END_STREAM, 1, b"t" * 5)

    eventloop.run(_with_relay(tmp_path, body))


def test_a_grant_past_the_largest_window_ends_the_connection(tmp_path: Path) -> None:
    """Kept from gRPC once the relay writes, a bot's grants are checked by the relay as
    gRPC would check them (RFC 9113, 6.9.1: a connection error)."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_reader, _ = await _writing_relay(
            relay, path, upstream, 0x400000, lambda *_: True)
        writer.write(frame(WINDOW_UPDATE, (0x7FFF_FFFF).to_bytes(4, "big")))
        assert await asyncio.wait_for(reader.read(), 10) == b""
        assert await asyncio.wait_for(up_reader.read(), 10) == b""

    eventloop.run(_with_relay(tmp_path, body))


def test_the_relays_frames_wait_for_the_end_of_a_header_block(tmp_path: Path) -> None:
    """Nothing may come between a HEADERS frame without END_HEADERS and its CONTINUATION
    (RFC 9113, 6.10); and a write is not done while its frames still wait (found by
    re-attack: it said so, and gRPC's trailers could overtake the match's end)."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, _, up_writer = await _writing_relay(
            relay, path, upstream, 0x400000, lambda *_: True)
        up_writer.write(frame(HEADERS, b"a" * 5, 0, 1))  # a header block, to be continued
        assert await _frame_from(reader) == (HEADERS, 0, 1, b"a" * 5)
        sent = relay.write(b"a request")
        assert isinstance(sent, asyncio.Future) and not sent.done()
        up_writer.write(frame(CONTINUATION, b"b" * 5, END_HEADERS, 1))
        assert await _frame_from(reader) == (CONTINUATION, END_HEADERS, 1, b"b" * 5)
        assert await _frame_from(reader) == (DATA, 0, 1, message(b"a request"))
        assert await asyncio.wait_for(sent, 10) is True
        writer.close()

    eventloop.run(_with_relay(tmp_path, body))


def test_nothing_is_written_after_grpc_ends_the_stream(tmp_path: Path) -> None:
    """gRPC ends the call (its trailers: a flood, a hang-up) while the bot's window holds a
    request back: the write fails, and what is held is never sent after the end."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, up_writer, sent = await _held_back(relay, path, upstream)
        trailers = frame(HEADERS, b"t" * 5, END_HEADERS | END_STREAM, 1)
        up_writer.write(trailers)
        assert await _frame_from(reader) == (HEADERS, END_HEADERS | END_STREAM, 1, b"t" * 5)
        assert await asyncio.wait_for(sent, 10) is False
        assert relay.write(b"more") is False
        writer.write(frame(WINDOW_UPDATE, (100).to_bytes(4, "big"), stream=1))
        up_writer.write(frame(PING, bytes(8), ACK))  # the next frame the bot gets
        assert await _frame_from(reader) == (PING, ACK, 0, bytes(8))

    eventloop.run(_with_relay(tmp_path, body))


def test_the_match_is_told_once_a_reads_messages_are_all_handed_on(tmp_path: Path) -> None:
    """Found by re-attack: told at each message, the match played on at the first, and a
    guess at the next request's answer in the same read was taken as that answer. Now
    ``on_read`` comes once, after every message of the read (and only if one was taken)."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        handed: list[int] = []
        told: list[list[int]] = []
        _, writer, up_reader, _ = await _seated(
            relay, path, upstream, 0x400000,
            lambda number, _: handed.append(number) is None and number != 4,
            lambda: told.append(list(handed)))
        writer.write(frame(DATA, message(ANSWER), stream=1)
                     + frame(DATA, message(THIRD), stream=1))
        await _marker(writer, up_reader)
        assert told == [[2, 3]]
        fourth = frame(DATA, message(ANSWER), stream=1)  # not taken: no word of it
        writer.write(fourth)
        assert await asyncio.wait_for(up_reader.readexactly(len(fourth)), 10) == fourth
        assert told == [[2, 3]] and handed == [2, 3, 4]
        writer.close()

    eventloop.run(_with_relay(tmp_path, body))


def test_kept_bytes_are_granted_back_before_the_relay_writes(tmp_path: Path) -> None:
    """Found in CI: a bot's messages kept from gRPC before its first request (the relay not
    writing yet) were never granted back, and its window shut at 64 KB: a flood of it
    could not reach the inbox's limit, and its messages were struck one by one instead.
    Past ``CREDIT_MOST`` they are granted back at once, writing or not."""
    async def body(relay: SeatRelay, path: Path, upstream: list[Any], floods: list[int]
                   ) -> None:
        reader, writer, _, _ = await _seated(relay, path, upstream, 0x400000,
                                             lambda *_: True)
        assert not relay.writes_itself()
        big = message(b"x" * 10_000)
        writer.write(frame(DATA, big, stream=1))  # kept, 10 KB: not yet
        writer.write(frame(DATA, big, stream=1))  # kept, 20 KB in all: granted back
        granted = (2 * len(big)).to_bytes(4, "big")
        assert [await _frame_from(reader) for _ in range(2)] == [
            (WINDOW_UPDATE, 0, 0, granted), (WINDOW_UPDATE, 0, 1, granted)]
        assert relay.kept == 2

    eventloop.run(_with_relay(tmp_path, body))
