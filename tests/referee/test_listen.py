"""Bots started by hand connect over TCP (``arena play --listen``)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from arena.bots.policies import GreedyPolicy
from arena.bots.sdk import run
from arena.referee import eventloop
from arena.referee.limits import Limits
from arena.referee.match import MatchSpec, Seat, run_match
from arena.rules.options import RuleOptions

from .conftest import HTTP2_PREFACE, Tracker, sample


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_hand_run_bot_plays_over_tcp(tracker: Tracker) -> None:
    address = f"127.0.0.1:{free_port()}"
    threads: list[threading.Thread] = []

    def announce(seat: int, listen: str, token: str) -> None:
        assert listen == address
        thread = threading.Thread(target=run, kwargs={
            "policy": GreedyPolicy, "name": "by-hand", "version": "1",
            "address": listen, "token": token}, daemon=True)
        thread.start()
        threads.append(thread)

    seats: list[Seat] = [None, tracker.seat(sample("random"), "random")]
    spec = MatchSpec("listen", 3, 2, RuleOptions(target_score=150),
                     Limits(decision_deadline=2.0, time_bank=5.0, hello_timeout=10.0))
    outcome = eventloop.run(run_match(spec, seats, address=address, announce=announce))
    assert outcome.seats[0].name == "by-hand" and not outcome.seats[0].faults
    assert outcome.decisions > 0 and max(outcome.scores) >= 150
    for thread in threads:
        thread.join(timeout=10)
        assert not thread.is_alive()
    tracker.assert_none_left()


def test_one_hand_run_bot_cannot_take_the_others_connection(tmp_path: Path) -> None:
    """Every seat shares the address: a cap of a connection per seat there would let one
    bot's owner open a spare connection (its stream silent) and take the other seat's
    place, whose bot would then be refused and lose for no hello. The shared address has
    no cap; the silent stream waits for its hello, and both bots play."""
    address = f"127.0.0.1:{free_port()}"
    bots: list[subprocess.Popen[bytes]] = []
    spare: list[socket.socket] = []

    def hand_run(seat: int, listen: str, token: str, delay: float) -> None:
        # A process each (one process's channels would share a connection).
        environment = {**os.environ, "ARENA_ADDRESS": listen, "ARENA_TOKEN": token,
                       "ARENA_SEAT": str(seat)}
        bots.append(subprocess.Popen(
            ["/bin/sh", "-c", f"sleep {delay}; exec {sys.executable} bot.py"],
            cwd=sample("greedy").folder, env=environment,
            stdout=subprocess.DEVNULL, stderr=(tmp_path / f"seat{seat}.log").open("wb")))

    def announce(seat: int, listen: str, token: str) -> None:
        if seat == 0:  # a spare connection first, with a stream that never says hello
            host, port = listen.rsplit(":", 1)
            raw = socket.create_connection((host, int(port)))
            raw.sendall(HTTP2_PREFACE + _silent_stream())
            spare.append(raw)
        hand_run(seat, listen, token, 0.0 if seat == 0 else 0.5)  # the other bot: later

    spec = MatchSpec("listen", 3, 2, RuleOptions(target_score=150),
                     Limits(decision_deadline=2.0, time_bank=5.0, hello_timeout=3.0))
    try:
        outcome = eventloop.run(run_match(spec, [None, None], address=address,
                                        announce=announce))
    finally:
        for raw in spare:
            raw.close()
        for bot in bots:
            with contextlib.suppress(subprocess.TimeoutExpired):
                bot.wait(timeout=10)
            bot.kill()
    assert [seat.connected for seat in outcome.seats] == [True, True], [
        (tmp_path / f"seat{seat}.log").read_text(errors="replace")[-500:] for seat in (0, 1)]
    assert not outcome.seats[0].faults and not outcome.seats[1].faults
    assert outcome.decisions > 0


def _silent_stream() -> bytes:
    """A HEADERS frame opening a Play stream (HPACK literals, no indexing), no message."""
    fields = [(b":method", b"POST"), (b":scheme", b"http"),
              (b":path", b"/uno_arena.v1.RefereeService/Play"), (b":authority", b"x"),
              (b"content-type", b"application/grpc"), (b"te", b"trailers")]
    block = b"".join(b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value
                     for name, value in fields)
    return len(block).to_bytes(3, "big") + b"\x01\x04\x00\x00\x00\x01" + block
