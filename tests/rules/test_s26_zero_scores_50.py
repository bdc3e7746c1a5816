"""§26 ``zero_scores_50`` (reset zero): a hand left with exactly one card, a 0, scores 50."""

from __future__ import annotations

import pytest
from notation import Case, MatchCase, table

from arena.rules.options import OFFICIAL, RuleOptions

ZERO = RuleOptions(zero_scores_50=True)
ZERO_ALTERNATIVE = RuleOptions(zero_scores_50=True, alternative_scoring=True)

ZEROES = [
    Case(
        "§26 a hand left with exactly one card, a 0, scores 50 for it",
        "0: R3 | 1: G0 | 2: B9 | discard: R5 | turn: 0",
        ["play R3"],
        after="over: yes | winner: 0 | points: 59",
        options=ZERO,
    ),
    Case(
        "§26 a 0 with other cards scores its face value, 0",
        "0: R3 | 1: G0 G1 | 2: B9 | discard: R5 | turn: 0",
        ["play R3"],
        after="points: 10",
        options=ZERO,
    ),
    Case(
        "§26 two 0s are not a lone 0",
        "0: R3 | 1: G0 B0 | 2: B9 | discard: R5 | turn: 0",
        ["play R3"],
        after="points: 9",
        options=ZERO,
    ),
    Case(
        "§26 a lone card that is not a 0 scores its face value",
        "0: R3 | 1: G1 | 2: B9 | discard: R5 | turn: 0",
        ["play R3"],
        after="points: 10",
        options=ZERO,
    ),
    Case(
        "§26 off (official): a lone 0 scores 0",
        "0: R3 | 1: G0 | 2: B9 | discard: R5 | turn: 0",
        ["play R3"],
        after="points: 9",
        options=OFFICIAL,
    ),
]


@pytest.mark.parametrize("case", table(ZEROES))
def test_zero_scores_50(case: Case) -> None:
    case.check()


MATCHES = [
    MatchCase(
        "§26/§16 the winner's score counts a lone 0 as 50",
        "0: R3 | 1: G0 | 2: B9 | discard: R5 | turn: 0",
        ["play R3"],
        "scores: 59 0 0 | rounds: 1 | over: no",
        ZERO,
    ),
    MatchCase(
        "§26/§17 alternative scoring: the holder of a lone 0 adds 50 to its own total",
        "0: R3 | 1: G0 | 2: B9 | discard: R5 | turn: 0",
        ["play R3"],
        "scores: 0 50 9 | over: no",
        ZERO_ALTERNATIVE,
    ),
]


@pytest.mark.parametrize("case", table(MATCHES))
def test_zero_scores_50_in_the_match(case: MatchCase) -> None:
    case.check()
