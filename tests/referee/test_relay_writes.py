"""The seat relay writes the referee's messages to a seated bot itself
(``arena.referee.relay.SeatRelay.writes_itself``), within the windows the bot grants, and
keeps from gRPC what gRPC no longer needs: real matches against bots that bend what an
HTTP/2 client may do (``bots/h2writes.py``), each found by attack or by the RFC's corners.
A bot that keeps to the rules plays the whole match, written by the relay wherever its
stream is the plain one; one that breaks them is cut off as gRPC would cut it off."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from arena.referee import eventloop
from arena.referee.faults import FaultKind
from arena.referee.limits import Limits
from arena.referee.match import MatchSpec, run_match
from arena.referee.relay import SeatRelay
from arena.rules.options import RuleOptions
from arena.sandbox import BotManifest

from .conftest import BOTS, Tracker, misbehaving, play, sample

SHORT = RuleOptions(target_score=150)
PATIENT = Limits(decision_deadline=2.0, time_bank=10.0, hello_timeout=3.0)


def h2writes(mode: str) -> BotManifest:
    return BotManifest(folder=BOTS, name=mode, version="0", language="python",
                       run=(sys.executable, "h2writes.py", mode))


# (the bot, whether the relay writes its requests: None when it is cut off instead)
CASES = [
    ("legal", misbehaving("legal"), True),
    # Its Play stream is not the connection's first: gRPC writes, on the right stream.
    ("health-first", misbehaving("health-first"), False),
    ("first-stream-ended", h2writes("first-stream-ended"), False),
    # gRPC, no longer writing, would have struck these PINGs (max_ping_strikes is off).
    ("ping-split", h2writes("ping-split"), True),
    ("ping-each", h2writes("ping-each"), True),
    # RFC 9113 6.9: a window of 7 bytes; a SETTINGS cut to 0, then a grant.
    ("tiny-window", h2writes("tiny-window"), True),
    ("shrink", h2writes("shrink"), True),
    # A WINDOW_UPDATE of 0 is a connection error: gRPC sees it and ends the connection.
    ("zero-grant", h2writes("zero-grant"), None),
]


@pytest.mark.parametrize(("name", "bot", "writes"), CASES, ids=[c[0] for c in CASES])
def test_the_relay_writes_within_the_rules_a_client_keeps(
        tracker: Tracker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
        bot: BotManifest, writes: bool | None) -> None:
    relays: dict[int, tuple[bool, int]] = {}
    end = SeatRelay.end

    def ending(relay: SeatRelay) -> None:
        if relay.legs is not None and relay.may_write is not None:
            relays[id(relay)] = (relay.writing, relay.written)
        end(relay)

    monkeypatch.setattr(SeatRelay, "end", ending)
    outcome = play([tracker.seat(bot, name), tracker.seat(sample("greedy"), "good")],
                   seed=5, options=SHORT, limits=PATIENT)
    report, good = outcome.seats
    assert good.faults == [] and good.decisions > 20
    if writes is None:
        assert [f.kind for f in report.faults] == [FaultKind.DISCONNECTED], report.faults
        assert report.disqualified and 5 <= report.decisions <= 6
        return
    assert report.faults == [] and report.decisions > 20, report.faults
    assert report.decisions == sum(report.asked.values())
    states = sorted(relays.values())
    assert len(states) == 2 and states[1][0], "the sample bot's relay writes"
    assert states[0][0] is writes and (states[0][1] > 0) is writes, states
    tracker.assert_none_left()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_hang_up_mid_write_does_not_drop_the_other_bots_request(
        tracker: Tracker, seed: int) -> None:
    """Found by re-attack: the stream task of a bot off the plain path plays the match on
    when gRPC hands it that bot's answer, and writes the next request to the other bot; the
    bot hung up as that write waited on the other's 7-byte window, its task was cancelled,
    and the relay dropped the rest of the request: a legal bot disqualified by its
    opponent. A cancel leaves the request on its way, as gRPC's write was."""
    outcome = play([tracker.seat(h2writes("stray-hangup"), "stray"),
                    tracker.seat(h2writes("tiny-window"), "tiny")],
                   seed=seed, options=SHORT, limits=PATIENT)
    stray, tiny = outcome.seats
    assert [f.kind for f in stray.faults] == [FaultKind.DISCONNECTED]
    assert tiny.faults == [] and tiny.decisions > 20, tiny.faults
    tracker.assert_none_left()


@pytest.mark.parametrize("other", ["greedy", "deadline"])
def test_an_answer_guessed_ahead_is_struck_and_nothing_goes_stale(
        tracker: Tracker, other: str) -> None:
    """Found by re-attack: a bot whose window held its requests back sent, with the Wild it
    played, a guess at its next request's answer (its colour) in the same write. Played on
    at the first message, the match took the guess as the answer while a task still waited
    to write that request: the other bot's requests went unwritten (TIMEOUT, then the strike
    limit), or the match waited for ever. Now the match plays on once the read is all
    handed on, and a guess sent before its request is struck out of turn, as gRPC's
    reading always had it. (``deadline``: a bot whose requests gRPC writes.)"""
    opponent = sample("greedy") if other == "greedy" else misbehaving("deadline")
    spec = MatchSpec("ahead", 3, 2, SHORT, Limits(decision_deadline=1.0, time_bank=2.0,
                                                  hello_timeout=5.0))
    outcome = eventloop.run(asyncio.wait_for(run_match(spec, [
        tracker.seat(h2writes("wild-ahead"), "ahead"), tracker.seat(opponent, other)]), 60))
    ahead, good = outcome.seats
    assert good.faults == [] and good.decisions > 20, good.faults
    kinds = [f.kind for f in ahead.faults]
    assert kinds and set(kinds) <= {FaultKind.OUT_OF_TURN}, ahead.faults
    tracker.assert_none_left()


@pytest.mark.parametrize("seed", [0, 2, 11])
def test_a_flood_before_the_match_starts_is_recorded_as_one(tracker: Tracker,
                                                              seed: int) -> None:
    """Found by re-attack: the relay records an inbox overflow at once, which can be before
    the match's start is sent; gRPC then cuts the stream, the start's write fails, and the
    flood was dropped for "stream closed before match start". Its stream closed because it
    flooded: that is what the record says (or, when its junk was read as answers first,
    the strikes it earned)."""
    spec = MatchSpec(f"flood-{seed}", seed, 2, RuleOptions(target_score=100),
                     Limits(decision_deadline=1.5, time_bank=6.0, hello_timeout=5.0))
    outcome = eventloop.run(asyncio.wait_for(run_match(spec, [
        tracker.seat(h2writes("tiny-window"), "tiny"),
        tracker.seat(misbehaving("flood"), "flood")]), 60))
    tiny, flood = outcome.seats
    assert tiny.faults == []
    assert flood.disqualified and FaultKind.DISCONNECTED not in [f.kind for f in flood.faults]
    tracker.assert_none_left()
