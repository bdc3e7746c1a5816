"""Real matches against bots whose HTTP/2 or gRPC bends what a client may do
(``bots/h2client.py``, ``bots/misbehave.py``): one that keeps to the rules plays the whole
match, each answer counted once; one that breaks them is cut off as gRPC cuts it off, and
its opponent plays on unharmed (docs/rules.md §20)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from arena.referee import eventloop
from arena.referee.faults import FaultKind
from arena.referee.limits import Limits
from arena.referee.match import MatchSpec, run_match
from arena.rules.options import RuleOptions
from arena.sandbox import BotManifest

from .conftest import BOTS, Tracker, misbehaving, play, sample

SHORT = RuleOptions(target_score=150)
PATIENT = Limits(decision_deadline=2.0, time_bank=10.0, hello_timeout=3.0)


def h2client(mode: str) -> BotManifest:
    return BotManifest(folder=BOTS, name=mode, version="0", language="python",
                       run=(sys.executable, "h2client.py", mode))


# (the bot, the fault that ends it: None when it plays the match through)
CASES = [
    ("legal", misbehaving("legal"), None),
    ("gzip-padded", misbehaving("gzip-padded"), None),  # compressed messages
    ("second-stream", misbehaving("second-stream"), None),  # a stream opened mid-match
    ("deadline", misbehaving("deadline"), None),  # its call has a grpc-timeout
    ("health-first", misbehaving("health-first"), None),  # another call before Play
    ("first-stream-ended", h2client("first-stream-ended"), None),
    ("ping-split", h2client("ping-split"), None),
    ("ping-each", h2client("ping-each"), None),
    ("small-window", h2client("small-window"), None),  # RFC 9113 6.9: a 128-byte window
    ("shrink", h2client("shrink"), None),  # a SETTINGS cut to 0, then a grant
    # Dozens of grants a request, each a write: the referee's reads are charged.
    ("tiny-window", h2client("tiny-window"), FaultKind.FLOODED),
    ("zero-grant", h2client("zero-grant"), FaultKind.DISCONNECTED),  # gRPC ends it
]


@pytest.mark.parametrize(("name", "bot", "ended"), CASES, ids=[c[0] for c in CASES])
def test_a_client_within_the_rules_plays_and_one_outside_is_cut_off(
        tracker: Tracker, name: str, bot: BotManifest, ended: FaultKind | None) -> None:
    outcome = play([tracker.seat(bot, name), tracker.seat(sample("greedy"), "good")],
                   seed=5, options=SHORT, limits=PATIENT)
    report, good = outcome.seats
    assert good.faults == [] and good.decisions > 20, good.faults
    if ended is not None:
        assert [f.kind for f in report.faults][:1] == [ended], report.faults
        assert report.disqualified
        if ended is FaultKind.DISCONNECTED:
            assert 5 <= report.decisions <= 6
        return
    assert report.faults == [] and report.decisions > 20, report.faults
    assert report.decisions == sum(report.asked.values()), "each request answered once"
    tracker.assert_none_left()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_hang_up_does_not_drop_the_other_bots_request(tracker: Tracker, seed: int
                                                        ) -> None:
    """A bot hangs up while the referee may be writing its opponent's request into a
    small window: the opponent gets the whole request and plays on."""
    outcome = play([tracker.seat(h2client("stray-hangup"), "stray"),
                    tracker.seat(h2client("small-window"), "tiny")],
                   seed=seed, options=SHORT, limits=PATIENT)
    stray, tiny = outcome.seats
    assert [f.kind for f in stray.faults] == [FaultKind.DISCONNECTED]
    assert tiny.faults == [] and tiny.decisions > 20, tiny.faults
    tracker.assert_none_left()


@pytest.mark.parametrize("other", ["greedy", "deadline"])
def test_an_answer_guessed_ahead_is_struck_out_of_turn(tracker: Tracker, other: str
                                                       ) -> None:
    """An answer sent before its request could have been read is an answer to nothing:
    struck out of turn, and the match goes on for both."""
    opponent = sample("greedy") if other == "greedy" else misbehaving("deadline")
    spec = MatchSpec("ahead", 3, 2, SHORT, Limits(decision_deadline=1.0, time_bank=2.0,
                                                  hello_timeout=5.0))
    outcome = eventloop.run(asyncio.wait_for(run_match(spec, [
        tracker.seat(h2client("wild-ahead"), "ahead"), tracker.seat(opponent, other)]), 60))
    ahead, good = outcome.seats
    assert good.faults == [] and good.decisions > 20, good.faults
    kinds = [f.kind for f in ahead.faults]
    assert kinds and set(kinds) <= {FaultKind.OUT_OF_TURN}, ahead.faults
    tracker.assert_none_left()


@pytest.mark.parametrize("seed", [0, 2, 11])
def test_a_flood_before_the_match_starts_is_recorded_as_one(tracker: Tracker,
                                                              seed: int) -> None:
    """A bot that floods its inbox before the match starts is recorded as flooding, not as
    a stream that closed before the start (or, when its junk was read as answers first,
    with the strikes it earned)."""
    spec = MatchSpec(f"flood-{seed}", seed, 2, RuleOptions(target_score=100),
                     Limits(decision_deadline=1.5, time_bank=6.0, hello_timeout=5.0))
    outcome = eventloop.run(asyncio.wait_for(run_match(spec, [
        tracker.seat(h2client("small-window"), "tiny"),
        tracker.seat(misbehaving("flood"), "flood")]), 60))
    tiny, flood = outcome.seats
    assert tiny.faults == []
    assert flood.disqualified and FaultKind.DISCONNECTED not in [f.kind for f in flood.faults]
    tracker.assert_none_left()
