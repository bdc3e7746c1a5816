"""Bots started by hand connect over TCP (``arena play --listen``)."""

from __future__ import annotations

import asyncio
import socket
import threading

from arena.bots.policies import GreedyPolicy
from arena.bots.sdk import run
from arena.referee.limits import Limits
from arena.referee.match import MatchSpec, Seat, run_match
from arena.rules.options import RuleOptions

from .conftest import Tracker, sample


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
    outcome = asyncio.run(run_match(spec, seats, address=address, announce=announce))
    assert outcome.seats[0].name == "by-hand" and not outcome.seats[0].faults
    assert outcome.decisions > 0 and max(outcome.scores) >= 150
    for thread in threads:
        thread.join(timeout=10)
        assert not thread.is_alive()
    tracker.assert_none_left()
