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

The relay runs on the match's event loop (``add_reader``): no thread. As it passes a seated
bot's bytes on, it also hands the match each message the bot sends on its stream
(``FrameReader``, ``seated``): the match has an answer in the loop turn it arrives in,
without waiting for gRPC's threads to read it and wake the loop again.

Since stop 43 the relay also carries the match's side of a seated bot's stream, while the
bot keeps to the plain path: gRPC opens the call, reads the hello, writes the response's
headers and the match's start, and ends the call with its trailers; in between, the relay
writes the referee's messages to the bot itself (``writes_itself``, ``write``: DATA frames
as gRPC frames them, within the windows the bot grants, following its SETTINGS and
WINDOW_UPDATEs and gRPC's own DATA), and keeps from gRPC the answers the match took (their
bytes granted back to the bot), the bot's grants and its PINGs (answered by the relay).
A decision then costs one read of the bot's socket and one write to the next bot's, where
it cost gRPC's write, a hop through the relay, and gRPC's reading of a copy on its
threads. gRPC numbers what it still reads after the messages kept (``kept``), and once it
has written no DATA for the relay's first write it never writes DATA again, so the bot's
windows are the relay's alone to spend.
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


DATA, HEADERS, RST_STREAM, SETTINGS, PING, WINDOW_UPDATE, CONTINUATION = (
    0x0, 0x1, 0x3, 0x4, 0x6, 0x8, 0x9)
"""The HTTP/2 frame types the relay looks into (RFC 9113, section 6). All but RST_STREAM
are the plain path's: any other (RST_STREAM, PRIORITY, PUSH_PROMISE, GOAWAY, unknown
types) ends the picking."""
END_HEADERS, ACK, END_STREAM = 0x4, 0x1, 0x1
INITIAL_WINDOW_SIZE = 0x4
"""The SETTINGS identifier of a peer's initial stream window (RFC 9113, 6.5.2)."""
DEFAULT_WINDOW = 65_535
"""Every HTTP/2 window's size until SETTINGS or WINDOW_UPDATE say otherwise."""
CREDIT_MOST = 16 * 1024
"""The bytes of a bot's kept messages granted back at once, at most, when no message to it
goes first (a grant rides along with the next one): far within the window it sends in."""
FRAME_PAYLOAD_MOST = 16 * 1024
"""The largest frame a client may send gRPC's server (SETTINGS_MAX_FRAME_SIZE's default,
which it keeps)."""
STREAM_WINDOW = DEFAULT_WINDOW
"""The DATA a client may send before gRPC's server grants more (its initial windows, which
it keeps: no bandwidth probe); the reader does not follow the grants, and stops there."""
WINDOW_MOST = (1 << 31) - 1
"""The most a flow-control window may hold (RFC 9113, 6.9.1)."""
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


class _Frames:
    """A byte stream cut into HTTP/2 frames, read in pieces of any size: a frame is a 9-byte
    header (its payload's length, 24 bits; its type; its flags; its stream), then the
    payload (RFC 9113, 4.1). What each frame means is the subclass's (``_frame``,
    ``_payload``)."""

    def __init__(self) -> None:
        self.header = b""
        """The part of a frame's header read so far."""
        self.payload = 0
        """Bytes of the current frame's payload still to come."""
        self.whole = -1
        """Where the current frame starts in this read, if all of it is in it; else -1."""

    def read(self, data: bytes, at: int = 0) -> int:
        """Read ``data`` from ``at``; the frames whose header completes in it."""
        frames, size = 0, len(data)
        while at < size:
            if self.payload:
                step = min(self.payload, size - at)
                self.payload -= step
                self._payload(data, at, step)
                at += step
                continue
            start = -1 if self.header else at
            piece = data[at:at + 9 - len(self.header)]
            at += len(piece)
            header = self.header + piece
            if len(header) < 9:
                self.header = header
                break
            self.header = b""
            self.payload = int.from_bytes(header[:3], "big")
            self.whole = start if start >= 0 and at + self.payload <= size else -1
            frames += 1
            self._frame(header)
        return frames

    def _frame(self, header: bytes) -> None:
        """A frame's header read, its payload (``payload`` bytes) to come."""

    def _payload(self, data: bytes, at: int, step: int) -> None:
        """``step`` bytes of the current frame's payload, at ``at`` in ``data`` (what is
        left of it after them: ``payload``)."""


class FrameReader(_Frames):
    """Reads the HTTP/2 frames a bot sends on its connection (``_Frames``); the client's
    connection preface comes first.

    It counts the frames (the budget's ``FRAME_COST``), and picks out the gRPC messages the
    bot sends on its one stream (a 5-byte prefix, compressed or not and the length, then
    the message): ``ready`` holds each one with its number on the stream, the hello being
    the first. The match takes a bot's answer from here as it passes (stop 42: the wake-ups
    of gRPC's threads were a tenth of a decision). While ``keeping``, the frames of the
    messages it took are kept from gRPC (``kept``); a message passed on reaches gRPC, which
    hands it on later, and the match knows it by its number if it has it already. The
    reader also follows what the relay's own writing depends on, picking or not: the bot's
    grants (``granted_bytes``, ``initial_window``), its PINGs, its stream's reset.

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
        super().__init__()
        self.message_most = message_most
        """The longest message gRPC takes (the server's receive limit)."""
        self.preface = PREFACE_BYTES
        """Bytes of the connection preface still to come."""
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
        self.keeping = False
        """Whether the stream's DATA frames whose messages are all picked out are kept from
        gRPC (``SeatRelay.seated``): until the first that is not, for good."""
        self.kept: list[tuple[int, int, int]] = []
        """This read's frames gRPC need not see, whole in it: (start, end, the number of
        the last message in it), 0 for a PING or WINDOW_UPDATE."""
        self.frame_stream = 0
        """The current frame's stream."""
        self.granted_bytes = [0, 0]
        """What the bot's WINDOW_UPDATEs granted, on the connection and on its stream, not
        taken by the relay yet (``SeatRelay``: its own messages go in the same windows)."""
        self.initial_window = DEFAULT_WINDOW
        """The bot's SETTINGS_INITIAL_WINDOW_SIZE, which a change of shifts its stream's
        window by the difference (RFC 9113, 6.9.2)."""
        self.pinged: list[bytes] = []
        """This read's PINGs (whole in it), which the relay may answer itself."""
        self.reset = False
        """Whether the bot reset its stream (RST_STREAM)."""

    def read(self, data: bytes, at: int = 0) -> int:
        """Read ``data``; the frames whose header completes in it."""
        self.kept, self.pinged = [], []
        if self.preface:
            at = min(self.preface, len(data))
            self.preface -= at
        return super().read(data, at)

    def _payload(self, data: bytes, at: int, step: int) -> None:
        if self.gathered is not None:
            self.gathered += data[at:at + step]
            if not self.payload:
                self._gathered()

    def take(self) -> list[tuple[int, bytes]]:
        """The messages picked out since the last call, with their numbers, in order."""
        ready, self.ready = self.ready, []
        return ready

    def _frame(self, header: bytes) -> None:
        kind, flags, length = header[3], header[4], self.payload
        stream = self.frame_stream = int.from_bytes(header[5:9], "big") & 0x7FFF_FFFF
        if self.picking and not self._plain(kind, flags, length, stream):
            self.stop()
        # What the relay follows whether or not it picks: the flow control its own messages
        # share with gRPC's, the PINGs it may answer, the stream's end.
        if kind == DATA:
            gather = self.picking
            if not gather and self.keeping and stream == self.stream:
                self.keeping = False  # a DATA frame passed on: gRPC counts its messages
        elif kind == SETTINGS:
            gather = not flags & ACK and not stream and 0 < length <= FRAME_PAYLOAD_MOST
        elif kind == WINDOW_UPDATE:
            gather = length == 4
        elif kind == PING:
            gather = length == 8 and not flags & ACK and not stream and self.whole >= 0
        else:
            if kind == RST_STREAM and stream and stream == self.stream:
                self.reset = True
            return None
        if gather:
            self.kind, self.gathered = kind, bytearray()
            if not length:
                self._gathered()
        return None

    def _plain(self, kind: int, flags: int, length: int, stream: int) -> bool:
        """Whether the frame keeps to the plain path (the class's docstring)."""
        if length > FRAME_PAYLOAD_MOST:
            return False
        if self.continued:  # the header block goes on: nothing else may come between
            if kind != CONTINUATION or stream != self.stream:
                return False
            self.continued = not flags & END_HEADERS
            return True
        if kind == DATA:
            self.window -= length
            return bool(stream == self.stream and stream and not flags and self.window >= 0)
        if kind == HEADERS:
            # The stream's one header block (its flags only END_HEADERS), on a client's id.
            if self.stream or not stream % 2 or flags & ~END_HEADERS:
                return False
            self.stream, self.continued = stream, not flags & END_HEADERS
            return True
        if kind == SETTINGS:
            if stream or length % 6 or (flags & ACK and length):
                return False
            self.acks += bool(flags & ACK)
            self.settings += not flags & ACK
            # found by re-attack: a second ACK is a connection error to gRPC
            return self.acks <= 1 and self.settings <= 1
        if kind == PING:
            if stream or length != 8:
                return False
            self.pings += not flags & ACK
            return self.pings <= 1
        if kind == WINDOW_UPDATE:
            return stream in (0, self.stream) and length == 4
        return False

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
        kind, whole = self.kind, self.whole
        if kind == DATA:
            clean, before = not self.message, self.messages
            self._data(payload)
            if self.keeping:
                if self.picking and whole >= 0 and clean and not self.message \
                        and self.messages > before:
                    self.kept.append((whole, whole + 9 + len(payload), self.messages))
                else:
                    self.keeping = False
        elif kind == SETTINGS:
            for at in range(0, len(payload) - 5, 6):
                identifier = int.from_bytes(payload[at:at + 2], "big")
                value = int.from_bytes(payload[at + 2:at + 6], "big")
                low, high = _SETTING_RANGES.get(identifier, (1, 0))
                if self.picking and not low <= value <= high:
                    self.stop()
                if identifier == INITIAL_WINDOW_SIZE:
                    self.granted_bytes[1] += value - self.initial_window
                    self.initial_window = value
        elif kind == WINDOW_UPDATE:
            increment = int.from_bytes(payload, "big") & 0x7FFF_FFFF
            stream = self.frame_stream
            if self.picking:
                self.increments += increment
                if not increment or self.increments > WINDOW_GRANTS_MOST:
                    self.stop()
            if stream in (0, self.stream):
                self.granted_bytes[stream != 0] += increment
                if whole >= 0 and increment:  # (gRPC ends the connection for a grant of 0)
                    self.kept.append((whole, whole + 13, 0))
        elif kind == PING:
            self.pinged.append(payload)
            self.kept.append((whole, whole + 17, 0))
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

    def not_taken(self, number: int) -> None:
        """The match did not take message ``number``: gRPC must deliver it, and what comes
        after it, so nothing from it on is kept from gRPC."""
        self.keeping = False
        self.kept = [each for each in self.kept if not each[2] or each[2] < number]

    def stop(self) -> None:
        """Pick nothing more out: count only. Nor what this read picked out before: a
        frame that ends the connection makes gRPC drop the messages it holds unread (found
        by re-attack), and gRPC's reading brings whatever it does deliver (so this read's
        DATA frames are all passed on)."""
        self.picking = False
        self.gathered = None
        self.message = b""
        self.ready.clear()
        self.keeping = False
        self.kept = [each for each in self.kept if not each[2]]


class _ServerFrames(_Frames):
    """Follows the frames gRPC's server sends the bot (``_Frames``): where one ends (the
    relay puts its own only between two), whether the stream's response has begun or
    ended, and the DATA sent, which spends the windows the relay's own messages share."""

    def __init__(self) -> None:
        super().__init__()
        self.stream = 0
        """The bot's stream (``FrameReader.stream``)."""
        self.opened = False
        """Whether gRPC sent the response's headers on the bot's stream."""
        self.sent = 0
        """DATA payload bytes sent on the connection."""
        self.stream_sent = 0
        """DATA payload bytes sent on the bot's stream."""
        self.continued = False
        """Whether a header block goes on in CONTINUATION frames (nothing may come
        between)."""
        self.ended = False
        """Whether gRPC ended the stream (its trailers, or a reset)."""

    @property
    def between(self) -> bool:
        """Whether what was read so far ends where a frame may come."""
        return not self.header and not self.payload and not self.continued

    def _frame(self, header: bytes) -> None:
        kind, flags, length, stream = header[3], header[4], self.payload, self.stream
        on_stream = stream and int.from_bytes(header[5:9], "big") & 0x7FFF_FFFF == stream
        if kind == DATA:
            self.sent += length
            if on_stream:
                self.stream_sent += length
        elif kind in (HEADERS, CONTINUATION):
            self.continued = not flags & END_HEADERS
            if on_stream and kind == HEADERS:
                self.ended = self.opened and bool(flags & END_STREAM)  # its trailers
                self.opened = True
        elif kind == RST_STREAM and on_stream:
            self.ended = True


def _frame_header(length: int, kind: int, flags: int, stream: int) -> bytes:
    return length.to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big")


class _Leg:
    """One way of a relayed connection: what ``source`` sends, passed on to ``sink``. When
    the sink takes no more, the leg stops reading the source until it does (so a bot that
    stops reading stalls the referee's writes, where its deadline cuts them off)."""

    def __init__(self, relay: SeatRelay, source: socket.socket, sink: socket.socket,
                 passing: Callable[[bytes], bytes | None]) -> None:
        self.relay, self.source, self.sink, self.passing = relay, source, sink, passing
        """``passing`` is told each read: what to pass on of it; None ends the
        connection."""
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
        passed = self.passing(data)
        if passed is None or relay.legs is None:
            return
        if passed:
            self.put(passed)

    def put(self, data: bytes) -> None:
        """Pass ``data`` on, after what is pending."""
        if self.pending:  # the sink is full: sent once it takes more (``writable``)
            self.pending += data
            return
        relay = self.relay
        self.pending = relay.send(self.sink, data)
        if self.pending and relay.legs is not None:
            relay.loop.remove_reader(self.source.fileno())
            relay.loop.add_writer(self.sink.fileno(), self.writable)
        elif relay.sent is not None:
            relay._check_sent()

    def writable(self) -> None:
        relay = self.relay
        if relay.legs is None:
            return
        self.pending = relay.send(self.sink, self.pending)
        if self.pending or relay.legs is None:
            return
        relay.loop.remove_writer(self.sink.fileno())
        if relay.sent is not None:
            relay._check_sent()
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
        self.on_message: Callable[[int, bytes], bool] | None = None
        """Told each message the seated bot sends, as it passes (``FrameReader``): whether
        the match took it."""
        self.on_read: Callable[[], None] | None = None
        """Told once a read's messages are all handed on, if the match took one: only then
        may it play on (found by re-attack: playing on at the first, a guess at the next
        request's answer in the same read was taken as that answer)."""
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
        self._new_connection()
        loop.add_reader(self.listener.fileno(), self._accept)

    def _new_connection(self) -> None:
        """What the relay follows of one connection, from its start."""
        self.server = _ServerFrames()
        """The frames gRPC sends the bot."""
        self.may_write = False
        """Whether the relay may take over the referee's messages (``seated``)."""
        self.writing = False
        """Whether it has (``writes_itself``): for good, on this connection."""
        self.to_grpc = 0
        """Message bytes (their 5-byte prefixes included) gRPC was given to send."""
        self.granted = [DEFAULT_WINDOW, DEFAULT_WINDOW]
        """What the bot let be sent to it, in all: on the connection, on its stream."""
        self.written = 0
        """The DATA bytes the relay sent the bot itself."""
        self.outgoing = bytearray()
        """The referee's messages (prefixed) the bot's windows do not let through yet."""
        self.own = b""
        """The relay's frames waiting for the end of a frame of gRPC's."""
        self.credit = 0
        """DATA bytes of the messages kept from gRPC, not granted back to the bot yet."""
        self.sent: asyncio.Future[bool] | None = None
        """Told when the referee's messages are all in the bot's socket (``write``)."""
        self.kept = 0
        """The stream's messages kept from gRPC, its second to its ``kept + 1``-th (the
        match took them from the relay): gRPC's n-th message is the stream's
        ``n + kept``-th."""

    def grant(self) -> None:
        """A request went to the bot: it may answer."""
        balance = self.balance + GRANT_BYTES
        self.balance = BUDGET_BYTES if balance > BUDGET_BYTES else balance
        self.frames.granted()

    def seated(self, on_message: Callable[[int, bytes], bool] | None = None,
               on_read: Callable[[], None] | None = None) -> None:
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
        self.on_read = on_read
        frames = self.frames
        if self.on_message is None:
            frames.stop()  # nobody to hand messages to: count only
            return
        # The hello was the stream's first message, and nothing strayed (found by attack: a
        # bot whose first stream was another call's had its requests written there): the
        # relay may write on that stream, and keep from gRPC the messages the match takes
        # from now on (unless one besides the hello went by already: gRPC would count it
        # after them).
        self.may_write = frames.keeping = (
            frames.picking and frames.messages == 1 and not frames.message)

    def writes_itself(self) -> bool:
        """Whether the relay sends the referee's messages to the bot itself (``write``)
        rather than gRPC: once gRPC has begun the stream's response and all it was given
        went by, on a seated bot's one connection. For good: gRPC then never sends DATA
        again, so the windows the bot grants are the relay's alone to spend."""
        if not self.writing and self.may_write and self.legs is not None:
            server = self.server
            self.writing = server.opened and server.stream_sent == self.to_grpc
        return self.writing

    def write(self, message: bytes) -> asyncio.Future[bool] | bool:
        """Send the bot a message on its stream as gRPC would (a DATA frame of the 5-byte
        prefix and the message, as its windows allow): True once its socket took it all,
        False when the stream is gone, else a future of either (a bot that stops reading
        holds it, as it would hold gRPC's write, until the match gives up on it)."""
        if self.legs is None or self.frames.reset or self.server.ended or not self.may_write:
            return False
        self.outgoing += b"\x00" + len(message).to_bytes(4, "big") + message
        self._emit()
        if self.legs is None:
            return False
        if not self.outgoing and not self.own and not self.legs[1].pending:
            return True
        if self.sent is None or self.sent.done():
            self.sent = self.loop.create_future()
        return self.sent

    def abandon(self) -> None:
        """The match gave up on a write the bot did not take: nothing more is written to
        it (found by attack: what was held back went out after gRPC's trailers)."""
        self.may_write = False
        self._drop_unsent()

    def _drop_unsent(self) -> None:
        """Nothing held back is written: the write under way never ends in the socket."""
        self.outgoing.clear()
        self.own = b""
        self._all_sent(False)

    def _check_sent(self) -> None:
        legs = self.legs
        if self.sent is not None and legs is not None and not self.outgoing and not self.own \
                and not legs[1].pending:
            self._all_sent(True)

    def _all_sent(self, sent: bool) -> None:
        """What the bot was written is all in its socket (True), or never will be."""
        waiter, self.sent = self.sent, None
        if waiter is not None and not waiter.done():
            waiter.set_result(sent)

    def _emit(self, own: bytes = b"") -> None:
        """Send the bot ``own`` frames, the grants of the messages kept from gRPC, and what
        the windows let through of the referee's messages, between two frames of gRPC's."""
        parts = [own] if own else []
        stream = self.frames.stream
        credit = self.credit
        if credit:
            self.credit = 0
            self.frames.window += credit  # the reader's view of the stream's window
            grant = credit.to_bytes(4, "big")
            parts.append(_frame_header(4, WINDOW_UPDATE, 0, 0) + grant
                         + _frame_header(4, WINDOW_UPDATE, 0, stream) + grant)
        outgoing = self.outgoing
        if outgoing:
            room = min(self._windows())
            while outgoing and room > 0:
                size = min(len(outgoing), room, FRAME_PAYLOAD_MOST)
                parts.append(_frame_header(size, DATA, 0, stream) + bytes(outgoing[:size]))
                del outgoing[:size]
                self.written += size
                room -= size
        legs = self.legs
        if legs is None:
            return
        # gRPC's own frames need not wait for the messages the windows hold back: its
        # trailers, the only ones that must come after them, come once the match's last
        # write is done.
        if parts:
            data = b"".join(parts)
            if self.own or not self.server.between:
                self.own += data
            else:
                legs[1].put(data)
        self._check_sent()

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
        self._new_connection()
        self.connections += 1
        self.legs = (_Leg(self, bot, server, self._from_bot),
                     _Leg(self, server, bot, self._from_server))

    def _listen_again(self) -> None:
        if self.listener.fileno() >= 0:
            self.loop.add_reader(self.listener.fileno(), self._accept)

    def _from_bot(self, data: bytes) -> bytes | None:
        """Draw what the bot sent from its budget (past it, cut it off: None); hand on its
        messages; what to pass on to gRPC."""
        self.received += len(data)
        frames = self.frames
        self.balance -= len(data) + FRAME_COST * frames.read(data)
        if self.balance < 0:
            self.flooded = True
            self.end()
            self.on_flood(self.received)
            return None
        taken = False
        if frames.ready:
            on_message = self.on_message
            for number, message in frames.take():
                if on_message is not None and on_message(number, message):
                    taken = True
                else:
                    frames.not_taken(number)
        granted = frames.granted_bytes
        if granted[0] or granted[1]:
            self.granted[0] += granted[0]
            self.granted[1] += granted[1]
            frames.granted_bytes = [0, 0]
            if self.writing and self._overflowed():  # as gRPC would: a connection error
                self.end()
                return None
        if frames.kept:
            data = self._keep(data, frames.kept)
        # Kept bytes are granted back with the next message, or now past CREDIT_MOST: also
        # before the relay writes (found in CI: a bot's messages kept before its first
        # request were never granted back, and its window shut at 64 KB).
        if self.credit >= CREDIT_MOST or (self.writing and (
                frames.pinged or (self.outgoing and (granted[0] or granted[1])))):
            self._emit(b"".join(_frame_header(8, PING, ACK, 0) + payload
                                for payload in frames.pinged) if self.writing else b"")
        if taken and self.on_read is not None and self.legs is not None:
            self.on_read()  # (the read's grants and kept frames counted first)
        return data

    def _windows(self) -> tuple[int, int]:
        """What the bot's windows let be sent to it now: on the connection, on its stream
        (its grants less gRPC's DATA and the relay's)."""
        server, granted, written = self.server, self.granted, self.written
        return granted[0] - server.sent - written, granted[1] - server.stream_sent - written

    def _overflowed(self) -> bool:
        """Whether the bot granted more than a window may hold (RFC 9113, 6.9.1), which
        gRPC, kept from its grants once the relay writes, no longer sees."""
        return max(self._windows()) > WINDOW_MOST

    def _keep(self, data: bytes, kept: list[tuple[int, int, int]]) -> bytes:
        """``data`` without the frames gRPC need not see: the DATA frames of the messages
        the match took (their bytes granted back to the bot by the relay) and, once the
        relay writes the referee's messages itself, the bot's WINDOW_UPDATEs (its own to
        spend) and PINGs (which it answers: gRPC, no longer writing, would count them
        against the bot, found by review)."""
        pieces, at = [], 0
        for start, end, number in kept:
            if number:
                self.kept = number - 1
                self.credit += end - start - 9
            elif not self.writing:
                continue
            pieces.append(data[at:start])
            at = end
        if not at:
            return data
        pieces.append(data[at:])
        return b"".join(pieces)

    def _from_server(self, data: bytes) -> bytes:
        """What to pass on to the bot of what gRPC sent: all of it, and the relay's own
        frames once one of gRPC's ends."""
        server = self.server
        server.stream = self.frames.stream
        server.read(data)
        if server.ended and (self.outgoing or self.own):  # nothing may follow its end
            self._drop_unsent()
        elif self.own and server.between:
            data, self.own = data + self.own, b""
        return data

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
        self._drop_unsent()
        for sock in (legs[0].source, legs[0].sink):
            if sock.fileno() >= 0:
                self.loop.remove_reader(sock.fileno())
                self.loop.remove_writer(sock.fileno())
                sock.close()

    def close(self) -> None:
        self.end()
        self._stop_listening()
