"""The referee under misbehaving bots (docs/rules.md §20).

Every case: the match completes, the fault is recorded with its reason (in the outcome and
the log), the well-behaved opponent is unaffected, and no bot process is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from arena.protocol import pb, pb_grpc
from arena.referee import eventloop
from arena.referee.faults import FaultKind
from arena.referee.limits import Limits
from arena.referee.log import read_log
from arena.referee.match import INBOX_BYTES, INBOX_MESSAGES, MatchSpec, run_match
from arena.referee.relay import BUDGET_BYTES
from arena.referee.replay import replay
from arena.referee.session import Session
from arena.rules.options import RuleOptions
from arena.sandbox import BotManifest

from .conftest import HTTP2_PREFACE, PeakMemory, Tracker, misbehaving, play, sample

SHORT = RuleOptions(target_score=150)


@contextlib.asynccontextmanager
async def served(seats: list[int], tokens: dict[str, int]) -> AsyncIterator[Session]:
    """A 2-seat session serving ``seats`` (no bot started), which takes ``tokens``."""
    async with Session(MatchSpec("t", 1, 2), dict.fromkeys(seats),
                       announce=lambda *_: None) as session:
        session.seating.tokens = tokens
        yield session
PATIENT = Limits(decision_deadline=2.0, time_bank=10.0, hello_timeout=3.0)

# (mode, the fault kind expected, words in its reason, disqualified?)
CASES = [
    ("crash-at-start", FaultKind.NO_HELLO, "exited before saying hello", True),
    ("no-hello", FaultKind.NO_HELLO, "no valid hello", True),
    ("wrong-token", FaultKind.NO_HELLO, "unknown or used token", True),
    ("garbage-bytes", FaultKind.NO_HELLO, "hello", True),
    ("illegal", FaultKind.ILLEGAL_ACTION, "out of range", False),
    ("stale", FaultKind.OUT_OF_TURN, "pending is", False),
    ("out-of-turn", FaultKind.OUT_OF_TURN, "no decision was asked", False),
    ("malformed", FaultKind.MALFORMED, "expected a decision", False),
    ("unreadable", FaultKind.MALFORMED, "not a PlayRequest: Error parsing message", False),
    ("unreadable-between", FaultKind.MALFORMED, "not a PlayRequest", False),
    ("disconnect", FaultKind.DISCONNECTED, "closed its stream", True),
    ("exit-early", FaultKind.DISCONNECTED, "closed its stream", True),
]


@pytest.mark.parametrize(("mode", "kind", "reason", "disqualified"), CASES,
                         ids=[c[0] for c in CASES])
def test_fault_is_contained(tracker: Tracker, tmp_path: Path, mode: str, kind: FaultKind,
                            reason: str, disqualified: bool) -> None:
    log = tmp_path / "match.jsonl.gz"
    outcome = play([tracker.seat(misbehaving(mode), "bad"),
                    tracker.seat(sample("greedy"), "good")],
                   seed=5, log=log, options=SHORT, limits=PATIENT)
    bad, good = outcome.seats
    assert [f.kind for f in bad.faults][:1] == [kind], bad.faults
    assert reason in bad.faults[0].reason
    assert bad.disqualified is disqualified
    assert good.faults == [] and not good.disqualified
    assert max(outcome.scores) >= SHORT.target_score or outcome.round_limit_reached
    if disqualified:
        assert outcome.places == (2, 1), "a disqualified bot is ranked last (§20)"
    # The log records the fault with its reason and still replays to the same state.
    faults = [r for r in read_log(log) if r["type"] == "fault"]
    assert faults and faults[0]["kind"] == kind.name.lower() and reason in faults[0]["reason"]
    assert replay(log).match.scores == list(outcome.scores)
    tracker.assert_none_left()


def test_late_answer_gets_a_strike_and_the_default_action(tracker: Tracker) -> None:
    outcome = play([tracker.seat(misbehaving("late"), "late"),
                    tracker.seat(sample("greedy"), "good")],
                   seed=3, options=SHORT,
                   limits=Limits(decision_deadline=0.5, time_bank=0.1, hello_timeout=3.0))
    late, good = outcome.seats
    assert [f.kind for f in late.faults] == [FaultKind.TIMEOUT]
    assert late.strikes == 1 and not late.disqualified
    assert good.faults == []
    tracker.assert_none_left()


def test_strike_limit_disqualifies_and_autopilot_finishes(tracker: Tracker) -> None:
    outcome = play([tracker.seat(sample("random"), "a"),
                    tracker.seat(misbehaving("illegal"), "b")],
                   seed=11, options=SHORT,
                   limits=Limits(decision_deadline=2.0, time_bank=10.0, strike_limit=1,
                                 hello_timeout=3.0))
    bad = outcome.seats[1]
    assert [f.kind for f in bad.faults] == [FaultKind.ILLEGAL_ACTION, FaultKind.STRIKE_LIMIT]
    assert bad.disqualified and outcome.places[1] == 2
    tracker.assert_none_left()


def test_a_bot_that_stops_reading_is_cut_off_at_its_deadline(tracker: Tracker,
                                                              tmp_path: Path) -> None:
    """A bot that stops reading its stream, its window kept small, while it answers blind:
    the referee's write of a request stalls for good. The request's own deadline timer
    cuts the write off at the deadline and time bank (the write has no timeout but that),
    the seat is disqualified saying why, and the match is played out and recorded."""
    log = tmp_path / "match.jsonl.gz"
    spec = MatchSpec("deaf", 3, 2, SHORT, Limits(decision_deadline=0.5, time_bank=0.5,
                                                 strike_limit=1000, hello_timeout=3.0), log)
    seats = [tracker.seat(misbehaving("deaf"), "deaf"), tracker.seat(sample("greedy"), "good")]
    # A match the stalled write holds fails here rather than hanging the suite.
    outcome = eventloop.run(asyncio.wait_for(run_match(spec, seats), 60))
    deaf, good = outcome.seats
    cut = [f for f in deaf.faults if f.disqualified]
    assert [(f.kind, f.reason) for f in cut] == [(
        FaultKind.DISCONNECTED, "did not read its request within the deadline and time bank")]
    assert deaf.decisions >= 5, "it played its first requests"
    assert good.faults == [] and outcome.places == (2, 1)
    assert max(outcome.scores) >= SHORT.target_score or outcome.round_limit_reached
    assert replay(log).match.scores == list(outcome.scores)
    tracker.assert_none_left()


def test_a_deaf_bot_that_floods_before_its_deadline_is_recorded_flooded(
        tracker: Tracker) -> None:
    """gRPC ends the stream of a bot 32 answers ahead, which
    fails the write its window holds; the fault says it flooded, not only that its stream
    broke."""
    outcome = play([tracker.seat(misbehaving("deaf-flooding"), "deaf"),
                    tracker.seat(sample("greedy"), "good")], seed=3, options=SHORT,
                   limits=Limits(decision_deadline=0.5, time_bank=0.5, strike_limit=1000,
                                 hello_timeout=3.0))
    deaf, good = outcome.seats
    assert [(f.kind, f.reason.split(";")[0]) for f in deaf.faults if f.disqualified] == [(
        FaultKind.FLOODED, "sent more than 32 messages or 65536 bytes ahead of the referee")]
    assert good.faults == [] and outcome.places == (2, 1)
    tracker.assert_none_left()


def test_a_flooding_bot_is_cut_off(tracker: Tracker, tmp_path: Path) -> None:
    """A bot that sends far ahead of the referee (here 150 MB while its
    opponent is still starting) has its stream cut off with RESOURCE_EXHAUSTED once it is
    INBOX_MESSAGES or INBOX_BYTES ahead, and is disqualified for it; the referee's memory
    does not grow with the flood, and the match goes on."""
    greedy = sample("greedy")
    slow = dataclasses.replace(greedy, run=("/bin/sh", "-c", f"sleep 1; exec {sys.executable} "
                                            "bot.py"))
    log = tmp_path / "match.jsonl.gz"
    with PeakMemory() as memory:
        outcome = play([tracker.seat(misbehaving("flood"), "bad"), tracker.seat(slow, "good")],
                       seed=5, log=log, options=SHORT, limits=PATIENT)
    assert memory.growth < 32 * 1024 * 1024, f"the referee grew by {memory.growth} bytes"
    bad, good = outcome.seats
    assert [f.kind for f in bad.faults] == [FaultKind.FLOODED], bad.faults
    # Whichever bound the flood meets first, the inbox's or the relay's budget: which one
    # depends on how the machine schedules the two, and both cut the bot off.
    reason = bad.faults[0].reason
    assert (f"more than {INBOX_MESSAGES} messages or {INBOX_BYTES} bytes" in reason
            or "more than its budget of" in reason), reason
    assert bad.disqualified and good.faults == []
    assert outcome.places == (2, 1)
    faults = [r for r in read_log(log) if r["type"] == "fault"]
    assert [f["kind"] for f in faults] == ["flooded"]
    assert replay(log).match.scores == list(outcome.scores)
    tracker.assert_none_left()


def test_a_bot_cannot_crowd_out_another_bots_stream_before_its_hello(
        tracker: Tracker, tmp_path: Path) -> None:
    """A bot that said hello opens streams that never speak; were every seat to share one
    server, each would evict the oldest stream waiting for its hello, the other bot's,
    disqualified for "no hello" (and the attacker would win). Each seat has a server and a
    socket of its own: the silent streams crowd out nobody's but the attacker's own, and
    the slow bot plays."""
    outcome = play([tracker.seat(misbehaving("crowd"), "crowd"),
                    tracker.seat(misbehaving("slow-hello"), "slow")],
                   seed=5, options=SHORT, limits=PATIENT)
    crowd, slow = outcome.seats
    assert slow.connected and slow.faults == [] and not slow.disqualified
    assert crowd.faults == [] and outcome.decisions > 10
    tracker.assert_none_left()


def test_a_seat_socket_takes_only_its_own_seat_token(tmp_path: Path) -> None:
    """A bot at another seat's address, with its own (valid) token, is refused there, and
    the token stays good at its own address."""

    async def scenario() -> tuple[str, bool]:
        async with served([0, 1], {"a" * 32: 0, "b" * 32: 1}) as session:
            assert session.addresses[0] != session.addresses[1]
            assert session.folders[0].parent == session.folders[1].parent
            async with grpc.aio.insecure_channel(session.addresses[1]) as channel:
                call = pb_grpc.RefereeServiceStub(channel).Play()
                await call.write(pb.PlayRequest(hello=pb.Hello(token="a" * 32)))
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await call.read()
                refusal = await call.details() or ""
            return refusal, "a" * 32 in session.seating.tokens

    refusal, kept = eventloop.run(scenario())
    assert "unknown or used token" in refusal and kept


def test_a_bot_holding_connections_does_not_starve_the_other_bots(
        tracker: Tracker, tmp_path: Path) -> None:
    """A bot holding connections to its own socket would use up the referee's descriptors
    (a soft limit of 1,024 is common), and its slower opponent's connection would be
    refused: disqualified for no hello. A seat's socket holds one connection (the others
    are reset at once), and the referee raises its limit to the hard one too."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 8192:
        raise AssertionError(f"this test needs a hard limit of open files of 8,192 or more, "
                             f"not {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        outcome = play([tracker.seat(misbehaving("hog"), "hog"),
                        tracker.seat(misbehaving("slow-hello"), "slow")],
                       seed=5, options=SHORT, limits=PATIENT)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    hog, slow = outcome.seats
    assert slow.connected and slow.faults == [] and not slow.disqualified
    assert hog.connected and outcome.decisions > 10
    tracker.assert_none_left()


def test_a_seat_socket_holds_one_connection_at_a_time(tmp_path: Path) -> None:
    """A bot needs one connection; a second one to its seat's socket is reset at once, and
    once the first is gone a new one is served (a client reconnecting)."""

    def answered(raw: socket.socket) -> bool:
        """Whether the server speaks HTTP/2 on the connection (its SETTINGS), rather than
        closing it."""
        raw.settimeout(10)
        try:
            return raw.recv(1024) != b""
        except (ConnectionResetError, BrokenPipeError):
            return False

    async def scenario() -> list[bool]:
        async with served([0], {"a" * 32: 0}) as session:
            path = session.addresses[0].removeprefix("unix:")
            seen = []
            first, second = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)
            for raw in (first, second):
                raw.connect(path)
                with contextlib.suppress(OSError):  # reset already
                    raw.sendall(HTTP2_PREFACE)
                await asyncio.sleep(0.2)  # accepted in order
            seen += [await asyncio.to_thread(answered, raw) for raw in (first, second)]
            first.close()
            second.close()
            for _ in range(100):  # the first connection's slot is freed once it is gone
                with socket.socket(socket.AF_UNIX) as again:
                    again.connect(path)
                    with contextlib.suppress(OSError):  # reset: the slot is not free yet
                        again.sendall(HTTP2_PREFACE)
                    if await asyncio.to_thread(answered, again):
                        seen.append(True)
                        break
                await asyncio.sleep(0.05)
            return seen

    assert eventloop.run(scenario()) == [True, False, True]


def test_a_ping_flood_on_a_second_connection_is_refused(tracker: Tracker) -> None:
    """A bot opens a second connection to its socket and floods it with HTTP/2 PINGs,
    reading the replies slowly; gRPC's work on them grows with the square of the flood
    (200,000 PINGs: a minute of the referee's CPU), enough to time out a well-behaved
    opponent. The second connection is refused before a byte is served, and the opponent
    plays untouched."""
    outcome = play([tracker.seat(misbehaving("side-flood"), "bad"),
                    tracker.seat(sample("greedy"), "good")],
                   seed=5, options=SHORT, limits=PATIENT)
    bad, good = outcome.seats
    assert bad.connected and good.faults == [] and outcome.decisions > 10
    said = (tracker.logs / "bad.stderr.log").read_text()
    assert "side connection: 0 bytes received, then closed" in said, said
    tracker.assert_none_left()


def test_a_seats_socket_is_gone_once_its_bot_said_hello(tmp_path: Path) -> None:
    """No one connects to a seat after its bot: its socket folder is removed at the hello
    (the connection made stays), the other seat's stays until its own."""

    async def scenario() -> tuple[bool, bool]:
        async with served([0, 1], {"a" * 32: 0, "b" * 32: 1}) as session:
            async with grpc.aio.insecure_channel(session.addresses[0]) as channel:
                call = pb_grpc.RefereeServiceStub(channel).Play()
                await call.write(pb.PlayRequest(hello=pb.Hello(token="a" * 32)))
                for _ in range(200):
                    if 0 in session.seating.connections:
                        break
                    await asyncio.sleep(0.01)
                gone = not session.folders[0].exists()
                kept = session.folders[1].exists()
            return gone, kept

    gone, kept = eventloop.run(scenario())
    assert gone and kept


@pytest.mark.parametrize("kind", ["window-updates", "settings"])
def test_a_bot_flooding_its_connection_with_http2_frames_is_cut_off(
        tracker: Tracker, tmp_path: Path, kind: str) -> None:
    """gRPC bounds no HTTP/2 frame but PINGs, and parses them on threads the whole
    referee shares. A bot writing WINDOW_UPDATE (or SETTINGS) frames on its own connection
    as fast as they are read keeps one busy: unchecked, its opponent's answers are read
    late, and the opponent is disqualified for timeouts (5 runs in 5, with these limits).
    The seat's relay counts what the bot sends: past its budget the bot is cut off
    (FLOODED), and its opponent plays on unharmed."""
    flooder = BotManifest(folder=Path(__file__).parent / "bots", name="h2flood",
                          version="0", language="python",
                          run=(sys.executable, "h2flood.py", kind))
    log = tmp_path / "match.jsonl.gz"
    outcome = play([tracker.seat(flooder, "flooder"), tracker.seat(sample("greedy"), "good")],
                   seed=5, log=log, options=SHORT,
                   limits=Limits(decision_deadline=0.5, time_bank=2.0, hello_timeout=3.0))
    bad, good = outcome.seats
    assert good.faults == [], good.faults
    assert [f.kind for f in bad.faults] == [FaultKind.FLOODED], bad.faults
    assert f"more than its budget of {BUDGET_BYTES} ahead" in bad.faults[0].reason
    assert outcome.places == (2, 1)
    assert replay(log).match.scores == list(outcome.scores)
    tracker.assert_none_left()
