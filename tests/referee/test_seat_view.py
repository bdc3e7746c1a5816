"""The seat's view in the match log: the request each bot received and its answer, as on
the wire, who made each move, and the timings on lines of their own (outside the
determinism guarantee)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from arena.protocol import pb
from arena.protocol.convert import action_from_message, event_message, observation_from_request
from arena.referee.faults import FaultKind
from arena.referee.limits import Limits
from arena.referee.log import decode_answer, decode_asked, game_lines, read_log
from arena.referee.replay import replay
from arena.rules import events as ev
from arena.rules.options import RuleOptions
from tests.referee.conftest import Tracker, misbehaving, play, sample

SHORT = RuleOptions(target_score=100)


def test_every_bot_decision_keeps_the_request_and_answer_as_sent(
        tmp_path: Path, tracker: Tracker) -> None:
    log = tmp_path / "m.jsonl.gz"
    play([tracker.seat(sample("greedy"), "seat0-greedy"),
          tracker.seat(misbehaving("illegal"), "seat1-illegal")], seed=3, log=log,
         options=SHORT)
    records = list(read_log(log))
    assert replay(log).match.is_over  # the new lines do not disturb the replay
    decisions = [r for r in records if r["type"] == "decision"]
    assert decisions and all(r["asked"] for r in decisions)
    for record in decisions:
        asked = decode_asked(record)
        assert asked is not None
        assert asked.request_id == record["request"]
        observation = observation_from_request(asked)
        assert observation.seat == record["seat"]
        legal = [action_from_message(a) for a in asked.legal_actions]
        assert record["action"] in legal or record["action"] ^ 128 in legal
    fault_decision = next(r for r in decisions if r["source"] == "default")
    assert fault_decision["seat"] == 1
    answer = decode_answer(fault_decision)
    assert answer is not None and answer.action_index == 999  # what the bot sent
    timings = {(r["seat"], r["request"]): r for r in records if r["type"] == "timing"}
    assert set(timings) == {(r["seat"], r["request"]) for r in decisions}
    for timing in timings.values():
        assert timing["latency_ms"] >= 0
        assert timing["bank_ms"] == 0.0  # play() gives no time bank


def test_the_same_seed_gives_the_same_lines_but_the_timings(tmp_path: Path,
                                                            tracker: Tracker) -> None:
    logs = []
    for run in range(2):
        log = tmp_path / f"run{run}.jsonl.gz"
        play([tracker.seat(sample("strategist"), f"a{run}"),
              tracker.seat(sample("greedy"), f"b{run}")], seed=11, log=log, options=SHORT)
        logs.append(log)
    first, second = (game_lines(log) for log in logs)
    assert first == second
    # Lines built by hand on the hot path (timing, the wire fields) are what json.dumps
    # would write: one encoding for every line.
    for line in gzip.decompress(logs[0].read_bytes()).decode().splitlines():
        assert json.dumps(json.loads(line), separators=(",", ":")) == line
    assert b'"asked"' in first and b'"type":"timing"' not in first
    # ... while the timing lines (the clock's) are there, beside them.
    assert any(r["type"] == "timing" for r in read_log(logs[0]))


def test_in_process_and_autopilot_moves_carry_no_request(tmp_path: Path,
                                                         tracker: Tracker) -> None:
    log = tmp_path / "m.jsonl.gz"
    play([tracker.seat(sample("greedy"), "seat0-greedy"),
          tracker.seat(misbehaving("disconnect"), "seat1-gone")], seed=5, log=log,
         options=SHORT)
    decisions = [r for r in read_log(log) if r["type"] == "decision"]
    autopilot = [r for r in decisions if r["source"] == "autopilot"]
    assert len(autopilot) > 1, "the disconnected seat is played by the autopilot"
    # The request the bot never answered is kept (with no answer); after it, none is sent.
    assert decode_asked(autopilot[0]) is not None and autopilot[0]["answer"] is None
    assert all("asked" not in r and decode_asked(r) is None for r in autopilot[1:])


def test_each_bot_is_sent_every_event_and_fault_once_in_the_logs_order(
        tmp_path: Path, tracker: Tracker, monkeypatch: pytest.MonkeyPatch) -> None:
    # What a seat is sent is the timeline as it sees it (§19), faults in their place, each
    # item once: also for a seat disqualified mid-match (it is sent the rest at the end),
    # and although the referee encodes a seat's events ahead, while another bot thinks.
    # Read from what the referee writes to each stream (a bot's own record could be cut
    # short: a bot slow to hang up is killed a second after the match's end).
    from arena.referee.connection import Connection

    sent: dict[int, list[bytes]] = {0: [], 1: []}
    write = Connection.write

    async def writing(self: Connection, message: Any) -> bool:
        data = message if type(message) is bytes else message.SerializeToString()
        sent[self.seat].append(data)
        return await write(self, message)

    monkeypatch.setattr(Connection, "write", writing)
    log = tmp_path / "m.jsonl.gz"
    outcome = play([tracker.seat(misbehaving("illegal"), "seat0-illegal"),
                    tracker.seat(misbehaving("bad-play_or_draw"), "seat1-bad")],
                   seed=5, log=log, options=SHORT,
                   limits=Limits(decision_deadline=2.0, time_bank=0.0, strike_limit=3,
                                 hello_timeout=5.0))
    assert outcome.disqualified == (1,)
    timeline = [r for r in read_log(log) if r["type"] in ("event", "fault")]
    assert sum(r["type"] == "fault" for r in timeline) == 5  # 1 + 3 strikes + the limit
    for seat in range(2):
        expected = []
        for record in timeline:
            if record["type"] == "event":
                event = ev.seen_by(ev.from_record(record), seat)
                expected.append(event_message(event).SerializeToString())
            else:
                # A seat reads its own fault's reason; the others only its kind (the
                # reason quotes what the bot sent: a channel to a partner).
                kind = FaultKind[record["kind"].upper()]
                reason = (record["reason"] if record["seat"] == seat
                          else kind.name.lower().replace("_", " "))
                expected.append(pb.Event(fault=pb.Fault(
                    seat=record["seat"], kind=kind.value, reason=reason,
                    strikes=record["strikes"],
                    disqualified=record["disqualified"])).SerializeToString())
        received = [event.SerializeToString() for data in sent[seat]
                    for event in pb.PlayResponse.FromString(data).events]
        assert received == expected
