"""A seat's socket: what its bot sends the referee's gRPC server, charged to a budget.

gRPC parses every HTTP/2 frame a bot sends, on threads the whole referee shares, and
bounds none of them but PINGs. So a bot never reaches gRPC directly: the referee holds the
seat's socket and relays each connection both ways over a private socket to the seat's own
gRPC server, on the match's event loop (``add_reader``, no thread). Everything the bot
sends is charged to a budget that each request it is asked refills (``grant``):

- its bytes;
- ``FRAME_COST`` for each HTTP/2 frame (what gRPC parses, whatever the payload);
- ``STREAM_COST`` for each header block, which opens a stream and a handler;
- ``READ_COST`` for each read the relay makes of its socket (each wakes the referee).

A bot that spends more than its budget is cut off and the match records it FLOODED; the
match goes on for the others. A bot needs one connection: a second one is closed while the
first lives, and none is taken once the bot has said hello (``seated``).

The relay looks at nothing but each frame's 9-byte header and writes nothing of its own:
gRPC reads and writes every message of the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from collections.abc import Callable
from pathlib import Path

RELAY_CHUNK = 64 * 1024
"""The most one read takes: a bot's bytes are read in as few wake-ups as they allow."""
BUDGET_BYTES = 256 * 1024
"""What a bot may spend at most ahead of being asked: its connection's set-up and hello
(about 80 KB with the costs below) a few times over."""
GRANT_BYTES = 32 * 1024
"""What each request adds back to the budget, up to ``BUDGET_BYTES``: an answer is one
read of a frame or two, and at most 16 KB."""
FRAME_COST = 1024
"""What each HTTP/2 frame costs on top of its bytes: 32 frames a request's grant, where an
honest answer takes one to three."""
STREAM_COST = 2 * GRANT_BYTES
"""What each HEADERS frame costs: a bot opens one stream a match (each one runs a handler
of the referee's), so a request's grant pays for half of another."""
READ_COST = 2048
"""What each read of the bot's socket costs: 16 a request's grant, where an honest bot's
answer takes one or two."""
PREFACE_BYTES = 24
"""An HTTP/2 client's connection preface, which comes before its first frame."""
HEADERS = 0x1
"""The frame type that opens a stream (RFC 9113, 6.2)."""


class FrameCounter:
    """Counts the HTTP/2 frames, and the HEADERS among them, that start in a connection's
    bytes read in pieces of any size. A frame is a 9-byte header (its payload's length in
    24 bits, then its type) and its payload (RFC 9113, 4.1). Bytes that are not HTTP/2
    count as frames all the same: gRPC ends such a connection."""

    def __init__(self) -> None:
        self.preface = PREFACE_BYTES
        """Bytes of the connection preface still to come."""
        self.header = b""
        """The part of a frame's header read so far."""
        self.payload = 0
        """Bytes of the current frame's payload still to come."""

    def count(self, data: bytes) -> tuple[int, int]:
        """The frames whose header completes in ``data``, and how many are HEADERS."""
        frames = headers = 0
        at, size = 0, len(data)
        if self.preface:
            at = min(self.preface, size)
            self.preface -= at
        while at < size:
            if self.payload:
                step = min(self.payload, size - at)
                self.payload -= step
                at += step
                continue
            piece = data[at:at + 9 - len(self.header)]
            at += len(piece)
            header = self.header + piece
            if len(header) < 9:
                self.header = header
                break
            self.header = b""
            self.payload = int.from_bytes(header[:3], "big")
            frames += 1
            headers += header[3] == HEADERS
        return frames, headers


class _Leg:
    """One way of a relayed connection: what ``source`` sends, passed on to ``sink``. While
    the sink takes no more, the leg stops reading the source, so a bot that stops reading
    holds gRPC's writes to it, which the match's deadline then cuts off."""

    def __init__(self, relay: SeatRelay, source: socket.socket, sink: socket.socket,
                 spend: Callable[[bytes], bool] | None = None) -> None:
        self.relay, self.source, self.sink, self.spend = relay, source, sink, spend
        """``spend`` is told each read; False ends the connection."""
        self.pending = b""
        """Read from the source, not taken by the sink yet."""
        self.done = False
        """The source shut its side: nothing more comes."""
        relay.loop.add_reader(source.fileno(), self.readable)

    def readable(self) -> None:
        relay = self.relay
        if relay.legs is None:  # the connection ended earlier in this turn of the loop
            return
        try:
            data = self.source.recv(RELAY_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # shut: the sink's side is shut too, once it has taken the rest
            relay.loop.remove_reader(self.source.fileno())
            self.done = True
            if not self.pending:
                relay.finish(self)
            return
        if self.spend is not None and not self.spend(data):
            return
        self.pending = relay.send(self.sink, self.pending + data if self.pending else data)
        if self.pending and relay.legs is not None:
            relay.loop.remove_reader(self.source.fileno())
            relay.loop.add_writer(self.sink.fileno(), self.writable)

    def writable(self) -> None:
        relay = self.relay
        if relay.legs is None:
            return
        self.pending = relay.send(self.sink, self.pending)
        if self.pending or relay.legs is None:
            return
        relay.loop.remove_writer(self.sink.fileno())
        if self.done:
            relay.finish(self)
        else:
            relay.loop.add_reader(self.source.fileno(), self.readable)


class SeatRelay:
    """Listens on ``path`` for the seat's bot, relays its connection to ``upstream`` (the
    seat's gRPC server), and calls ``on_flood`` once, with the bytes the bot sent, if it
    overspends its budget."""

    def __init__(self, loop: asyncio.AbstractEventLoop, path: Path, upstream: str,
                 on_flood: Callable[[int], None]) -> None:
        self.loop = loop
        self.upstream = upstream
        self.on_flood = on_flood
        self.balance = BUDGET_BYTES
        """What the bot may still spend (refilled by ``grant``)."""
        self.received = 0
        """Bytes the bot sent, in all."""
        self.reads = 0
        """Reads of the bot's socket, in all."""
        self.flooded = False
        self.connections = 0
        """Connections relayed so far."""
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.setblocking(False)
        self.listener.bind(str(path))
        self.listener.listen(64)
        self.legs: tuple[_Leg, _Leg] | None = None
        """The connection relayed: the bot's way up, the server's way down."""
        self.frames = FrameCounter()
        """The frames of what the bot sends on its connection (new for each)."""
        loop.add_reader(self.listener.fileno(), self._accept)

    def grant(self) -> None:
        """A request went to the bot: it may answer."""
        self.balance = min(BUDGET_BYTES, self.balance + GRANT_BYTES)

    def seated(self) -> None:
        """The bot said hello with its seat's one-time token: no other connection can ever
        serve the seat, so none is taken (a bot reconnecting in a loop costs nothing)."""
        self._stop_listening()

    def _stop_listening(self) -> None:
        if self.listener.fileno() >= 0:
            self.loop.remove_reader(self.listener.fileno())
            self.listener.close()

    def _accept(self) -> None:
        try:
            bot, _ = self.listener.accept()
        except OSError as error:  # gone before it was taken: it may retry
            if error.errno in (errno.EMFILE, errno.ENFILE):  # out of descriptors: the
                # listener stays readable, and the loop would spin on it; look again later
                self.loop.remove_reader(self.listener.fileno())
                self.loop.call_later(0.1, self._listen_again)
            return
        if self.legs is not None and self._hung_up(self.legs[0]):
            self.end()  # closed, its end not read yet: a bot that reconnects takes its place
        if self.legs is not None or self.flooded:
            bot.close()  # one connection at a time, as a bot needs
            return
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.setblocking(False)  # never wait on the loop: a full backlog fails (EAGAIN)
        try:
            server.connect(self.upstream.removeprefix("unix:"))
        except OSError:  # the server is stopping: the bot finds its connection closed
            server.close()
            bot.close()
            return
        bot.setblocking(False)
        self.frames = FrameCounter()
        self.connections += 1
        self.legs = (_Leg(self, bot, server, self._spend), _Leg(self, server, bot))

    def _listen_again(self) -> None:
        if self.listener.fileno() >= 0:
            self.loop.add_reader(self.listener.fileno(), self._accept)

    def _spend(self, data: bytes) -> bool:
        """Charge one read of the bot's socket to its budget; past it, cut the bot off."""
        self.received += len(data)
        self.reads += 1
        frames, headers = self.frames.count(data)
        self.balance -= len(data) + READ_COST + FRAME_COST * frames + STREAM_COST * headers
        if self.balance >= 0:
            return True
        self.flooded = True
        self.end()
        self.on_flood(self.received)
        return False

    def _hung_up(self, up: _Leg) -> bool:
        """Whether the bot closed this connection (what it sent before is passed on)."""
        while self.legs is not None and not up.done:
            try:
                if not up.source.recv(1, socket.MSG_PEEK):
                    return True
            except BlockingIOError:
                return False
            except OSError:
                return True
            up.readable()  # data still to pass on before its end
        return True

    def send(self, sink: socket.socket, data: bytes) -> bytes:
        """Send what the socket takes now; the rest. A broken socket ends the connection."""
        try:
            sent = sink.send(data)
        except BlockingIOError:
            return data
        except OSError:
            self.end()
            return b""
        return data[sent:]

    def finish(self, leg: _Leg) -> None:
        """``leg``'s source shut its side and all of it was passed on: shut the sink's; the
        connection ends once both ways are done."""
        with contextlib.suppress(OSError):
            leg.sink.shutdown(socket.SHUT_WR)
        if self.legs is not None and all(each.done and not each.pending for each in self.legs):
            self.end()

    def end(self) -> None:
        """Close the connection (both sockets); the next one may come."""
        legs, self.legs = self.legs, None
        if legs is None:
            return
        for sock in (legs[0].source, legs[0].sink):
            if sock.fileno() >= 0:
                self.loop.remove_reader(sock.fileno())
                self.loop.remove_writer(sock.fileno())
                sock.close()

    def close(self) -> None:
        self.end()
        self._stop_listening()
