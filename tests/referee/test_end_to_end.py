"""Sample bots as real processes play full matches to 500 over the referee; the results
equal the in-process runner's for the same seed and policies."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.bots.policies import POLICIES
from arena.bots.runner import play_match
from arena.referee.limits import Limits
from arena.referee.replay import replay

from .conftest import Tracker, misbehaving, play, sample

TABLES = {
    2: ["strategist", "random"],
    4: ["greedy", "strategist", "random", "greedy"],
    10: ["random", "greedy", "strategist"] * 3 + ["strategist"],
}


@pytest.mark.parametrize("players", sorted(TABLES))
def test_real_processes_match_the_in_process_runner(tracker: Tracker, tmp_path: Path,
                                                    players: int) -> None:
    names = TABLES[players]
    log = tmp_path / "match.jsonl.gz"
    seats = [tracker.seat(sample(name), f"seat{seat}") for seat, name in enumerate(names)]
    outcome = play(seats, seed=42, log=log,
                   limits=Limits(decision_deadline=5.0, time_bank=30.0, hello_timeout=20.0))
    expected = play_match([POLICIES[name] for name in names], 42, build=True)
    assert all(not report.faults for report in outcome.seats)
    assert outcome.scores == expected.scores
    assert outcome.places == expected.places
    assert outcome.rounds == expected.rounds
    assert outcome.decisions == expected.decisions
    assert max(outcome.scores) >= 500
    assert [report.name for report in outcome.seats] == names
    # The log replays through the engine to the same state.
    assert replay(log).match.scores == list(outcome.scores)
    tracker.assert_none_left()


def test_answers_padded_to_the_limit_are_logged_without_their_padding(
        tracker: Tracker, tmp_path: Path) -> None:
    """A bot may pad each answer with 15,000 bytes of a field the protocol does not know,
    which a log keeping them would hold (3 MB a match instead of 24 KB, copied to the site).
    Padding is no fault, but the log keeps an answer's known fields only, so it is as long
    as an honest bot's."""
    from arena.referee.log import decode_answer, read_log

    logs = {}
    for name, first in (("padded", misbehaving("padded")), ("legal", misbehaving("legal"))):
        logs[name] = tmp_path / f"{name}.jsonl.gz"
        outcome = play([tracker.seat(first, f"{name}0"), tracker.seat(sample("greedy"), "g")],
                       seed=7, log=logs[name],
                       limits=Limits(decision_deadline=5.0, time_bank=30.0, hello_timeout=20.0))
        assert not outcome.seats[0].faults  # padding is no fault: unknown fields are allowed
        answers = [decode_answer(r) for r in read_log(logs[name])
                   if r["type"] == "decision" and r["seat"] == 0 and r.get("answer")]
        assert len(answers) == outcome.seats[0].decisions > 10
        assert all(a is not None and a.ByteSize() < 16 for a in answers)
    # The same deals and moves (both play the first legal action): the same log, but timings.
    assert logs["padded"].stat().st_size < 2 * logs["legal"].stat().st_size
    tracker.assert_none_left()


@pytest.mark.parametrize(("held_most", "failing_call"), [(20_000, 1), (50, 4)],
                         ids=["at the match's end", "mid-match, a long match"])
def test_a_log_that_fails_mid_match_fails_the_match(
        tracker: Tracker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held_most: int,
        failing_call: int) -> None:
    """The log's lines are encoded once the bots have played (in a long match, whenever
    ``LOG_HELD_MOST`` are held, an event-loop callback while a bot thinks): a write that
    fails there (a full disk) still fails the match with that error, leaving no log and no
    bot, and a match failing mid-way stops there."""
    from arena.referee import loop as loop_module
    from arena.referee.log import MatchLogWriter

    calls = 0
    flush = MatchLogWriter.flush

    def failing_flush(self: MatchLogWriter) -> None:
        nonlocal calls
        calls += 1
        if calls == failing_call:
            raise OSError(28, "No space left on device")
        flush(self)

    monkeypatch.setattr(MatchLogWriter, "flush", failing_flush)
    monkeypatch.setattr(loop_module, "LOG_HELD_MOST", held_most)
    log = tmp_path / "match.jsonl.gz"
    seats = [tracker.seat(sample(name), f"seat{seat}")
             for seat, name in enumerate(["greedy", "random"])]
    with pytest.raises(OSError, match="No space left"):
        play(seats, seed=7, log=log,
             limits=Limits(decision_deadline=5.0, time_bank=30.0, hello_timeout=20.0))
    assert calls == failing_call  # it stopped at the failure, not after playing on
    assert not log.exists() and not list(tmp_path.glob("*.partial"))
    tracker.assert_none_left()
