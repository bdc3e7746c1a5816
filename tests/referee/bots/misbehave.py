"""One script, many misbehaviours: ``python misbehave.py MODE [variants]``.

Every mode plays legally (first legal action) except for its one fault. With ``variants``
the bot declares every variant (docs/rules.md §21-§32) in its hello. ``bad-KIND`` answers every
request of decision kind KIND (``bad-give_card``...) with an index out of range;
``unreadable`` sends bytes protobuf cannot parse before its third answer
(``unreadable-between``: after it); ``padded`` pads every answer with 15,000 bytes of a
field the protocol does not know; ``slow-hello`` opens its stream and says hello two
seconds later; ``crowd`` says hello, then opens 40 streams that never speak (to crowd out a
bot still to say hello); ``hog`` opens its stream, then holds 1,500 more connections to its
socket, then says hello and plays; ``side-flood`` opens its stream, then a second
connection on which it sends 50,000 HTTP/2 PINGs (reading the replies slowly), then plays;
``deaf`` answers five requests, then stops reading its stream (its flow-control window,
kept small, fills and the referee's writes stall) while it goes on answering blind;
``gzip-padded`` compresses its messages (gzip, on its channel) and pads its third answer,
which gRPC then sends compressed; ``second-stream`` opens a second stream on its
connection before its third answer; ``deadline`` plays on a call with a deadline (ten
minutes); ``legal`` never misbehaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator

import grpc
from rawbot import RawBot

from arena.protocol import pb, pb_grpc

MODE = sys.argv[1]
VARIANTS = len(sys.argv) > 2 and sys.argv[2] == "variants"
UNREADABLE = b"\x9b\x06" * 3000 + b"\x9c\x06" * 3000
"""Groups nested past protobuf's parsing depth (12 KB, under the message limit)."""
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"
"""What an HTTP/2 client sends first: the connection preface and an empty SETTINGS frame."""
PADDING = b"\xc2\x3e" + b"\x98\x75" + b"x" * 15_000
"""Field 1000 (length-delimited, unknown to the protocol) of 15,000 bytes."""


def main() -> None:
    if MODE == "crash-at-start":
        raise SystemExit(3)
    if MODE == "garbage-bytes":
        path = os.environ["ARENA_ADDRESS"].removeprefix("unix:")
        with socket.socket(socket.AF_UNIX) as raw:
            raw.connect(path)
            raw.sendall(b"\x00\xffGARBAGE" * 1000)
            time.sleep(1)
        return
    if MODE == "no-hello":
        bot = RawBot()
        stream = bot.responses()  # opens the stream, then says nothing
        time.sleep(30)
        del stream
        return
    if MODE in ("deaf", "deaf-flooding"):  # plays five requests, then stops reading and
        # answers blind (flooding: too fast, more than 32 answers ahead within a deadline)
        deaf()
        return
    bot = RawBot(token="0" * 32 if MODE == "wrong-token" else None,
                 compression=grpc.Compression.Gzip if MODE == "gzip-padded" else None)
    if MODE == "health-first":  # another call on its channel first (unimplemented here):
        # its Play stream is then the connection's second, which the relay must write the
        # requests on
        with contextlib.suppress(grpc.RpcError):
            bot.channel.unary_unary("/grpc.health.v1.Health/Check")(b"", timeout=5)
    if MODE == "slow-hello":  # its stream open, its hello two seconds later
        stream = bot.responses()
        time.sleep(2)
        bot.hello(every_variant=VARIANTS)
        play(bot, stream)
        bot.close()
        return
    if MODE == "hog":  # its stream, then 1,500 connections to its own socket (each would
        # be a descriptor of the referee's) held open, then its hello
        stream = bot.responses()
        time.sleep(0.3)
        held = []
        path = os.environ["ARENA_ADDRESS"].removeprefix("unix:")
        for _ in range(1500):
            raw = socket.socket(socket.AF_UNIX)
            with contextlib.suppress(OSError):
                raw.connect(path)
                raw.sendall(PREFACE)
                held.append(raw)
        bot.hello(every_variant=VARIANTS)
        play(bot, stream)
        bot.close()
        return
    if MODE == "side-flood":
        stream = bot.responses()
        time.sleep(0.3)
        threading.Thread(target=side_flood, args=(50_000,), daemon=True).start()
        time.sleep(0.5)
        bot.hello(every_variant=VARIANTS)
        play(bot, stream)
        bot.close()
        return
    bot.hello(every_variant=VARIANTS)
    if MODE == "crowd":  # then streams that never speak, to crowd out another bot's
        stream = bot.responses()
        time.sleep(0.5)
        threading.Thread(target=asyncio.run, args=(silent_streams(40),), daemon=True).start()
        play(bot, stream)
        bot.close()
        return
    if MODE == "flood":  # far ahead of the referee, before it has asked anything: 150 MB
        junk = pb.PlayRequest(hello=pb.Hello(token="x", bot_name="x" * 15_000))
        for _ in range(10_000):
            bot.send(junk)
    with contextlib.suppress(grpc.RpcError):  # cut off by the referee (flood)
        play(bot, bot.responses(timeout=600) if MODE == "deadline" else None)
    bot.close()


async def silent_streams(count: int) -> None:
    """``count`` streams that open (their headers sent) and never say anything."""
    # A connection each (gRPC would share one, which carries two streams at a time).
    channels = [grpc.aio.insecure_channel(os.environ["ARENA_ADDRESS"],
                                          options=[("grpc.use_local_subchannel_pool", 1)])
                for _ in range(count)]
    calls = [pb_grpc.RefereeServiceStub(channel).Play() for channel in channels]
    for call in calls:
        with contextlib.suppress(grpc.RpcError):
            await call.wait_for_connection()
    await asyncio.sleep(60)


def play(bot: RawBot, stream: Iterator[pb.PlayResponse] | None = None) -> None:
    decisions = 0
    for response in stream or bot.responses():
        kind = response.WhichOneof("message")
        if kind == "match_end":
            break
        if kind != "decision_request":
            continue
        request_id = response.decision_request.request_id
        decisions += 1
        if MODE.startswith("bad-") and response.decision_request.kind == pb.DecisionKind.Value(
                f"DECISION_KIND_{MODE[4:].upper()}"):
            bot.answer(request_id, index=999)
            continue
        if MODE == "padded" or (MODE == "gzip-padded" and decisions == 3):
            # near the message limit: an unknown field (which gzip makes small)
            answer = pb.Decision(request_id=request_id, action_index=0).SerializeToString()
            bot.send(pb.PlayRequest(decision=pb.Decision.FromString(answer + PADDING)))
            continue
        if decisions == 3:
            if MODE == "second-stream":
                bot.another_stream()
            elif MODE == "late":
                time.sleep(0.8)
            elif MODE == "illegal":
                bot.answer(request_id, index=999)
                continue
            elif MODE == "stale":
                bot.answer(request_id - 1)
            elif MODE == "malformed":
                bot.hello()
            elif MODE == "unreadable":  # bytes that are no PlayRequest, then the answer
                bot.send(UNREADABLE)
            elif MODE == "unreadable-between":  # the answer, then such bytes
                bot.answer(request_id)
                bot.send(UNREADABLE)
                continue
            elif MODE == "out-of-turn":
                bot.answer(request_id)
                bot.answer(request_id + 1000)
                continue
            elif MODE == "disconnect":
                bot.close()
                time.sleep(30)
                return
            elif MODE == "exit-early":
                os._exit(0)
        bot.answer(request_id)


def side_flood(pings: int) -> None:
    """A second connection to the bot's own socket, flooded with PINGs whose replies are
    read back slowly (gRPC's work on them grows with the square of the flood)."""
    path = os.environ["ARENA_ADDRESS"].removeprefix("unix:")
    ping = b"\x00\x00\x08\x06\x00\x00\x00\x00\x00" + b"\x00" * 8
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as raw:
        raw.connect(path)

        def drain() -> None:
            received = 0
            with contextlib.suppress(OSError):
                while data := raw.recv(1 << 16):
                    received += len(data)
                    time.sleep(0.01)
            print(f"side connection: {received} bytes received, then closed", file=sys.stderr,
                  flush=True)

        threading.Thread(target=drain, daemon=True).start()
        raw.sendall(PREFACE + ping * pings)
        time.sleep(60)


def deaf() -> None:
    # A small stream window, not grown by probing: unread requests fill it quickly.
    bot = RawBot(options=[("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)])
    bot.hello()
    stream = bot.responses()
    for response in stream:
        if response.HasField("decision_request"):
            request_id = response.decision_request.request_id
            bot.answer(request_id)
            if request_id == 5:
                break
    # Never reads again; unless flooding, not so fast that it floods within a deadline.
    pause = 0.02 if MODE == "deaf-flooding" else 0.05
    for blind in range(request_id + 1, request_id + 100_000):
        time.sleep(pause)
        bot.answer(blind)


main()
