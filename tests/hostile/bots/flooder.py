"""A bot that tries to make the referee hold what it sends.

Run as ``python hostile.py`` (the hostile arena's name for it) with ``attack.json`` beside
it; the attack is ``mode``:

* ``flood``: right after its hello, sends 15 KB messages (just under the size limit) as
  fast as it can, never waiting for a request: gigabytes, if the referee kept reading
  into an unbounded buffer.
* ``silent-streams``: before its hello, opens hundreds of connections, each with a stream
  that never says hello, hoping to fill the referee's memory or its seats; then tries
  to play (a seat's socket holds one connection at a time: one of the silent ones).
* ``huge-metadata``: before its hello, opens a stream with a megabyte of metadata; then
  plays.

It reports what it saw as ``REPORT {json}`` lines on its stdout, and otherwise plays the
first legal action.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path

import grpc
from rawbot import RawBot

from arena.protocol import pb, pb_grpc

MODE = json.loads((Path(__file__).parent / "attack.json").read_text())["mode"]


def report(**values: object) -> None:
    print("REPORT " + json.dumps(values), flush=True)


def silent_streams(count: int) -> dict[str, int]:
    """Open ``count`` connections, each with a stream that never says hello, and keep them
    open (an event loop in a thread of its own); how many the referee still holds open a
    moment later."""
    seen: dict[str, int] = {}
    ready = threading.Event()

    async def hold() -> None:
        # A connection each (gRPC would otherwise share one between the channels).
        channels = [grpc.aio.insecure_channel(os.environ["ARENA_ADDRESS"],
                                              options=[("grpc.use_local_subchannel_pool", 1)])
                    for _ in range(count)]
        calls = [pb_grpc.RefereeServiceStub(channel).Play() for channel in channels]
        await asyncio.sleep(2)
        seen.update(started=len(calls), still_open=sum(1 for c in calls if not c.done()))
        ready.set()
        await asyncio.sleep(3600)

    threading.Thread(target=asyncio.run, args=(hold(),), daemon=True).start()
    ready.wait(30)
    return seen


def huge_metadata() -> str:
    channel = grpc.insecure_channel(os.environ["ARENA_ADDRESS"])
    try:
        stub = pb_grpc.RefereeServiceStub(channel)
        request = pb.PlayRequest(hello=pb.Hello(token="x", bot_name="meta"))
        call = stub.Play(iter([request]), metadata=[("x-junk", "j" * (1 << 20))], timeout=5)
        for _ in call:
            return "accepted"
        return "stream ended"
    except grpc.RpcError as error:
        return f"{error.code().name}: {error.details()}"
    finally:
        channel.close()


SENT = [0]


def flood(bot: RawBot) -> None:
    junk = pb.PlayRequest(hello=pb.Hello(token="x", bot_name="x" * 15_000))
    started = time.monotonic()
    while time.monotonic() - started < 20:
        for _ in range(1000):
            bot.send(junk)
        SENT[0] += 1000


def main() -> None:
    if MODE == "silent-streams":
        report(what="silent streams", **silent_streams(300))
    elif MODE == "huge-metadata":
        report(what="huge metadata", result=huge_metadata())
        time.sleep(1)  # its connection closed, the seat's one connection is free again
    bot = RawBot()
    bot.hello()
    if MODE == "flood":
        threading.Thread(target=flood, args=(bot,), daemon=True).start()
    ended = "stream ended"
    try:
        for response in bot.responses():
            kind = response.WhichOneof("message")
            if kind == "decision_request":
                request_id = response.decision_request.request_id
                if MODE != "flood":
                    bot.answer(request_id)
            elif kind == "match_end":
                ended = "match end"
                break
    except grpc.RpcError as error:
        ended = f"{error.code().name}: {error.details()}"
    report(what="end", result=ended)
    if MODE == "flood":
        report(what="flood", sent=SENT[0])
    bot.close()
    os._exit(0)


if __name__ == "__main__":
    main()
