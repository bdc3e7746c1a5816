"""One script, many misbehaviours: ``python misbehave.py MODE``.

Every mode plays legally (first legal action) except for its one fault.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time

import grpc
from rawbot import RawBot

from arena.protocol import pb

MODE = sys.argv[1]


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
    bot = RawBot(token="0" * 32 if MODE == "wrong-token" else None)
    bot.hello()
    if MODE == "flood":  # far ahead of the referee, before it has asked anything: 150 MB
        junk = pb.PlayRequest(hello=pb.Hello(token="x", bot_name="x" * 15_000))
        for _ in range(10_000):
            bot.send(junk)
    with contextlib.suppress(grpc.RpcError):  # cut off by the referee (flood)
        play(bot)
    bot.close()


def play(bot: RawBot) -> None:
    decisions = 0
    for response in bot.responses():
        kind = response.WhichOneof("message")
        if kind == "match_end":
            break
        if kind != "decision_request":
            continue
        request_id = response.decision_request.request_id
        decisions += 1
        if decisions == 3:
            if MODE == "late":
                time.sleep(0.8)
            elif MODE == "illegal":
                bot.answer(request_id, index=999)
                continue
            elif MODE == "stale":
                bot.answer(request_id - 1)
            elif MODE == "malformed":
                bot.hello()
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


main()
