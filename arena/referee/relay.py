"""A seat's socket: the bytes between its bot and the referee's gRPC server, counted.

Found by attack: gRPC parses every HTTP/2 frame a bot sends on its own connection
(WINDOW_UPDATE, SETTINGS, PRIORITY, RST_STREAM, CONTINUATION...) on threads the whole
referee shares, and it bounds none of them but PINGs. A bot writing 13-byte frames as fast
as the referee could parse them (blocking writes: no CPU of its own, so a sandbox's
off-turn throttle does not slow it) kept a gRPC thread busy, its opponent's answers were
read late and its requests written late, and the opponent was disqualified for timeouts.

So the bot does not reach gRPC directly: the referee listens on the seat's socket itself
and relays the bytes both ways over a private socket, and what the bot sends is drawn from
a budget that each request it is asked refills (``grant``): its bytes, and for each HTTP/2
frame ``FRAME_COST`` more (found by re-attack: a budget of bytes alone let a bot save it up
and spend it on 28,000 empty SETTINGS frames, each acknowledged, 15 ms of the referee a
decision). A bot sends a hello and one short answer a request (plus the odd flow-control
frame); one that sends more than the budget is cut off, and the match records it FLOODED.
The budget bounds what a bot can make gRPC parse, whatever the frames. One connection at a
time: a second one is closed at once (found by attack: a PING flood on a second
connection, read back slowly, took a minute of the referee's CPU), and none once the bot has
said hello.

The relay runs on the match's event loop (``add_reader``): no thread, and a message from
the referee is passed on in the loop turn after gRPC wrote it. As it passes a seated bot's
bytes on, it also hands the match each message the bot sends on its stream
(``FrameReader``, ``seated``): the match has an answer in the loop turn it arrives in,
without waiting for gRPC's threads to read it and wake the loop again.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from collections.abc import Callable
from pathlib import Path

RELAY_CHUNK = 64 * 1024
BUDGET_BYTES = 256 * 1024
"""What a bot may send at most ahead of being asked: its hello (16 KB at most, with 8 KB
of metadata) and its connection's set-up many times over, or a few padded answers."""
GRANT_BYTES = 32 * 1024
"""What each request adds back to the budget (up to ``BUDGET_BYTES``): an answer is at
most 16 KB."""
FRAME_COST = 256
"""What each HTTP/2 frame costs on top of its bytes: at most a thousand frames for the
whole budget, 128 for a request's grant, where an answer and its flow-control frames are a
handful."""
PREFACE_BYTES = 24
"""An HTTP/2 client's connection preface, which comes before its first frame."""


DATA, HEADERS, SETTINGS, PING, WINDOW_UPDATE, CONTINUATION = 0x0, 0x1, 0x4, 0x6, 0x8, 0x9
"""The HTTP/2 frame types of the plain path (RFC 9113, section 6): any other (PRIORITY,
RST_STREAM, PUSH_PROMISE, GOAWAY, unknown types) ends the picking."""
END_HEADERS, ACK = 0x4, 0x1
FRAME_PAYLOAD_MOST = 16 * 1024
"""The largest frame a client may send gRPC's server (SETTINGS_MAX_FRAME_SIZE's default,
which it keeps)."""
STREAM_WINDOW = 65_535
"""The DATA a client may send before gRPC's server grants more (its initial windows, which
it keeps: no bandwidth probe); the reader does not follow the grants, and stops there."""
WINDOW_GRANTS_MOST = 1 << 29
"""WINDOW_UPDATE increments in all, at most (far from overflowing gRPC's send windows)."""
READY_MOST = 4
"""Messages picked out and not taken, at most (a bot answers one request at a time)."""
_ANY = (0, (1 << 32) - 1)
_SETTING_RANGES = {0x1: _ANY, 0x2: (0, 1), 0x3: _ANY, 0x4: (0, 1 << 30),
                   0x5: (1 << 14, (1 << 24) - 1), 0x6: _ANY, 0x8: (0, 1),
                   0xFE03: (0, 1), 0xFE04: _ANY, 0xFE05: (0, 1)}
"""The SETTINGS a client may send, and their values: RFC 9113 6.5.2 (the window kept well
under its overflow), RFC 8441, and gRPC's own (found by re-attack: 0xFE03 or 0xFE05 above 1
is a connection error to gRPC). Any other identifier ends the picking."""


class FrameReader:
    """Reads the HTTP/2 frames a bot sends on its connection, in pieces of any size: a frame
    is a 9-byte header (its payload's length, 24 bits; its type; its flags; its stream) and
    the payload; the client's connection preface comes first.

    It counts the frames (the budget's ``FRAME_COST``), and picks out the gRPC messages the
    bot sends on its one stream (a 5-byte prefix, compressed or not and the length, then
    the message): ``ready`` holds each one with its number on the stream, the hello being
    the first. The match takes a bot's answer from here as it passes (stop 42: the wake-ups
    of gRPC's threads were a tenth of a decision), and gRPC, which gets the same bytes,
    hands on the same messages later, which the match then knows it has.

    It picks out only what gRPC would deliver (found by attack: an answer after a malformed
    frame, or in a padded one, was picked out where gRPC refused it): while the bot keeps
    to the plain path every gRPC library takes, one stream opened by one header block,
    its messages uncompressed in DATA frames without flags and within the stream's first
    window, SETTINGS (of known identifiers and values), PINGs and WINDOW_UPDATEs
    well-formed, one SETTINGS acknowledgement, and not more than one SETTINGS between two
    messages and one PING between two requests, as gRPC's ping policy and flow control
    allow (and the match hands it nothing to pick for on a call with a deadline, which gRPC
    may cancel with an answer unread). Anything else ends the picking for good, and
    gRPC's reading is then the only one the match goes by: a bot that strays loses its
    head start, nothing more. Bytes that are not HTTP/2 count as frames all the same
    (gRPC ends such a connection)."""

    def __init__(self, message_most: int = 16 * 1024) -> None:
        self.message_most = message_most
        """The longest message gRPC takes (the server's receive limit)."""
        self.preface = PREFACE_BYTES
        """Bytes of the connection preface still to come."""
        self.header = b""
        """The part of a frame's header read so far."""
        self.payload = 0
        """Bytes of the current frame's payload still to come."""
        self.picking = True
        """Whether messages are still picked out (False once the bot strays, for good)."""
        self.stream = 0
        """The bot's stream (0 until its HEADERS come)."""
        self.continued = False
        """Whether the stream's header block goes on in CONTINUATION frames."""
        self.kind = -1
        """The type of the current frame, when its payload is gathered (``gathered``)."""
        self.gathered: bytearray | None = None
        """The current frame's payload read so far, when the reader looks into it (DATA of
        the stream, SETTINGS, WINDOW_UPDATE: a bytearray, so that a frame read a byte at a
        time is not copied over and over)."""
        self.window = STREAM_WINDOW
        """DATA the stream may still carry."""
        self.increments = 0
        """WINDOW_UPDATE increments so far."""
        self.settings = 0
        """SETTINGS (not acknowledgements) since the stream's last message."""
        self.acks = 0
        """SETTINGS acknowledgements (gRPC's server sends its SETTINGS once)."""
        self.pings = 0
        """PINGs (not acknowledgements) since the last request (``granted``)."""
        self.message = b""
        """The start of the stream's next message, not complete yet."""
        self.messages = 0
        """The stream's messages complete so far."""
        self.ready: list[tuple[int, bytes]] = []
        """Messages picked out and not taken yet (``take``), with their numbers."""

    def read(self, data: bytes) -> int:
        """Read ``data``; the frames whose header completes in it."""
        frames, at, size = 0, 0, len(data)
        if self.preface:
            at = min(self.preface, size)
            self.preface -= at
        while at < size:
            if self.payload:
                step = min(self.payload, size - at)
                if self.gathered is not None:
                    self.gathered += data[at:at + step]
                self.payload -= step
                at += step
                if not self.payload and self.gathered is not None:
                    self._gathered()
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
            if self.picking:
                self._frame(header)
        return frames

    def take(self) -> list[tuple[int, bytes]]:
        """The messages picked out since the last call, with their numbers, in order."""
        ready, self.ready = self.ready, []
        return ready

    def _frame(self, header: bytes) -> None:
        kind, flags, length = header[3], header[4], self.payload
        stream = int.from_bytes(header[5:9], "big") & 0x7FFF_FFFF
        if length > FRAME_PAYLOAD_MOST:
            return self.stop()
        if self.continued:  # the header block goes on: nothing else may come between
            if kind != CONTINUATION or stream != self.stream:
                return self.stop()
            self.continued = not flags & END_HEADERS
            return None
        if kind == DATA:
            self.window -= length
            if stream != self.stream or not stream or flags or self.window < 0:
                return self.stop()
        elif kind == HEADERS:
            # The stream's one header block (its flags only END_HEADERS), on a client's id.
            if self.stream or not stream % 2 or flags & ~END_HEADERS:
                return self.stop()
            self.stream, self.continued = stream, not flags & END_HEADERS
            return None
        elif kind == SETTINGS:
            if stream or length % 6 or (flags & ACK and length):
                return self.stop()
            self.acks += bool(flags & ACK)
            self.settings += not flags & ACK
            if self.acks > 1 or self.settings > 1:  # found by re-attack: a second ACK is a
                return self.stop()  # connection error to gRPC
            if flags & ACK:
                return None
        elif kind == PING:
            if stream or length != 8:
                return self.stop()
            self.pings += not flags & ACK
            if self.pings > 1:
                return self.stop()
            return None
        elif kind == WINDOW_UPDATE:
            if stream not in (0, self.stream) or length != 4:
                return self.stop()
        else:
            return self.stop()
        if self.picking:
            self.kind, self.gathered = kind, bytearray()
            if not length:
                self._gathered()
        return None

    def granted(self) -> None:
        """A request went to the bot. gRPC's server forgives a client's PINGs each time it
        writes (its ping strikes: a fourth PING between two writes ends the connection);
        one PING between two requests keeps well within that, however the bytes meet
        (found by re-attack: counted between the bot's messages, four PINGs before as
        many answers in one write went through)."""
        self.pings = 0

    def _gathered(self) -> None:
        """The payload of the frame looked into is all read."""
        payload, self.gathered = bytes(self.gathered or b""), None
        if self.kind == DATA:
            self._data(payload)
        elif self.kind == SETTINGS:
            for at in range(0, len(payload), 6):
                low, high = _SETTING_RANGES.get(int.from_bytes(payload[at:at + 2], "big"),
                                                (1, 0))
                if not low <= int.from_bytes(payload[at + 2:at + 6], "big") <= high:
                    return self.stop()
        elif self.kind == WINDOW_UPDATE:
            increment = int.from_bytes(payload, "big") & 0x7FFF_FFFF
            self.increments += increment
            if not increment or self.increments > WINDOW_GRANTS_MOST:
                return self.stop()
        return None

    def _data(self, data: bytes) -> None:
        message = self.message + data if self.message else data
        while len(message) >= 5:
            length = int.from_bytes(message[1:5], "big")
            if message[0] or length > self.message_most:  # compressed, or too long
                return self.stop()
            if len(message) < 5 + length:
                break
            if len(self.ready) >= READY_MOST:  # far ahead of the referee
                return self.stop()
            self.messages += 1
            self.ready.append((self.messages, message[5:5 + length]))
            self.settings = 0
            message = message[5 + length:]
        self.message = message
        return None

    def stop(self) -> None:
        """Pick nothing more out: count only. Nor what this read picked out before: a
        frame that ends the connection makes gRPC drop the messages it holds unread (found
        by re-attack), and gRPC's reading brings whatever it does deliver."""
        self.picking = False
        self.gathered = None
        self.message = b""
        self.ready.clear()


class _Leg:
    """One way of a relayed connection: what ``source`` sends, passed on to ``sink``. When
    the sink takes no more, the leg stops reading the source until it does (so a bot that
    stops reading stalls the referee's writes in gRPC, where its deadline cuts them off)."""

    def __init__(self, relay: SeatRelay, source: socket.socket, sink: socket.socket,
                 count: Callable[[bytes], bool] | None = None) -> None:
        self.relay, self.source, self.sink, self.count = relay, source, sink, count
        """``count`` is told each read; False ends the connection."""
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
        if self.count is not None and not self.count(data):
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
    """Listens on ``path`` for the seat's bot, relays each connection to ``upstream`` (the
    seat's gRPC server), and calls ``on_flood`` once if the bot overspends its budget."""

    def __init__(self, loop: asyncio.AbstractEventLoop, path: Path, upstream: str,
                 on_flood: Callable[[int], None], message_most: int = 16 * 1024) -> None:
        self.loop = loop
        self.upstream = upstream
        self.on_flood = on_flood
        self.message_most = message_most
        """The longest message the seat's gRPC server takes (``FrameReader``)."""
        self.on_message: Callable[[int, bytes], None] | None = None
        """Told each message the seated bot sends, as it passes (``FrameReader``)."""
        self.balance = BUDGET_BYTES
        """Bytes the bot may still send (refilled by ``grant``)."""
        self.received = 0
        """Bytes the bot sent, in all."""
        self.flooded = False
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.setblocking(False)
        self.listener.bind(str(path))
        self.listener.listen(64)
        self.connections = 0
        """Connections relayed so far."""
        self.legs: tuple[_Leg, _Leg] | None = None
        """The connection relayed: the bot's way up, the server's way down."""
        self.frames = FrameReader(message_most)
        """The HTTP/2 frames of what the bot sends on its connection (new for each)."""
        loop.add_reader(self.listener.fileno(), self._accept)

    def grant(self) -> None:
        """A request went to the bot: it may answer."""
        balance = self.balance + GRANT_BYTES
        self.balance = BUDGET_BYTES if balance > BUDGET_BYTES else balance
        self.frames.granted()

    def seated(self, on_message: Callable[[int, bytes], None] | None = None) -> None:
        """The bot said hello with its seat's one-time token: no other connection can ever
        serve the seat, so none is taken (found by re-attack: a bot that kept a handle on
        its socket's path reconnected 25,000 times during a match after its folder was
        removed, each one closed by the loop). ``on_message`` is told each message it
        sends from now on, with its number on the stream, as the relay passes it on (if the
        bot made one connection only)."""
        self._stop_listening()
        # Which connection the hello came by is gRPC's to know: after a bot reconnected,
        # the one relayed now may not be it. Then nothing is picked out (found by review).
        self.on_message = on_message if self.connections == 1 else None
        if self.on_message is None:
            self.frames.stop()  # nobody to hand messages to: count only

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
        self.frames = FrameReader(self.message_most)
        self.connections += 1
        self.legs = (_Leg(self, bot, server, self._spend), _Leg(self, server, bot))

    def _listen_again(self) -> None:
        if self.listener.fileno() >= 0:
            self.loop.add_reader(self.listener.fileno(), self._accept)

    def _spend(self, data: bytes) -> bool:
        """Draw what the bot sent from its budget; past it, cut it off."""
        self.received += len(data)
        frames = self.frames
        self.balance -= len(data) + FRAME_COST * frames.read(data)
        if self.balance >= 0:
            if frames.ready:
                on_message = self.on_message
                for number, message in frames.take():
                    if on_message is not None:
                        on_message(number, message)
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
