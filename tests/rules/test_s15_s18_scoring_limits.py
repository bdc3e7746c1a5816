"""Going out (§15), standard (§16) and alternative (§17) scoring, turn and round limits (§18)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from notation import Case, log, parse, position, table

from arena.rules import events as ev
from arena.rules.actions import ACCEPT, CHOOSE_COLOUR, DRAW, KEEP, parse_action
from arena.rules.match import Match
from arena.rules.options import OFFICIAL, RuleOptions

GOING_OUT = [
    Case(
        "§15 playing the last card ends the round",
        "0: R1 | 1: G2 B+2 | 2: W Y9 | discard: R5 | turn: 0",
        ["play R1"],
        after="over: yes | winner: 0 | turn: - | decision: none | points: 81",
        log=["0 plays R1"],
        legal=[],
    ),
    Case(
        "§15 last card Draw Two: the next seat still draws 2, and they count",
        "0: R+2 | 1: G2 | 2: Y3 | draw: B7 B8 | discard: R5 | turn: 0",
        ["play R+2"],
        after="over: yes | winner: 0 | 1: G2 B7 B8 | points: 20",
        log=["0 plays R+2", "1 draws B8 B7 (draw_two)"],
    ),
    Case(
        "§15 last card Draw Two counter-clockwise hits the seat to the right",
        "0: R+2 | 1: G2 | 2: Y3 | draw: B7 B8 | discard: R5 | turn: 0 | direction: ccw",
        ["play R+2"],
        after="winner: 0 | 2: Y3 B7 B8 | points: 20",
        log=["0 plays R+2", "2 draws B8 B7 (draw_two)"],
    ),
    Case(
        "§15 last card Wild Draw Four: 4 drawn, no colour, no challenge",
        "0: W+4 | 1: G2 | 2: Y3 | draw: B1 B2 B3 B4 | discard: R5 | turn: 0",
        ["play W+4"],
        after="over: yes | winner: 0 | decision: none | 1: G2 B1 B2 B3 B4 | points: 15",
        log=["0 plays W+4", "1 draws B4 B3 B2 B1 (wild_draw_four)"],
        legal=[],
    ),
    Case(
        "§15 last card Wild Draw Four with two players",
        "0: W+4 | 1: G2 | draw: B1 B2 B3 B4 | discard: R5 | turn: 0",
        ["play W+4"],
        after="winner: 0 | sizes: 0 5 | points: 12",
        log=["0 plays W+4", "1 draws B4 B3 B2 B1 (wild_draw_four)"],
    ),
    Case(
        "§15 last card Wild Draw Four with a short pile: what there is",
        "0: W+4 | 1: G2 | draw: B1 | discard: R5 | turn: 0",
        ["play W+4"],
        after="winner: 0 | 1: G2 B1 R5 | points: 8",
        log=["0 plays W+4", "reshuffled 1 cards", "1 draws B1 R5 (wild_draw_four)"],
    ),
    Case(
        "§15 a last Wild needs no colour",
        "0: W | 1: G2 | 2: Y3 | discard: R5 | turn: 0",
        ["play W"],
        after="over: yes | winner: 0 | decision: none | colour: red | points: 5",
        log=["0 plays W"],
    ),
    Case(
        "§15 a last Skip skips nobody",
        "0: RS | 1: G2 | 2: Y3 | discard: R5 | turn: 0",
        ["play RS"],
        after="over: yes | winner: 0 | points: 5",
        log=["0 plays RS"],
    ),
    Case(
        "§15 a last Reverse reverses nothing",
        "0: RR | 1: G2 | 2: Y3 | discard: R5 | turn: 0",
        ["play RR"],
        after="over: yes | winner: 0 | direction: cw",
        log=["0 plays RR"],
    ),
    Case(
        "§16 points: numbers face value, actions 20, wilds 50",
        "0: R1 | 1: G0 G9 BS | 2: YR Y+2 | 3: W W+4 | discard: R5 | turn: 0",
        ["play R1"],
        after="winner: 0 | points: 169",
    ),
]


@pytest.mark.parametrize("case", table(GOING_OUT))
def test_going_out(case: Case) -> None:
    case.check()


@dataclass(frozen=True)
class MatchCase:
    """A match whose current round is arranged; the actions end that round."""

    name: str
    before: str
    scores: tuple[int, ...]
    actions: tuple[str, ...]
    scores_after: tuple[int, ...]
    over: bool
    log: tuple[str, ...]
    """The RoundEnded / MatchEnded lines."""
    options: RuleOptions = field(default=OFFICIAL)
    rounds_played: int = 0


def arranged_match(before: str, scores: tuple[int, ...], options: RuleOptions) -> Match:
    players = sum(key.isdigit() for key in parse(before))
    match = Match(players, random.Random(5), options)
    match.scores[:] = scores
    match.round = position(before, options=options, scores=match.scores, events=match.events)
    return match


def results(events: list[ev.Event]) -> list[str]:
    return log(e for e in events if isinstance(e, ev.RoundEnded | ev.MatchEnded))


THREE = "0: R1 | 1: G2 B+2 | 2: W Y9 | discard: R5 | turn: 0"  # seat 0 goes out for 81
ALT = RuleOptions(alternative_scoring=True)

MATCHES = [
    MatchCase(
        "§16 the seat that went out scores every card left in the other hands",
        THREE, (0, 0, 0), ("play R1",), (81, 0, 0), False,
        ("round 1 won by 0 for 81 points, scores 81 0 0",),
    ),
    MatchCase(
        "§16 points add to the running score of whichever seat went out",
        "0: Y2 Y3 | 1: G2 | 2: R1 | discard: R5 | turn: 2", (40, 0, 100),
        ("play R1",), (40, 0, 107), False,
        ("round 1 won by 2 for 7 points, scores 40 0 107",),
    ),
    MatchCase(
        "§16 reaching the target exactly at 500 ends the match",
        THREE, (419, 0, 0), ("play R1",), (500, 0, 0), True,
        ("round 1 won by 0 for 81 points, scores 500 0 0",
         "match over after 1 rounds, places 1 2 2"),
    ),
    MatchCase(
        "§16 one point short of the target, the match goes on",
        THREE, (418, 0, 0), ("play R1",), (499, 0, 0), False,
        ("round 1 won by 0 for 81 points, scores 499 0 0",),
    ),
    MatchCase(
        "§16 passing the target ends the match, highest score first",
        THREE, (480, 490, 10), ("play R1",), (561, 490, 10), True,
        ("round 1 won by 0 for 81 points, scores 561 490 10",
         "match over after 1 rounds, places 1 2 3"),
    ),
    MatchCase(
        "§16 equal scores share a place",
        "0: R1 | 1: G2 | 2: W Y9 | 3: B+2 | discard: R5 | turn: 0", (419, 100, 100, 50),
        ("play R1",), (500, 100, 100, 50), True,
        ("round 1 won by 0 for 81 points, scores 500 100 100 50",
         "match over after 1 rounds, places 1 2 2 4"),
    ),
    MatchCase(
        "§16 the target is an option",
        THREE, (0, 0, 0), ("play R1",), (81, 0, 0), True,
        ("round 1 won by 0 for 81 points, scores 81 0 0",
         "match over after 1 rounds, places 1 2 2"),
        options=RuleOptions(target_score=81),
    ),
    MatchCase(
        "§15 a last Draw Two's cards count in the score",
        "0: R+2 | 1: G2 | draw: B7 B8 | discard: R5 | turn: 0", (0, 0),
        ("play R+2",), (17, 0), False,
        ("round 1 won by 0 for 17 points, scores 17 0",),
    ),
    MatchCase(
        "§17 each seat adds the points left in its own hand",
        THREE, (0, 0, 0), ("play R1",), (0, 22, 59), False,
        ("round 1 won by 0 for 0 points, scores 0 22 59",),
        options=ALT,
    ),
    MatchCase(
        "§17 a seat reaching the target ends the match; the lowest total wins",
        THREE, (300, 480, 100), ("play R1",), (300, 502, 159), True,
        ("round 1 won by 0 for 0 points, scores 300 502 159",
         "match over after 1 rounds, places 2 3 1"),
        options=ALT,
    ),
    MatchCase(
        "§17 equal totals share a place",
        "0: R1 | 1: R4 G6 | 2: Y3 B7 | discard: R5 | turn: 0", (100, 490, 90),
        ("play R1",), (100, 500, 100), True,
        ("round 1 won by 0 for 0 points, scores 100 500 100",
         "match over after 1 rounds, places 1 3 1"),
        options=ALT,
    ),
    MatchCase(
        "§17 a last Draw Two's cards count against the seat that drew them",
        "0: R+2 | 1: G2 | draw: B7 B8 | discard: R5 | turn: 0", (0, 0),
        ("play R+2",), (0, 17), False,
        ("round 1 won by 0 for 0 points, scores 0 17",),
        options=ALT,
    ),
    MatchCase(
        "§18 a stalled round scores nothing and the match goes on",
        "0: G1 G2 | 1: Y1 | draw: B9 | discard: R5 | turns: 1000 | turn: 0", (10, 20),
        ("draw",), (10, 20), False,
        ("round 1 stalled, scores 10 20",),
    ),
    MatchCase(
        "§18 a stalled round scores nothing under alternative scoring either",
        "0: G1 G2 | 1: Y1 | draw: B9 | discard: R5 | turns: 1000 | turn: 0", (10, 20),
        ("draw",), (10, 20), False,
        ("round 1 stalled, scores 10 20",),
        options=ALT,
    ),
    MatchCase(
        "§18 the round limit ends the match as it stands",
        THREE, (100, 300, 200), ("play R1",), (181, 300, 200), True,
        ("round 1 won by 0 for 81 points, scores 181 300 200",
         "match over after 1 rounds, places 3 1 2 (round limit)"),
        options=RuleOptions(round_limit=1),
    ),
    MatchCase(
        "§18 a stalled round counts toward the round limit",
        "0: G1 G2 | 1: Y1 | 2: Y2 | draw: B9 | discard: R5 | turns: 1000 | turn: 0",
        (30, 30, 10), ("draw",), (30, 30, 10), True,
        ("round 1 stalled, scores 30 30 10",
         "match over after 1 rounds, places 1 1 3 (round limit)"),
        options=RuleOptions(round_limit=1),
    ),
    MatchCase(
        "§18 the default round limit is 100 rounds",
        THREE, (100, 300, 200), ("play R1",), (181, 300, 200), True,
        ("round 1 won by 0 for 81 points, scores 181 300 200",
         "match over after 100 rounds, places 3 1 2 (round limit)"),
        rounds_played=99,
    ),
    MatchCase(
        "§18 99 rounds played: the match goes on",
        THREE, (100, 300, 200), ("play R1",), (181, 300, 200), False,
        ("round 1 won by 0 for 81 points, scores 181 300 200",),
        rounds_played=98,
    ),
    MatchCase(
        "§18 reaching the target in the last allowed round is no round-limit end",
        THREE, (419, 0, 0), ("play R1",), (500, 0, 0), True,
        ("round 1 won by 0 for 81 points, scores 500 0 0",
         "match over after 1 rounds, places 1 2 2"),
        options=RuleOptions(round_limit=1),
    ),
]


@pytest.mark.parametrize("case", table(MATCHES))
def test_match_scoring_and_end(case: MatchCase) -> None:
    match = arranged_match(case.before, case.scores, case.options)
    match.rounds_played = case.rounds_played
    start = len(match.events)
    for action in case.actions:
        match.apply(parse_action(action))
    assert tuple(match.scores) == case.scores_after
    assert match.is_over is case.over
    assert results(match.events[start:]) == list(case.log)
    ended = [e for e in match.events[start:] if isinstance(e, ev.MatchEnded)]
    if case.over:
        assert match.current_seat == -1
        assert ended and ended[0].places == match.places
        assert match.round_limit_reached is ended[0].round_limit_reached
        with pytest.raises(ValueError, match="over"):
            match.apply(DRAW)
    else:
        assert not ended
        # The next round is dealt at once, by the next seat (§5).
        assert match.round.number == case.rounds_played + 2
        assert match.round.dealer == match.dealer


TURN_LIMIT = [
    Case(
        "§18 a round that would start turn 1001 ends stalled",
        "0: G1 G2 | 1: Y1 | draw: B9 | discard: R5 | turns: 1000 | turn: 0",
        ["draw"],
        after="over: stalled | winner: - | turn: - | decision: none | turns: 1001",
        log=["0 draws B9 (choice)", "0 keeps"],
        legal=[],
    ),
    Case(
        "§18 turn 1000 itself is played",
        "0: G1 G2 | 1: Y1 | draw: B9 | discard: R5 | turns: 999 | turn: 0",
        ["draw"],
        after="over: no | turn: 1 | turns: 1000",
    ),
    Case(
        "§18 playing the drawn card is part of the same turn",
        "0: G1 G2 | 1: Y1 | draw: R9 | discard: R5 | turns: 1000 | turn: 0",
        ["draw"],
        after="over: no | turn: 0 | decision: play_drawn_or_keep | turns: 1000",
    ),
    Case(
        "§18 going out on the last turn ends the round normally",
        "0: R1 | 1: Y1 | discard: R5 | turns: 1000 | turn: 0",
        ["play R1"],
        after="over: yes | winner: 0 | turns: 1000",
    ),
    Case(
        "§18 the turn limit is an option",
        "0: R1 R2 G2 | 1: Y1 R3 R4 | discard: R5 | turns: 4 | turn: 0",
        ["play R1", "play R3"],
        after="over: stalled | turns: 6 | 0: R2 G2 | 1: Y1 R4",
        log=["0 plays R1", "1 plays R3"],
        options=RuleOptions(turn_limit=5),
    ),
    Case(
        "§18 skipped seats do not count as turns",
        "0: RS R2 G2 | 1: Y1 R3 R4 | 2: Y2 | discard: R5 | turns: 4 | turn: 0",
        ["play RS"],
        after="over: no | turn: 2 | turns: 5",
        options=RuleOptions(turn_limit=5),
    ),
]


@pytest.mark.parametrize("case", table(TURN_LIMIT))
def test_turn_limit(case: Case) -> None:
    round_ = case.check()
    assert round_.stalled is ("stalled" in case.after)


def test_seats_that_always_draw_stall_a_real_round() -> None:
    """§18: bots may always draw instead of playing, so only the turn limit ends the round."""
    match = Match(3, random.Random(2))
    first = match.round
    while match.round is first:
        legal = match.legal_actions()
        for action in (DRAW, KEEP, ACCEPT, CHOOSE_COLOUR):
            if action in legal:
                match.apply(action)
                break
    ended = next(e for e in match.events if isinstance(e, ev.RoundEnded))
    assert ended.stalled and ended.winner == -1 and ended.points == 0
    assert ended.scores == (0, 0, 0)
    assert first.stalled and first.turns == OFFICIAL.turn_limit + 1 == 1001
    assert match.rounds_played == 1 and not match.is_over
    assert match.round.number == 2


def test_stalled_rounds_reach_the_round_limit_in_a_real_match() -> None:
    """§18: with every round stalled, the round limit is what ends the match."""
    options = RuleOptions(turn_limit=30, round_limit=3)
    match = Match(2, random.Random(4), options)
    while not match.is_over:
        legal = match.legal_actions()
        match.apply(next(a for a in (DRAW, KEEP, ACCEPT, CHOOSE_COLOUR) if a in legal))
    ends = [e for e in match.events if isinstance(e, ev.RoundEnded)]
    assert [e.stalled for e in ends] == [True, True, True]
    assert match.round_limit_reached and match.places == (1, 1)
