"""An untimed seat (a person's, ``arena play --human``): its requests never expire and its
time bank is never spent, while every other seat of the match keeps its deadline and bank."""

from __future__ import annotations

import gzip
import json
import math
import threading
import time
from pathlib import Path

from arena.bots.sdk import Turn, run
from arena.referee import eventloop
from arena.referee.clock import TimeBank
from arena.referee.faults import FaultKind
from arena.referee.limits import Limits
from arena.referee.match import MatchSpec, Seat, run_match
from arena.rules.options import RuleOptions

SLOW = 0.3
"""How long each slow answer takes: thirty times the deadline below."""
TIGHT = Limits(decision_deadline=0.01, time_bank=0.05, strike_limit=3, hello_timeout=10.0)


def test_an_untimed_seat_never_expires_and_spends_no_bank() -> None:
    bank = TimeBank(Limits(decision_deadline=1.0, time_bank=10.0), 3, untimed={1})
    assert bank.until(1, 100.0) == math.inf
    assert bank.until(0, 100.0) == 111.0
    bank.charge(1, 500.0)
    bank.charge(0, 4.0)
    assert bank.left == [7.0, 10.0, 10.0]


def test_the_untimed_seat_answers_slowly_unpunished_while_the_timed_one_is_struck(
        tmp_path: Path) -> None:
    """Both seats' bots take thirty times the deadline (six times the deadline and bank)
    over their first answers: the untimed seat 0 has no fault and its bank stays whole;
    seat 1 times out, strikes out and is disqualified."""
    threads: list[threading.Thread] = []
    slow_answers = [0, 0]

    def slow(seat: int) -> object:
        def decide(turn: Turn) -> int:
            if slow_answers[seat] < TIGHT.strike_limit:
                slow_answers[seat] += 1
                time.sleep(SLOW)
            return turn.legal_actions[0]
        return decide

    def announce(seat: int, address: str, token: str) -> None:
        assert address.startswith("unix:")  # the seat's own socket, behind its relay
        thread = threading.Thread(target=run, daemon=True, kwargs={
            "decide": slow(seat), "name": f"slow{seat}", "version": "1",
            "address": address, "token": token})
        thread.start()
        threads.append(thread)

    log = tmp_path / "untimed.jsonl.gz"
    spec = MatchSpec("untimed", 5, 2, RuleOptions(round_limit=1), TIGHT, log,
                     untimed=frozenset({0}))
    seats: list[Seat] = [None, None]
    outcome = eventloop.run(run_match(spec, seats, announce=announce))
    for thread in threads:
        thread.join(timeout=10)
    assert outcome.seats[0].faults == [] and not outcome.seats[0].disqualified
    assert outcome.seats[0].decisions >= TIGHT.strike_limit
    kinds = [fault.kind for fault in outcome.seats[1].faults]
    assert kinds[:3] == [FaultKind.TIMEOUT] * 3 and outcome.seats[1].disqualified
    with gzip.open(log, "rt") as lines:
        records = [json.loads(line) for line in lines]
    assert records[0]["untimed"] == [0]
    banks = [r["bank_ms"] for r in records if r["type"] == "timing" and r["seat"] == 0]
    assert banks and set(banks) == {TIGHT.time_bank * 1000}
    late = [r["latency_ms"] for r in records if r["type"] == "timing" and r["seat"] == 0]
    assert max(late) >= SLOW * 1000
