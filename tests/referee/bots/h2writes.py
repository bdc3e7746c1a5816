"""A bot that speaks HTTP/2 by hand, to try the seat relay's own writing of the referee's
messages (``arena.referee.relay.SeatRelay.writes_itself``): ``python h2writes.py MODE``.

It says hello and answers each request with its first legal action, granting back what it
reads as a plain client does; each MODE bends one thing a client may do (or must not):

- ``first-stream-ended``: its first stream opened and ended with no message, Play on the
  next one (the relay must write on the stream the hello came by);
- ``ping-split``: a PING before each answer from the third on, its 17 bytes in two writes
  (so in two of the relay's reads);
- ``ping-each``: a PING with each answer from the third on, in the same write;
- ``tiny-window``: a stream window of 7 bytes, so every request comes in pieces;
- ``shrink``: at its fifth answer, its initial window cut to 0, then 50 bytes granted;
- ``zero-grant``: at its fifth answer, a WINDOW_UPDATE of 0, a protocol error for which
  gRPC ends the connection (so must the relay, which keeps grants from gRPC);
- ``stray-hangup``: a PRIORITY frame first (off the plain path: gRPC reads its answers, and
  the match plays on in its stream's task), then at its sixth answer it hangs up, which
  cancels that task while it may be writing the other bot's request.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import threading
import time

from arena.protocol import pb

MODE = sys.argv[1]
DATA, HEADERS, PRIORITY, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 2, 4, 6, 7, 8
END_STREAM, ACK, END_HEADERS = 1, 1, 4
INITIAL_WINDOW_SIZE = 4


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


def message(request: pb.PlayRequest, stream: int) -> bytes:
    body = request.SerializeToString()
    return frame(DATA, 0, stream, b"\x00" + struct.pack(">I", len(body)) + body)


def grant(size: int, stream: int) -> bytes:
    return (frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", size))
            + frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", size)))


sock = socket.socket(socket.AF_UNIX)
sock.connect(os.environ["ARENA_ADDRESS"].removeprefix("unix:"))
sending = threading.Lock()


def send(data: bytes) -> None:
    with sending:
        sock.sendall(data)


window = {"tiny-window": 7}.get(MODE)
send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(SETTINGS, 0, 0, b"" if window is None else
                                                 struct.pack(">HI", INITIAL_WINDOW_SIZE, window)))
stream = 1
if MODE == "stray-hangup":
    send(frame(PRIORITY, 0, 1, struct.pack(">IB", 0, 15)))
if MODE == "first-stream-ended":
    send(frame(HEADERS, END_HEADERS, 1, HEADER_BLOCK) + frame(DATA, END_STREAM, 1))
    time.sleep(0.3)
    stream = 3
hello = pb.PlayRequest(hello=pb.Hello(token=os.environ["ARENA_TOKEN"], bot_name="h2writes",
                                      protocol_version=1))
send(frame(HEADERS, END_HEADERS, stream, HEADER_BLOCK) + message(hello, stream))

answered = 0


def answer(request_id: int) -> None:
    global answered
    answered += 1
    data = message(pb.PlayRequest(decision=pb.Decision(request_id=request_id, action_index=0)),
                   stream)
    if answered >= 3 and MODE == "ping-split":
        ping = frame(PING, 0, 0, b"12345678")
        send(ping[:5])
        time.sleep(0.02)
        send(ping[5:])
    if answered >= 3 and MODE == "ping-each":
        data = frame(PING, 0, 0, answered.to_bytes(8, "big")) + data
    if answered == 5 and MODE == "shrink":
        send(frame(SETTINGS, 0, 0, struct.pack(">HI", INITIAL_WINDOW_SIZE, 0)))
        time.sleep(0.05)
        send(frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", 50)))
    if answered == 5 and MODE == "zero-grant":
        data += frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0))
    send(data)
    if answered == 6 and MODE == "stray-hangup":
        sock.shutdown(socket.SHUT_RDWR)
        os._exit(0)


received, messages = b"", b""
with sock:
    while chunk := sock.recv(1 << 16):
        received += chunk
        while len(received) >= 9 and len(received) >= 9 + int.from_bytes(received[:3], "big"):
            size = int.from_bytes(received[:3], "big")
            kind, flags, on = received[3], received[4], int.from_bytes(received[5:9], "big")
            payload, received = received[9:9 + size], received[9 + size:]
            if kind == SETTINGS and not flags & ACK:
                send(frame(SETTINGS, ACK, 0))
            elif kind == PING and not flags & ACK:
                send(frame(PING, ACK, 0, payload))
            elif kind == GOAWAY:
                sys.exit(f"GOAWAY {payload[8:]!r}")
            elif kind == DATA:
                if on != stream:
                    sys.exit(f"DATA on stream {on}, not {stream}")
                if size:
                    send(grant(size, stream))
                messages += payload
                while len(messages) >= 5 and len(messages) >= 5 + int.from_bytes(
                        messages[1:5], "big"):
                    length = int.from_bytes(messages[1:5], "big")
                    response = pb.PlayResponse.FromString(messages[5:5 + length])
                    messages = messages[5 + length:]
                    if response.HasField("decision_request"):
                        answer(response.decision_request.request_id)
                    elif response.HasField("match_end"):
                        send(frame(DATA, END_STREAM, stream))
                        sys.exit(0)
