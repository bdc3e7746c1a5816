"""The match loop (``arena.referee.loop``) over fake streams: no gRPC, no process, so that
what happens when is exact. One task plays the match: it writes each request within the
request's deadline and the seat's time bank, then waits for the answer in the seat's
inbox; docs/rules.md §20 for what a fault costs."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from arena.protocol import pb
from arena.referee import eventloop
from arena.referee.connection import Connection
from arena.referee.faults import FaultKind
from arena.referee.limits import Limits
from arena.referee.log import MatchLogWriter, read_log
from arena.referee.loop import MatchLoop
from arena.referee.match import MatchOutcome, MatchSpec
from arena.referee.servicer import Seating
from arena.rules.options import RuleOptions


class FakeStream:
    """A bot's stream without gRPC. Each request is answered with the first legal action:
    at once (``delay`` None: the answer is in the inbox before the write returns), or
    ``delay`` seconds later. ``plan`` changes what happens to a request id: ``"never"``
    (no answer), ``("after", seconds)`` (answered then), ``"stall"`` (the write never ends:
    the bot shut its flow-control window); ``on_request(request_id)`` is called as each
    request is written."""

    def __init__(self, seat: int, plan: dict[int, Any] | None = None,
                 delay: float | None = None, on_request: Any = None) -> None:
        self.seat, self.plan, self.delay, self.on_request = seat, plan or {}, delay, on_request
        self.connection: Connection | None = None
        self.requests: list[int] = []

    async def write(self, message: bytes | pb.PlayResponse) -> None:
        data = message if type(message) is bytes else message.SerializeToString()  # type: ignore[union-attr]
        response = pb.PlayResponse.FromString(data)
        if response.HasField("decision_request"):
            request_id = response.decision_request.request_id
            if self.plan.get(request_id) == "stall":
                await asyncio.Event().wait()
            self._answer(request_id)
        await asyncio.sleep(0)  # a write suspends once, as a real one does

    def _answer(self, request_id: int) -> None:
        self.requests.append(request_id)
        if self.on_request is not None:
            self.on_request(request_id)
        behaviour = self.plan.get(request_id, "answer")
        if behaviour == "never":
            return
        answer = pb.PlayRequest(decision=pb.Decision(request_id=request_id, action_index=0))
        delay = behaviour[1] if isinstance(behaviour, tuple) else self.delay
        if delay is None:
            self._admit(answer)
        else:
            asyncio.get_running_loop().call_later(delay, self._admit, answer)

    def _admit(self, answer: pb.PlayRequest) -> None:
        assert self.connection is not None
        assert self.connection.inbox.admit(time.perf_counter(), answer, answer.ByteSize())


def seated(spec: MatchSpec, streams: list[FakeStream]) -> Seating:
    seating = Seating(spec.players, spec.options, spec.limits.hello_timeout)
    for seat, stream in enumerate(streams):
        stream.connection = Connection(stream, pb.Hello(bot_name=f"fake{seat}"), seat)  # type: ignore[arg-type]
        seating.attach(seat, stream.connection)
    return seating


def spec_for(log: Path, limits: Limits) -> MatchSpec:
    return MatchSpec("driving", 7, 2, limits=limits, log_path=log)


async def play_over(spec: MatchSpec, plans: list[dict[int, Any]], delay: float | None = None
                    ) -> tuple[MatchOutcome, list[FakeStream]]:
    streams = [FakeStream(seat, plans[seat], delay) for seat in range(2)]
    assert spec.log_path is not None
    writer = MatchLogWriter(spec.log_path)
    # A match that stops playing on fails here rather than hanging.
    outcome = await asyncio.wait_for(
        MatchLoop(spec, seated(spec, streams), writer).run(time.perf_counter()), STALLED)
    writer.close()
    return outcome, streams


STALLED = 60.0
"""Seconds after which a fake match is taken as stalled (they take a few seconds)."""
PATIENT = Limits(decision_deadline=5.0, time_bank=5.0, hello_timeout=1.0)


class PhaseRecorder(MatchLoop):
    """The match loop, recording each phase it enters."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "phase":
            self.__dict__.setdefault("phases", []).append(value)
        super().__setattr__(name, value)


def test_the_loop_goes_through_its_phases_in_order(tmp_path: Path) -> None:
    import re

    spec = spec_for(tmp_path / "m.jsonl.gz", PATIENT)
    streams = [FakeStream(seat) for seat in range(2)]
    loop = PhaseRecorder(spec, seated(spec, streams), None)
    outcome = eventloop.run(loop.run(time.perf_counter()))
    letters = "".join(phase.name[0] for phase in loop.__dict__["phases"])
    # Seating, Starting, then Playing with Asking and Waiting for each request, Finishing,
    # Over.
    assert re.fullmatch(r"SS(PAW|P)+FO", letters), letters
    assert letters.count("A") == letters.count("W") == sum(len(s.requests) for s in streams)
    assert outcome.decisions >= letters.count("A")


def test_each_request_expires_at_its_own_deadline(tmp_path: Path) -> None:
    """Request 6 gets no answer: TIMEOUT (§20), no sooner than its deadline plus the time
    bank, the bank emptied, and the match goes on."""
    log = tmp_path / "match.jsonl.gz"
    limits = Limits(decision_deadline=0.15, time_bank=0.1, hello_timeout=1.0)
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


def test_an_answer_late_by_less_than_the_bank_spends_the_bank(tmp_path: Path) -> None:
    log = tmp_path / "match.jsonl.gz"
    limits = Limits(decision_deadline=0.05, time_bank=0.5, hello_timeout=1.0)
    outcome, _ = eventloop.run(play_over(spec_for(log, limits), [{3: ("after", 0.25)}, {}],
                                         delay=0.001))
    assert all(not seat.faults for seat in outcome.seats)
    timing = {(r["seat"], r["request"]): r for r in read_log(log) if r["type"] == "timing"}
    late = timing[0, 3]
    assert late["latency_ms"] >= 200.0  # (uvloop may run a timer up to 1 ms early)
    assert late["bank_ms"] == pytest.approx(500 - (late["latency_ms"] - 50), abs=0.01)
    assert timing[0, 2]["bank_ms"] == 500.0


def test_a_bot_that_stops_reading_is_disqualified_and_the_match_goes_on(
        tmp_path: Path) -> None:
    """A bot that shuts its HTTP/2 window holds the referee's write of its request: the
    write waits at most the deadline and the time bank, then the seat is disqualified and
    play goes on (its loss recorded)."""
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


def test_an_answer_after_expiry_is_logged_as_late_and_not_struck_twice(tmp_path: Path
                                                                       ) -> None:
    log = tmp_path / "match.jsonl.gz"
    # A deadline far above a loaded machine's scheduling delays: only request 4 is late.
    limits = Limits(decision_deadline=0.3, time_bank=0.0, hello_timeout=1.0)
    late = {4: ("after", 0.6)}  # the other answers take 1 ms: the match is still on
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
    """Stopping a season cancels its matches: cancelled as its 20th request is written,
    the match sends no request after it, and leaves nothing running."""
    log = tmp_path / "match.jsonl.gz"

    async def cancel_mid_match() -> None:
        spec = spec_for(log, PATIENT)
        match: asyncio.Future[MatchOutcome] | None = None
        sent = 0

        def cancel_at_20(request_id: int) -> None:
            nonlocal sent
            sent += 1  # each seat counts its own requests: the 20th of the match's
            if sent == 20 and match is not None:
                match.cancel()

        streams = [FakeStream(seat, on_request=cancel_at_20) for seat in range(2)]
        loop = MatchLoop(spec, seated(spec, streams), MatchLogWriter(log))
        match = asyncio.ensure_future(loop.run(time.perf_counter()))
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(match, STALLED)
        await asyncio.sleep(0.1)  # what would still play on, were it not over
        assert len(streams[0].requests) + len(streams[1].requests) == 20
        for stream in streams:
            assert stream.requests == list(range(1, len(stream.requests) + 1))
        assert len(asyncio.all_tasks()) == 1, "only this test's task is left"

    eventloop.run(cancel_mid_match())


def test_an_error_while_playing_ends_the_match_with_it(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    from arena.rules.match import Match

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


def _named(spec: MatchSpec, hello: pb.Hello) -> tuple[MatchLoop, str]:
    """A loop whose seat 0 said ``hello`` and whose seat 1 was refused with the same
    hello: the loop, and the refusal."""
    seating = Seating(spec.players, spec.options, 1.0)
    seating.attach(0, Connection(None, hello, 0))  # type: ignore[arg-type]
    reason = seating.refusal(1, hello)
    loop = MatchLoop(spec, seating, None)
    loop.take_seats()
    return loop, reason


def test_a_bots_self_declared_name_reaches_logs_and_terminals_as_text() -> None:
    """The name and version a bot's hello gives are shown in the log's seats, to the other
    seats and in refusals printed to terminals: their control characters and direction
    marks as escapes, never run by a terminal."""
    hello = pb.Hello(bot_name="evil\x1b]0;pwned\x07\x1b[2J", bot_version="1\u202e\n")
    loop, reason = _named(MatchSpec("names", 7, 2, options=RuleOptions(stacking=True)), hello)
    escaped = ("evil\\x1b]0;pwned\\x07\\x1b[2J", "1\\u202e\\x0a")
    assert [(r.name, r.version) for r in loop.reports] == [escaped, escaped]
    assert "does not support the variant(s) stacking" in reason
    assert "evil" not in reason  # pages show the reason as the referee's own word
    assert [f.kind for f in loop.reports[1].faults] == [FaultKind.UNSUPPORTED_VARIANTS]


def test_a_seat_entered_by_its_bot_toml_is_named_by_it_whatever_its_hello_says() -> None:
    """A hello named "greedy (seat 0): disqualified" would read as the referee's verdict on
    another bot: a seat entered by its bot.toml is shown by that name."""
    hello = pb.Hello(bot_name="greedy (seat 0): disqualified", bot_version="v9 NOTICE")
    spec = MatchSpec("names", 7, 2, options=RuleOptions(stacking=True),
                     entered=(("greedy", "1.0"), ("faker", "2.0")))
    loop, reason = _named(spec, hello)
    assert [(r.name, r.version) for r in loop.reports] == [("greedy", "1.0"), ("faker", "2.0")]
    assert "disqualified" not in reason and "NOTICE" not in reason
