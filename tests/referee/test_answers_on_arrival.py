"""A bot's answer is taken from its seat's relay as it passes (``arena.referee.relay``,
``FrameReader``) and kept from gRPC, which numbers what it still reads after the messages
kept: each answer counts once whichever way it comes, and a bot that strays from the plain
path (a compressed message, a second stream) has the rest of its answers read by gRPC,
with nothing lost, doubled or reordered. A doubled answer would be an out-of-turn fault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.referee import match as match_module
from arena.referee.limits import Limits
from arena.referee.log import read_log
from arena.referee.replay import replay
from arena.rules.options import RuleOptions

from .conftest import Tracker, misbehaving, play, sample

SHORT = RuleOptions(target_score=150)
PATIENT = Limits(decision_deadline=2.0, time_bank=10.0, hello_timeout=3.0)


# (the first bot, how many of its answers the relay hands on first: all, only the two
# before it strays at its third, or none on a call with a deadline, which gRPC may cancel
# with an answer unread)
CASES = [("legal", "all"), ("gzip-padded", 2), ("second-stream", 2), ("deadline", 0)]


@pytest.mark.parametrize(("mode", "picked"), CASES, ids=[c[0] for c in CASES])
def test_each_answer_counts_once_whichever_way_it_comes(
        tracker: Tracker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str,
        picked: int | str) -> None:
    taken: list[tuple[int, int]] = []
    hand_on = match_module._picked

    def counting(referee: Any, seat: int, connection: Any, number: int, data: bytes) -> bool:
        took = hand_on(referee, seat, connection, number, data)
        if took:
            taken.append((seat, number))
        return took

    monkeypatch.setattr(match_module, "_picked", counting)
    log = tmp_path / "match.jsonl.gz"
    outcome = play([tracker.seat(misbehaving(mode), "bot"), tracker.seat(sample("greedy"), "good")],
                   seed=5, log=log, options=SHORT, limits=PATIENT)
    for report in outcome.seats:
        assert report.faults == [], report.faults
        assert report.decisions == sum(report.asked.values()) > 20  # each answered once
    bot, good = ([number for seat, number in taken if seat == s] for s in (0, 1))
    assert good == list(range(2, outcome.seats[1].decisions + 2)), "all, in order"
    assert bot == (list(range(2, outcome.seats[0].decisions + 2)) if picked == "all"
                   else [2, 3][:int(picked)])
    decisions = [r for r in read_log(log) if r["type"] == "decision" and r["seat"] == 0]
    assert len(decisions) == outcome.seats[0].decisions
    assert replay(log).match.scores == list(outcome.scores)
    tracker.assert_none_left()
