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
- ``wild-ahead``: a 7-byte window, and when it plays a Wild (its next decision surely its
  own colour), a guess at that next request's answer in the same write, before the request
  could have been read (three times): struck out of turn, never taken as the answer;
- ``stray-hangup``: a PRIORITY frame first (off the plain path: gRPC reads its answers, and
  the match plays on in its stream's task), then at its sixth answer it hangs up, which
  cancels that task while it may be writing the other bot's request.
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
window = {"tiny-window": 7, "wild-ahead": 7}.get(MODE)
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
