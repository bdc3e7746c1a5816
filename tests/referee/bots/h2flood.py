"""A bot that speaks HTTP/2 by hand: ``python h2flood.py KIND``.

It says hello and answers every request legally (the first legal action) on its stream,
and from its first request on floods its own connection with HTTP/2 frames of one KIND:
``window-updates`` (WINDOW_UPDATE of 1 byte on the connection) or ``settings`` (empty
SETTINGS frames, each of which gRPC must acknowledge). Blocking writes: it spends no CPU
while the referee is busy parsing (found by attack: gRPC bounds no frame but PINGs, and the
parsing, on threads the referee shares, made the other seat's answers late).
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import threading

from arena.protocol import pb

KIND = sys.argv[1]
DATA, HEADERS, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 4, 6, 7, 8
END_STREAM, ACK, END_HEADERS = 1, 1, 4


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(
        ">I", stream) + payload


def header(name: bytes, value: bytes) -> bytes:
    """An HPACK literal header field, not indexed, with a new name."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def message(request: pb.PlayRequest) -> bytes:
    """A gRPC message on stream 1."""
    body = request.SerializeToString()
    return frame(DATA, 0, 1, b"\x00" + struct.pack(">I", len(body)) + body)


FLOOD = {
    "window-updates": frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1)) * 4096,
    "settings": frame(SETTINGS, 0, 0) * 4096,
}[KIND]

sock = socket.socket(socket.AF_UNIX)
sock.connect(os.environ["ARENA_ADDRESS"].removeprefix("unix:"))
sending = threading.Lock()
flooding = threading.Event()


def send(data: bytes) -> None:
    with sending:  # whole frames: the flood's writes never split one
        sock.sendall(data)


def flood() -> None:
    flooding.wait()
    try:
        while True:
            send(FLOOD)
    except OSError:  # cut off
        return


send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(SETTINGS, 0, 0) + frame(
    HEADERS, END_HEADERS, 1,
    header(b":method", b"POST") + header(b":scheme", b"http")
    + header(b":path", b"/uno_arena.v1.RefereeService/Play")
    + header(b":authority", b"localhost") + header(b"content-type", b"application/grpc")
    + header(b"te", b"trailers"))
    + message(pb.PlayRequest(hello=pb.Hello(token=os.environ["ARENA_TOKEN"],
                                            bot_name="h2flood", protocol_version=1))))
threading.Thread(target=flood, daemon=True).start()
received, stream = b"", b""
try:
    while data := sock.recv(1 << 16):
        received += data
        while len(received) >= 9 and len(received) >= 9 + int.from_bytes(received[:3], "big"):
            size = int.from_bytes(received[:3], "big")
            kind, flags = received[3], received[4]
            payload, received = received[9:9 + size], received[9 + size:]
            if kind == SETTINGS and not flags & ACK:
                send(frame(SETTINGS, ACK, 0))
            elif kind == PING and not flags & ACK:
                send(frame(PING, ACK, 0, payload))
            elif kind == GOAWAY:
                raise SystemExit(0)
            elif kind == DATA and payload:
                send(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", size))
                     + frame(WINDOW_UPDATE, 0, 1, struct.pack(">I", size)))
                stream += payload
                while len(stream) >= 5 and len(stream) >= 5 + int.from_bytes(stream[1:5], "big"):
                    length = int.from_bytes(stream[1:5], "big")
                    response = pb.PlayResponse.FromString(stream[5:5 + length])
                    stream = stream[5 + length:]
                    if response.HasField("decision_request"):
                        send(message(pb.PlayRequest(decision=pb.Decision(
                            request_id=response.decision_request.request_id,
                            action_index=0))))
                        flooding.set()
                    elif response.HasField("match_end"):
                        send(frame(DATA, END_STREAM, 1))
                        raise SystemExit(0)
except OSError:  # cut off
    pass
