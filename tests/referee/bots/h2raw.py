"""HTTP/2 by hand for the test bots that bend it (``h2flood.py``, ``h2client.py``): frames,
the Play call's header block, and a connection that answers the referee's SETTINGS and
PINGs, grants back what it reads and yields each message on the stream."""

from __future__ import annotations

import os
import socket
import struct
import threading
from collections.abc import Iterator

from arena.protocol import pb

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = (
    0, 1, 2, 3, 4, 6, 7, 8)
END_STREAM, ACK, END_HEADERS = 1, 1, 4
INITIAL_WINDOW_SIZE = 4
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(
        ">I", stream) + payload


def header(name: bytes, value: bytes) -> bytes:
    """An HPACK literal header field, not indexed, with a new name."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


HEADER_BLOCK = b"".join(header(name, value) for name, value in (
    (b":method", b"POST"), (b":scheme", b"http"),
    (b":path", b"/uno_arena.v1.RefereeService/Play"), (b":authority", b"localhost"),
    (b"content-type", b"application/grpc"), (b"te", b"trailers")))
"""The Play call's request headers."""


def message(request: pb.PlayRequest, stream: int = 1) -> bytes:
    """A gRPC message in a DATA frame of its own."""
    body = request.SerializeToString()
    return frame(DATA, 0, stream, b"\x00" + struct.pack(">I", len(body)) + body)


def grant(size: int, stream: int) -> bytes:
    """WINDOW_UPDATEs of ``size`` on the connection and on ``stream``."""
    return (frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", size))
            + frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", size)))


def hello(name: str) -> pb.PlayRequest:
    return pb.PlayRequest(hello=pb.Hello(token=os.environ["ARENA_TOKEN"], bot_name=name,
                                         protocol_version=1))


class Connection:
    """The bot's connection to its seat's socket; ``send`` keeps frames whole across
    threads."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(os.environ["ARENA_ADDRESS"].removeprefix("unix:"))
        self.sending = threading.Lock()
        self.goaway = b""
        """The referee's GOAWAY payload, if it sent one."""

    def send(self, data: bytes) -> None:
        with self.sending:
            self.sock.sendall(data)

    def responses(self, stream: int) -> Iterator[pb.PlayResponse]:
        """Each message on ``stream``, until the connection ends or a GOAWAY; the referee's
        SETTINGS and PINGs answered, what it sends granted back."""
        received, messages = b"", b""
        while chunk := self.sock.recv(1 << 16):
            received += chunk
            while len(received) >= 9 and len(received) >= 9 + int.from_bytes(received[:3],
                                                                               "big"):
                size = int.from_bytes(received[:3], "big")
                kind, flags, on = received[3], received[4], int.from_bytes(received[5:9], "big")
                payload, received = received[9:9 + size], received[9 + size:]
                if kind == SETTINGS and not flags & ACK:
                    self.send(frame(SETTINGS, ACK, 0))
                elif kind == PING and not flags & ACK:
                    self.send(frame(PING, ACK, 0, payload))
                elif kind == GOAWAY:
                    self.goaway = payload
                    return
                elif kind == DATA:
                    if on != stream:
                        raise SystemExit(f"DATA on stream {on}, not {stream}")
                    if size:
                        self.send(grant(size, stream))
                    messages += payload
                    while len(messages) >= 5 and len(messages) >= 5 + int.from_bytes(
                            messages[1:5], "big"):
                        length = int.from_bytes(messages[1:5], "big")
                        yield pb.PlayResponse.FromString(messages[5:5 + length])
                        messages = messages[5 + length:]
