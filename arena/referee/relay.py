"""A seat's socket: the bytes between its bot and the referee's gRPC server, counted.

Found by attack: gRPC parses every HTTP/2 frame a bot sends on its own connection
(WINDOW_UPDATE, SETTINGS, PRIORITY, RST_STREAM, CONTINUATION...) on threads the whole
referee shares, and it bounds none of them but PINGs. A bot writing 13-byte frames as fast
as the referee could parse them (blocking writes: no CPU of its own, so a sandbox's
off-turn throttle does not slow it) kept a gRPC thread busy, its opponent's answers were
read late and its requests written late, and the opponent was disqualified for timeouts.

So the bot does not reach gRPC directly: the referee listens on the seat's socket itself
and relays the bytes both ways over a private socket, and what the bot sends is drawn from
a byte budget that each request it is asked refills (``grant``). A bot sends a hello and
one short answer a request (plus the odd flow-control frame); one that sends more than the
budget is cut off, and the match records it FLOODED. The budget bounds what a bot can make
gRPC parse, whatever the frames. One connection at a time: a second one is closed at once.

The relay runs on the match's event loop (``add_reader``): no thread, and a message from
the referee is passed on in the loop turn after gRPC wrote it.
"""

from __future__ import annotations

import asyncio
import contextlib
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


class SeatRelay:
    """Listens on ``path`` for the seat's bot, relays each connection to ``upstream`` (the
    seat's gRPC server), and calls ``on_flood`` once if the bot overspends its budget."""

    def __init__(self, loop: asyncio.AbstractEventLoop, path: Path, upstream: str,
                 on_flood: Callable[[int], None]) -> None:
        self.loop = loop
        self.upstream = upstream
        self.on_flood = on_flood
        self.balance = BUDGET_BYTES
        """Bytes the bot may still send (refilled by ``grant``)."""
        self.received = 0
        """Bytes the bot sent, in all."""
        self.flooded = False
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.setblocking(False)
        self.listener.bind(str(path))
        self.listener.listen(64)
        self.bot: socket.socket | None = None
        self.server: socket.socket | None = None
        self.to_server = b""
        """Bytes from the bot the server's socket has not taken yet (it stalls reading)."""
        self.to_bot = b""
        """Bytes from the server the bot's socket has not taken yet (the bot stalls)."""
        self.bot_done = False
        """The bot shut its side: nothing more comes from it."""
        self.server_done = False
        loop.add_reader(self.listener.fileno(), self._accept)

    def grant(self) -> None:
        """A request went to the bot: it may answer."""
        balance = self.balance + GRANT_BYTES
        self.balance = BUDGET_BYTES if balance > BUDGET_BYTES else balance

    # -- connections ----------------------------------------------------------------------

    def _accept(self) -> None:
        try:
            bot, _ = self.listener.accept()
        except OSError:  # gone before it was taken, or out of descriptors: it may retry
            return
        if self.bot is not None and self._hung_up(self.bot):
            self._end()  # closed, its end not read yet: a bot that reconnects takes its place
        if self.bot is not None or self.flooded:
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
        self.bot, self.server = bot, server
        self.bot_done = self.server_done = False
        self.to_server = self.to_bot = b""
        self.loop.add_reader(bot.fileno(), self._from_bot)
        self.loop.add_reader(server.fileno(), self._from_server)

    def _from_bot(self) -> None:
        bot, server = self.bot, self.server
        if bot is None or server is None:  # ended earlier in this turn of the loop
            return
        try:
            data = bot.recv(RELAY_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the bot shut its side: so does its connection to the server
            self.loop.remove_reader(bot.fileno())
            self.bot_done = True
            if not self.to_server:
                self._shut(server)
            self._end_if_done()
            return
        self.received += len(data)
        self.balance -= len(data)
        if self.balance < 0:
            self.flooded = True
            self._end()
            self.on_flood(self.received)
            return
        self.to_server = self._send(server, self.to_server + data)
        if self.to_server:  # the server reads no faster: stop reading the bot until it does
            self.loop.remove_reader(bot.fileno())
            self.loop.add_writer(server.fileno(), self._drain_to_server)

    def _from_server(self) -> None:
        bot, server = self.bot, self.server
        if bot is None or server is None:
            return
        try:
            data = server.recv(RELAY_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.loop.remove_reader(server.fileno())
            self.server_done = True
            if not self.to_bot:
                self._shut(bot)
            self._end_if_done()
            return
        self.to_bot = self._send(bot, self.to_bot + data)
        if self.to_bot:  # the bot stopped reading: so do we, and gRPC's writes stall
            self.loop.remove_reader(server.fileno())
            self.loop.add_writer(bot.fileno(), self._drain_to_bot)

    def _drain_to_server(self) -> None:
        server, bot = self.server, self.bot
        if bot is None or server is None:
            return
        self.to_server = self._send(server, self.to_server)
        if not self.to_server:
            self.loop.remove_writer(server.fileno())
            if self.bot_done:
                self._shut(server)
                self._end_if_done()
            else:
                self.loop.add_reader(bot.fileno(), self._from_bot)

    def _drain_to_bot(self) -> None:
        server, bot = self.server, self.bot
        if bot is None or server is None:
            return
        self.to_bot = self._send(bot, self.to_bot)
        if not self.to_bot:
            self.loop.remove_writer(bot.fileno())
            if self.server_done:
                self._shut(bot)
                self._end_if_done()
            else:
                self.loop.add_reader(server.fileno(), self._from_server)

    def _send(self, to: socket.socket, data: bytes) -> bytes:
        """Send what the socket takes now; the rest. A broken socket takes everything (the
        other side's reader finds it closed)."""
        try:
            sent = to.send(data)
        except BlockingIOError:
            return data
        except OSError:
            self._end()
            return b""
        return data[sent:]

    def _hung_up(self, bot: socket.socket) -> bool:
        """Whether the bot closed this connection (the rest of what it sent passed on)."""
        while True:
            try:
                if not bot.recv(1, socket.MSG_PEEK):
                    return True
            except BlockingIOError:
                return False
            except OSError:
                return True
            self._from_bot()  # data still to pass on before its end
            if self.bot is not bot:
                return True

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)

    def _end_if_done(self) -> None:
        if self.bot_done and self.server_done:
            self._end()

    def _end(self) -> None:
        """Close the connection (both sockets); the next one may come."""
        for sock in (self.bot, self.server):
            if sock is None or sock.fileno() < 0:
                continue
            self.loop.remove_reader(sock.fileno())
            self.loop.remove_writer(sock.fileno())
            sock.close()
        self.bot = self.server = None
        self.to_server = self.to_bot = b""

    def close(self) -> None:
        self._end()
        if self.listener.fileno() >= 0:
            self.loop.remove_reader(self.listener.fileno())
            self.listener.close()
