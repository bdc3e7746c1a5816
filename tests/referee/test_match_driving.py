"""How a match is played on from its streams (issue 19): the stream reader that receives
the answer plays the match on itself (``_MatchLoop.drive``), one task at a time, with one
timer for every request's deadline. These tests drive the real match loop over fake
streams (no gRPC, no process) so that what happens when is exact: a reader cancelled as
it writes, a timer set for an earlier request, a match cancelled between decisions.
RULES.md §20 for what a fault costs."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from arena.protocol import pb
from arena.referee import eventloop
from arena.referee import match as referee_module
from arena.referee.faults import FaultKind
from arena.referee.limits import Limits
from arena.referee.log import MatchLogWriter, read_log
from arena.referee.match import MatchOutcome, MatchSpec


class FakeStream:
    """A bot's stream without gRPC. Each request is answered with the first legal action:
    at once (``delay`` None: the answer is in the inbox before the write returns, as when
    the bot answers while the referee is still busy), or ``delay`` seconds later, handed to
    the match as the stream's reader does. A write suspends once, as a real one does.
    ``plan`` changes what happens to a request id: ``"never"`` (no answer), ``("after",
    seconds)`` (answered then), ``"cancel"`` (answered at once, but the task writing the
    request is cancelled as it writes, as gRPC cancels a reader whose bot hung up),
    ``"stall"`` (the write never ends: the bot shut its flow-control window),
    ``"read-at-deadline"`` (the bot reads the request 1 ms before its deadline and time bank
    run out, in the turn of the loop the deadline's timer fires in, and never answers);
    ``on_request(request_id)`` is called as each request is written."""

    def __init__(self, referee: Any, seat: int, plan: dict[int, Any] | None = None,
                 delay: float | None = None, on_request: Any = None) -> None:
        self.referee, self.seat, self.plan, self.delay = referee, seat, plan or {}, delay
        self.on_request = on_request
        self.requests: list[int] = []
        self.readers: set[asyncio.Task[None]] = set()

    async def write(self, message: bytes | pb.PlayResponse) -> None:
        data = message if type(message) is bytes else message.SerializeToString()  # type: ignore[union-attr]
        response = pb.PlayResponse.FromString(data)
        if response.HasField("decision_request"):
            if self.plan.get(response.decision_request.request_id) == "stall":
                await asyncio.Event().wait()  # the bot stopped reading: a write never ends
            if self.plan.get(response.decision_request.request_id) == "read-at-deadline":
                await self._read_at_deadline()
                self.requests.append(response.decision_request.request_id)
                return
            self._answer(response.decision_request.request_id)
        await asyncio.sleep(0)

    async def _read_at_deadline(self) -> None:
        """The bot reads the request in the turn of the loop its deadline's timer fires in,
        just before the timer's callback runs (by construction, not by timing: a loop made
        busy for it met the timer in either order on a loaded machine)."""
        loop = asyncio.get_running_loop()
        read = loop.create_future()
        driver = self.referee.driver
        on_timer = driver._on_timer

        def timer_fires() -> None:
            pending = driver.pending
            if (not read.done() and pending is not None
                    and time.perf_counter() >= pending.give_up):
                read.set_result(None)  # the write's end is queued before the cut-off
            on_timer()

        driver._on_timer = timer_fires
        if driver.timer is not None:  # armed before this: it calls the patched one instead
            driver.timer.cancel()
            driver.timer = loop.call_at(driver.timer.when(), timer_fires)
        await read

    def _answer(self, request_id: int) -> None:
        self.requests.append(request_id)
        if self.on_request is not None:
            self.on_request(request_id)
        behaviour = self.plan.get(request_id, "answer")
        if behaviour == "never":
            return
        answer = pb.PlayRequest(decision=pb.Decision(request_id=request_id, action_index=0))
        delay = behaviour[1] if isinstance(behaviour, tuple) else self.delay
        if delay is None or behaviour == "cancel":
            self._admit(answer)
        else:
            asyncio.get_running_loop().call_later(delay, self._deliver, answer)
        if behaviour == "cancel":
            raise asyncio.CancelledError

    def _admit(self, answer: pb.PlayRequest) -> None:
        connection = self.referee.connections[self.seat]
        assert connection.inbox.admit(time.perf_counter(), answer, answer.ByteSize())

    def _deliver(self, answer: pb.PlayRequest) -> None:
        self._admit(answer)
        driver = self.referee.driver
        if driver is not None and driver.waiting_on == self.seat:
            reader = asyncio.ensure_future(driver.drive())
            self.readers.add(reader)
            reader.add_done_callback(self.readers.discard)


def spec_for(log: Path, limits: Limits) -> MatchSpec:
    return MatchSpec("driving", 7, 2, limits=limits, log_path=log)


async def play_over(spec: MatchSpec, plans: list[dict[int, Any]], delay: float | None = None
                    ) -> tuple[MatchOutcome, list[FakeStream]]:
    referee = referee_module._Referee(spec)
    streams = [FakeStream(referee, seat, plans[seat], delay) for seat in range(2)]
    for seat, stream in enumerate(streams):
        limits = spec.limits
        referee.attach(seat, referee_module._Connection(
            stream, pb.Hello(bot_name=f"fake{seat}"),
            limits.decision_deadline + limits.time_bank))
    assert spec.log_path is not None
    writer = MatchLogWriter(spec.log_path)
    # A match that stops playing on (a lost wake-up) fails here rather than hanging.
    outcome = await asyncio.wait_for(
        referee_module._MatchLoop(spec, referee, writer).run(time.perf_counter(), None),
        STALLED)
    writer.close()
    return outcome, streams


STALLED = 60.0
"""Seconds after which a fake match is taken as stalled (they take a few seconds)."""
PATIENT = Limits(decision_deadline=5.0, time_bank=5.0, hello_timeout=1.0)


def test_a_reader_cancelled_as_it_writes_loses_no_request(tmp_path: Path) -> None:
    """A reader task is cancelled when its bot hangs up, possibly while it writes the
    other seat's request: the request was handed over, so the match goes on from another
    task and nobody is struck (a bot must not be able to make its opponent time out).
    Here the answer is already in, so no reader would play on: the hand-off must."""
    log = tmp_path / "match.jsonl.gz"
    cancelled_at = {5: "cancel", 6: "cancel", 12: "cancel"}
    outcome, streams = eventloop.run(play_over(
        spec_for(log, PATIENT), [cancelled_at, cancelled_at]))
    assert all(seat.faults == [] for seat in outcome.seats)
    assert max(outcome.scores) >= 500 or outcome.round_limit_reached
    for stream in streams:  # each seat counts its own requests (no count of the other's)
        assert sorted(stream.requests) == list(range(1, len(stream.requests) + 1)), (
            "every request sent once")
    records = list(read_log(log))
    decisions = {(r["seat"], r["request"]): r for r in records if r["type"] == "decision"}
    timing = {(r["seat"], r["request"]): r for r in records if r["type"] == "timing"}
    for seat in (0, 1):
        for request_id in cancelled_at:
            assert decisions[seat, request_id]["source"] == "bot"
            assert decisions[seat, request_id]["asked"], "logged as sent, with its view"
            # Taken at once, not when the deadline's timer came to look.
            assert timing[seat, request_id]["latency_ms"] < PATIENT.decision_deadline * 1000


def test_each_request_expires_at_its_own_deadline(tmp_path: Path) -> None:
    """One timer serves every request: it is set for the first request and moved on when
    it fires before the pending one's deadline. Request 6 gets no answer: TIMEOUT
    (§20), no sooner than its deadline plus the time bank, and the match goes on."""
    log = tmp_path / "match.jsonl.gz"
    limits = Limits(decision_deadline=0.15, time_bank=0.1, hello_timeout=1.0)
    # The first answers take a little time, so request 6 is sent well after the timer
    # was set (for request 1) and expires after it would have fired.
    plan: dict[int, Any] = {request_id: ("after", 0.03) for request_id in range(1, 6)}
    plan[6] = "never"
    quick = {request_id: ("after", 0.03) for request_id in range(1, 6)}
    outcome, _ = eventloop.run(play_over(spec_for(log, limits), [plan, quick]))
    faulted = [s for s in outcome.seats if s.faults]
    assert len(faulted) == 1 and faulted[0].seat == 0
    assert [f.kind for f in faulted[0].faults] == [FaultKind.TIMEOUT]
    assert "request 6" in faulted[0].faults[0].reason
    timing = {(r["seat"], r["request"]): r for r in read_log(log) if r["type"] == "timing"}
    assert timing[0, 6]["latency_ms"] >= 250.0, "expired before its deadline and time bank"
    assert timing[0, 6]["bank_ms"] == 0.0
    assert max(outcome.scores) >= 500 or outcome.round_limit_reached


def test_a_bot_that_stops_reading_is_disqualified_and_the_match_goes_on(
        tmp_path: Path) -> None:
    """A bot losing the match shut its HTTP/2 window: the referee's write of its next
    request never ended, no deadline fired (the loop was busy writing), and the match, its
    loss with it, was never recorded (review, stop 39). A write waits at most the
    deadline and the time bank (the request's own timer cuts it off: no timeout per write);
    then the seat is disqualified and play goes on."""
    log = tmp_path / "match.jsonl.gz"
    limits = Limits(decision_deadline=0.2, time_bank=0.3, hello_timeout=1.0)
    started = time.perf_counter()
    outcome, streams = eventloop.run(play_over(spec_for(log, limits), [{5: "stall"}, {}]))
    assert time.perf_counter() - started < STALLED
    assert outcome.disqualified == (0,)
    assert [(f.kind, f.reason) for f in outcome.seats[0].faults] == [(
        FaultKind.DISCONNECTED, "did not read its request within the deadline and time bank")]
    assert outcome.places[0] == 2 and not outcome.seats[1].faults
    assert streams[0].requests == [1, 2, 3, 4]
    decision = next(r for r in read_log(log) if r["type"] == "decision" and r["seat"] == 0
                    and r["request"] == 5)
    assert decision["source"] == "autopilot" and decision.get("answer") is None
    assert max(outcome.scores) >= 500 or outcome.round_limit_reached


def test_a_request_read_as_its_deadline_fires_is_a_timeout_not_a_stall(
        tmp_path: Path) -> None:
    """Found by review: a write that ended in the same turn of the loop as the deadline's
    timer was taken for a stalled one, and the bot, which had read its request, was
    disqualified as one that stopped reading (its request logged as never sent). It is a
    timeout: a strike, the default played, the request logged as asked."""
    log = tmp_path / "match.jsonl.gz"
    limits = Limits(decision_deadline=0.2, time_bank=0.3, hello_timeout=1.0)
    outcome, streams = eventloop.run(play_over(spec_for(log, limits),
                                             [{5: "read-at-deadline"}, {}]))
    assert [(f.kind, f.disqualified) for f in outcome.seats[0].faults] == [
        (FaultKind.TIMEOUT, False)]
    assert streams[0].requests[:5] == [1, 2, 3, 4, 5]
    decision = next(r for r in read_log(log) if r["type"] == "decision" and r["seat"] == 0
                    and r["request"] == 5)
    assert decision["source"] == "default" and decision.get("asked")
    assert outcome.places[0] in (1, 2) and not outcome.disqualified


def test_an_answer_after_expiry_is_logged_as_late_and_not_struck_twice(tmp_path: Path
                                                                       ) -> None:
    log = tmp_path / "match.jsonl.gz"
    limits = Limits(decision_deadline=0.05, time_bank=0.0, hello_timeout=1.0)
    late = {4: ("after", 0.15)}  # the other answers take 1 ms: the match is still on
    outcome, _ = eventloop.run(play_over(spec_for(log, limits), [late, {}], delay=0.001))
    faults = [f for seat in outcome.seats for f in seat.faults]
    assert [(f.seat, f.kind) for f in faults] == [(0, FaultKind.TIMEOUT)]
    records = list(read_log(log))
    assert [(r["seat"], r["request"]) for r in records if r["type"] == "late_answer"] == [
        (0, 4)]
    decision = next(r for r in records if r["type"] == "decision" and r["seat"] == 0
                    and r["request"] == 4)
    assert decision["source"] == "default" and decision["answer"] is None


def test_a_cancelled_match_sends_nothing_more(tmp_path: Path) -> None:
    """Stopping a season cancels its matches: the match is cancelled here while a request
    is being written and its answer is already in; no request goes out after that, and no
    task is left playing the match on."""
    log = tmp_path / "match.jsonl.gz"

    async def cancel_mid_match() -> None:
        spec = spec_for(log, PATIENT)
        referee = referee_module._Referee(spec)
        match: asyncio.Future[MatchOutcome] | None = None

        sent = 0

        def cancel_at_20(request_id: int) -> None:
            nonlocal sent
            sent += 1  # each seat counts its own requests: the 20th of the match's
            if sent == 20 and match is not None:
                match.cancel()

        streams = [FakeStream(referee, seat, on_request=cancel_at_20) for seat in range(2)]
        for seat, stream in enumerate(streams):
            referee.attach(seat, referee_module._Connection(stream, pb.Hello()))
        loop = referee_module._MatchLoop(spec, referee, MatchLogWriter(log))
        match = asyncio.ensure_future(loop.run(time.perf_counter(), None))
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(match, STALLED)
        await asyncio.sleep(0.1)  # what would still play on, were it not over
        assert len(streams[0].requests) + len(streams[1].requests) == 20
        for stream in streams:
            assert stream.requests == list(range(1, len(stream.requests) + 1))
        assert not loop.drivers and all(not s.readers for s in streams)
        assert loop.timer is None or loop.timer.cancelled()

    eventloop.run(cancel_mid_match())


def test_an_error_while_playing_on_ends_the_match_with_it(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """Playing on runs in the readers' tasks, not the match's: an error there (here the
    engine's) still reaches ``run_match``'s caller instead of a reader's handler."""
    from arena.rules.state import Match

    applied = 0
    original = Match.apply

    def apply(self: Match, action: int) -> None:
        nonlocal applied
        applied += 1
        if applied == 30:
            raise RuntimeError("engine broke")
        original(self, action)

    monkeypatch.setattr(Match, "apply", apply)
    with pytest.raises(RuntimeError, match="engine broke"):
        eventloop.run(play_over(spec_for(tmp_path / "m.jsonl.gz", PATIENT), [{}, {}],
                              delay=0.001))


def test_a_bots_self_declared_name_reaches_logs_and_terminals_as_text() -> None:
    """The name and version a bot's hello gives are shown in the log's seats, to the other
    seats and in refusals printed to terminals: their control characters and direction
    marks as escapes, never run by a terminal."""
    from arena.rules.options import RuleOptions

    hello = pb.Hello(bot_name="evil\x1b]0;pwned\x07\x1b[2J", bot_version="1\u202e\n")
    seated = referee_module._Referee(MatchSpec("names", 7, 2))
    seated.attach(0, referee_module._Connection(None, hello))  # type: ignore[arg-type]
    report = seated.reports[0]
    assert (report.name, report.version) == ("evil\\x1b]0;pwned\\x07\\x1b[2J", "1\\u202e\\x0a")
    refusing = referee_module._Referee(
        MatchSpec("names", 7, 2, options=RuleOptions(stacking=True)))
    reason = refusing.refuse_unsupported(1, hello)
    assert "does not support the variant(s) stacking" in reason
    assert "evil" not in reason  # pages show the reason as the referee's own word
    assert refusing.reports[1].name == "evil\\x1b]0;pwned\\x07\\x1b[2J"


def test_a_seat_entered_by_its_bot_toml_is_named_by_it_whatever_its_hello_says() -> None:
    """A hello named "greedy (seat 0): disqualified ..." was shown as the seat's name and in
    the refusal, read as the referee's verdict on another bot (review, stop 39)."""
    from arena.rules.options import RuleOptions

    hello = pb.Hello(bot_name="greedy (seat 0): disqualified", bot_version="v9 NOTICE")
    spec = MatchSpec("names", 7, 2, options=RuleOptions(stacking=True),
                     entered=(("greedy", "1.0"), ("faker", "2.0")))
    referee = referee_module._Referee(spec)
    referee.attach(0, referee_module._Connection(None, hello))  # type: ignore[arg-type]
    reason = referee.refuse_unsupported(1, hello)
    assert [(r.name, r.version) for r in referee.reports] == [("greedy", "1.0"),
                                                              ("faker", "2.0")]
    assert "disqualified" not in reason and "NOTICE" not in reason
