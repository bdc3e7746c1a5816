"""§30 ``uno_in_seven`` (UNO in 7 rounds): the first time a seat empties its hand it draws 6
and plays on, then 5, ... down to 1; the seat that empties a hand after drawing 1 goes out."""

from __future__ import annotations

import pytest
from notation import Case, table

from arena.rules.options import RuleOptions

SEVEN = RuleOptions(uno_in_seven=True)
SEVEN_AND_SWAPS = RuleOptions(uno_in_seven=True, seven_o=True)

DRAW = "draw: Y9 Y8 Y7 Y6 G6 G5 G4 G3 G2 G1 B6 B5 B4 B3 B2 B1"

REFILLS = [
    Case(
        "§30 the first time a seat empties its hand it draws 6 and plays on",
        f"0: R3 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0",
        ["play R3"],
        after="over: no | 0: B1 B2 B3 B4 B5 B6 | refills: 5 6 6 | turn: 1 | colour: red",
        log=["0 plays R3", "0 empties its hand, draws 6", "0 draws B1 B2 B3 B4 B5 B6 (refill)"],
        options=SEVEN,
    ),
    Case(
        "§30 every seat starts at 6 (arranged: the refills written out)",
        f"0: R3 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0 | refills: 6 6 6",
        [],
        after="refills: 6 6 6",
        options=SEVEN,
    ),
    Case(
        "§30 the next time, one card fewer: 5",
        f"0: R3 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0 | refills: 5 6 6",
        ["play R3"],
        after="sizes: 5 2 1 | refills: 4 6 6",
        log=["0 plays R3", "0 empties its hand, draws 5", "0 draws B1 B2 B3 B4 B5 (refill)"],
        options=SEVEN,
    ),
    Case(
        "§30 down to 1",
        f"0: R3 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0 | refills: 1 6 6",
        ["play R3"],
        after="0: B1 | refills: 0 6 6 | over: no",
        options=SEVEN,
    ),
    Case(
        "§30 the seat that empties a hand after drawing 1 goes out: the round ends",
        f"0: R3 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0 | refills: 0 6 6",
        ["play R3"],
        after="over: yes | winner: 0 | points: 6",
        log=["0 plays R3"],
        options=SEVEN,
    ),
    Case(
        "§30 the emptying card still takes effect: a Draw Two hits the next seat",
        f"0: R+2 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2"],
        after="1: B1 B2 G1 G2 | turn: 2 | sizes: 6 4 1",
        log=["0 plays R+2", "0 empties its hand, draws 6", "0 draws B1 B2 B3 B4 B5 B6 (refill)",
             "1 draws G1 G2 (draw_two)", "1 skipped"],
        options=SEVEN,
    ),
    Case(
        "§30 a seat that emptied its hand names the colour of its last Wild",
        f"0: W | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0",
        ["play W"],
        after="turn: 0 | decision: choose_colour | sizes: 6 2 1",
        options=SEVEN,
    ),
    Case(
        "§30/§23 a 7 that empties the hand swaps nothing",
        f"0: R7 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0",
        ["play R7"],
        after="turn: 1 | decision: play_or_draw | 0: B1 B2 B3 B4 B5 B6 | 1: B1 B2",
        options=SEVEN_AND_SWAPS,
    ),
]


@pytest.mark.parametrize("case", table(REFILLS))
def test_uno_in_seven(case: Case) -> None:
    case.check()
