"""§31 ``lazy_scoring``: no points. Each round has a winner (first out; it starts the next
round) and a loser (most points left in hand; it deals the next round). A match is
``rounds`` rounds; places by rounds won, then by fewer rounds lost."""

from __future__ import annotations

import random

import pytest
from notation import MatchCase, match_in, table

from arena.rules import events as ev
from arena.rules.actions import parse_action
from arena.rules.match import Match
from arena.rules.options import RuleOptions
from arena.rules.scoring import lazy_places

LAZY = RuleOptions(lazy_scoring=True)
LAZY_LAST = RuleOptions(lazy_scoring=True, until_the_last=True)
ONE_ROUND = RuleOptions(lazy_scoring=True, rounds=1)

ROUNDS = [
    MatchCase(
        "§31 the seat that went out wins the round; the most points in hand loses it",
        "0: R3 | 1: R9 G1 | 2: W | 3: B2 B4 | discard: R5 | turn: 0",
        ["play R3"],
        "won: 1 0 0 0 | lost: 0 0 1 0 | scores: 1 0 0 0 | over: no | rounds: 1",
        LAZY,
        log=["0 plays R3", "round 1 lost by 2", "round 1 won by 0 for 0 points, scores 1 0 0 0"],
    ),
    MatchCase(
        "§31 the loser deals the next round and the winner starts it",
        "0: R3 | 1: R9 G1 | 2: W | 3: B2 B4 | discard: R5 | turn: 0",
        ["play R3"],
        "dealer: 2 | starter: 0",
        LAZY,
    ),
    MatchCase(
        "§31 a tie for the most points goes to the tied seat first clockwise from the winner",
        "0: R9 | 1: B3 | 2: R9 G1 | 3: G4 G6 | discard: R5 | turn: 0",
        ["play R9"],
        "lost: 0 0 1 0 | dealer: 2",
        LAZY,
    ),
    MatchCase(
        # Every seat but the winner has 0 points: the tie goes to the seat left with cards,
        # not to the seat out second (first clockwise from the winner).
        "§31/§29 a tie for the most points goes to a seat still holding cards",
        "0: R3 | 1: R4 | 2: R0 | draw: Y9 Y8 Y7 | discard: R9 | turn: 0",
        ["play R3", "play R4"],
        "won: 1 0 0 | lost: 0 0 1 | dealer: 2 | starter: 0",
        LAZY_LAST,
    ),
    MatchCase(
        "§31 the tie-break counts clockwise from the winner, wrapping round",
        "0: G4 G6 | 1: R8 | 2: B3 | 3: R9 G1 | discard: R5 | turn: 1",
        ["play R8"],
        "won: 0 1 0 0 | lost: 0 0 0 1 | dealer: 3 | starter: 1",
        LAZY,
    ),
    MatchCase(
        "§31 a match is `rounds` rounds: places by rounds won, then fewer lost",
        "0: R3 | 1: R9 G1 | 2: W | discard: R5 | turn: 0",
        ["play R3"],
        "over: yes | places: 1 2 3 | scores: 1 0 0",
        ONE_ROUND,
    ),
    MatchCase(
        "§31/§26 the loser's points count a lone 0 as 50",
        "0: R3 | 1: G0 | 2: B9 | discard: R5 | turn: 0",
        ["play R3"],
        "lost: 0 1 0",
        RuleOptions(lazy_scoring=True, zero_scores_50=True),
    ),
]


@pytest.mark.parametrize("case", table(ROUNDS))
def test_lazy_scoring(case: MatchCase) -> None:
    case.check()


@pytest.mark.parametrize(("won", "lost", "places"), [
    pytest.param((2, 1, 1), (0, 1, 2), (1, 2, 3), id="§31 places by rounds won, then fewer lost"),
    pytest.param((1, 1, 1), (1, 1, 1), (1, 1, 1), id="§31 equal records share a place"),
    pytest.param((0, 3, 0), (2, 0, 1), (3, 1, 2), id="§31 more rounds won beats fewer lost"),
])
def test_lazy_places(won: tuple[int, ...], lost: tuple[int, ...], places: tuple[int, ...]
                     ) -> None:
    assert lazy_places(won, lost) == places


def test_the_match_ends_after_rounds_rounds_with_lazy_places() -> None:
    """§31: exactly ``rounds`` rounds (no target score), places by won then lost."""
    options = RuleOptions(lazy_scoring=True, rounds=3)
    for seed in range(20):
        match = Match(3, random.Random(seed), options)
        chooser = random.Random(seed)
        while not match.is_over:
            match.apply(chooser.choice(match.legal_actions()))
        assert match.rounds_played == 3
        assert sum(match.rounds_won) + sum(
            1 for e in match.events if isinstance(e, ev.RoundEnded) and e.stalled) == 3
        assert match.places == lazy_places(match.rounds_won, match.rounds_lost)
        assert list(match.scores) == match.rounds_won
        assert match.round_limit_reached is False


def test_a_stalled_round_has_no_winner_nor_loser_and_the_deal_passes_left() -> None:
    """§18/§31: the turn limit ends the round with nobody winning or losing it."""
    match = match_in("0: R3 G3 | 1: B9 | 2: Y4 | discard: G5 | turn: 0 | turns: 1",
                     RuleOptions(lazy_scoring=True, turn_limit=1))
    match.apply(parse_action("play G3"))
    assert (match.rounds_won, match.rounds_lost, match.dealer) == ([0, 0, 0], [0, 0, 0], 1)
    ended = next(e for e in match.events if isinstance(e, ev.RoundEnded))
    assert ended.stalled and ended.winner == -1
    assert not any(isinstance(e, ev.RoundLoser) for e in match.events)
