"""A bot that speaks HTTP/2 by hand, bending what a client may do: ``python h2client.py
MODE``.

It says hello and answers each request with its first legal action, granting back what it
reads as a plain client does; each MODE bends one thing a client may do (or must not):

- ``first-stream-ended``: its first stream opened and ended with no message, Play on the
  next one;
- ``ping-split``: a PING before each answer from the third on, its 17 bytes in two writes;
- ``ping-each``: a PING with each answer from the third on, in the same write;
- ``small-window``: a stream window of 128 bytes, so every request comes in a few pieces;
- ``tiny-window``: a stream window of 7 bytes, so every request comes in dozens of pieces,
  each granted back in a write of its own;
- ``shrink``: at its fifth answer, its initial window cut to 0, then 50 bytes granted;
- ``zero-grant``: at its fifth answer, a WINDOW_UPDATE of 0, a protocol error for which
  gRPC ends the connection;
- ``wild-ahead``: a 128-byte window, and when it plays a Wild (its next decision surely its
  own colour), a guess at that next request's answer in the same write, before the request
  could have been read (three times): struck out of turn, never taken as the answer;
- ``stray-hangup``: a PRIORITY frame first, then at its sixth answer it hangs up, while the
  referee may be writing the other bot's request.

And four that attack the referee's CPU within what HTTP/2 allows, on their own turns,
every other one (the answers to odd request ids), playing plainly on the others:

- ``drip``: the answer sent one byte a write (each a read of the referee's);
- ``drip-padded``: the answer padded with 15 KB of an unknown field, one byte a write;
- ``tiny-frames``: 25 empty SETTINGS frames (each acknowledged by gRPC) before the
  answer, in the same write;
- ``stream-reset``: before the answer, a new Play stream opened and reset at once.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import time

from h2raw import (
    DATA,
    END_HEADERS,
    END_STREAM,
    HEADER_BLOCK,
    HEADERS,
    INITIAL_WINDOW_SIZE,
    PING,
    PREFACE,
    PRIORITY,
    RST_STREAM,
    SETTINGS,
    WINDOW_UPDATE,
    Connection,
    frame,
    hello,
    message,
)

from arena.protocol import pb

MODE = sys.argv[1]
connection = Connection()
send = connection.send
window = {"tiny-window": 7, "small-window": 128, "wild-ahead": 128}.get(MODE)
send(PREFACE + frame(SETTINGS, 0, 0, b"" if window is None else
                     struct.pack(">HI", INITIAL_WINDOW_SIZE, window)))
stream = 1
if MODE == "stray-hangup":
    send(frame(PRIORITY, 0, 1, struct.pack(">IB", 0, 15)))
if MODE == "first-stream-ended":
    send(frame(HEADERS, END_HEADERS, 1, HEADER_BLOCK) + frame(DATA, END_STREAM, 1))
    time.sleep(0.3)
    stream = 3
send(frame(HEADERS, END_HEADERS, stream, HEADER_BLOCK) + message(hello("h2writes"), stream))

answered = guessed = 0


def wild(request: pb.DecisionRequest) -> int | None:
    """The index of a Wild it may play, with more than two cards in its hand."""
    if request.kind != pb.DECISION_KIND_PLAY_OR_DRAW or len(request.observation.hand) <= 2:
        return None
    return next((index for index, action in enumerate(request.legal_actions)
                 if action.kind == pb.ACTION_KIND_PLAY
                 and action.card.kind == pb.CARD_KIND_WILD), None)


def answer(request: pb.DecisionRequest) -> None:
    global answered, guessed
    answered += 1
    request_id = request.request_id
    index = wild(request) if MODE == "wild-ahead" and guessed < 3 else None
    data = message(pb.PlayRequest(decision=pb.Decision(request_id=request_id,
                                                       action_index=index or 0)), stream)
    if index is not None:
        guessed += 1
        data += message(pb.PlayRequest(decision=pb.Decision(request_id=request_id + 1,
                                                            action_index=0)), stream)
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
    attacking = request_id % 2 == 1
    if MODE == "tiny-frames" and attacking:
        data = frame(SETTINGS, 0, 0) * 25 + data
    if MODE == "stream-reset" and attacking:
        opened = stream + 2 * answered
        send(frame(HEADERS, END_HEADERS, opened, HEADER_BLOCK)
             + frame(RST_STREAM, 0, opened, struct.pack(">I", 8)))
    if MODE in ("drip", "drip-padded") and attacking:
        if MODE == "drip-padded":  # field 1000, length-delimited: unknown to the referee
            body = pb.PlayRequest(decision=pb.Decision(
                request_id=request_id, action_index=0)).SerializeToString()
            padding = b"\xc2\x3e\x98\x75" + bytes(15_000)  # 15,000 bytes (varint 98 75)
            data = frame(DATA, 0, stream, b"\x00" + struct.pack(">I", len(body + padding))
                         + body + padding)
        for at in range(len(data)):
            send(data[at:at + 1])
            time.sleep(0.0002)
        return
    send(data)
    if answered == 6 and MODE == "stray-hangup":
        connection.sock.shutdown(socket.SHUT_RDWR)
        os._exit(0)


for response in connection.responses(stream):
    if response.HasField("decision_request"):
        answer(response.decision_request)
    elif response.HasField("match_end"):
        send(frame(DATA, END_STREAM, stream))
        sys.exit(0)
if connection.goaway:
    sys.exit(f"GOAWAY {connection.goaway[8:]!r}")
