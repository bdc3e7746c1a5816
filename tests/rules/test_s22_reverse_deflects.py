"""§22 ``reverse_deflects``: a Reverse of the current colour passes a pending Draw Two or
Wild Draw Four back to the seat that played it, which may answer it in the same ways."""

from __future__ import annotations

import pytest
from notation import Case, table

from arena.rules.options import RuleOptions

DEFLECTS = RuleOptions(reverse_deflects=True)
BOTH = RuleOptions(reverse_deflects=True, stacking=True)
PLUS_TEN = RuleOptions(reverse_deflects=True, draw_ten=True)

DRAW = "draw: Y9 Y8 Y7 Y6 B6 B5 B4 B3 B2 B1"

DEFLECTIONS = [
    Case(
        "§22 a pending Draw Two may be deflected with a Reverse of the current colour",
        f"0: R+2 R1 G9 | 1: RR B1 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2"],
        after="turn: 1 | decision: stack_or_accept | pending: 2",
        legal=["play RR", "accept"],
        options=DEFLECTS,
    ),
    Case(
        "§22 the deflection flips the direction and passes the penalty to the draw card's player",
        f"0: R+2 R1 G9 | 1: RR B1 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play RR"],
        after="turn: 0 | direction: ccw | decision: stack_or_accept | pending: 2 | 1: B1 B7",
        log=["0 plays R+2", "1 faces 2", "1 plays RR", "direction ccw", "0 faces 2"],
        legal=["accept"],
        options=DEFLECTS,
    ),
    Case(
        "§22 a Reverse of another colour does not deflect",
        f"0: R+2 R1 G9 | 1: GR B1 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2"],
        legal=["accept"],
        options=DEFLECTS,
    ),
    Case(
        "§22 the draw card's player accepts: it draws and loses its turn, play goes on the new way",
        f"0: R+2 R1 G9 | 1: RR B1 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play RR", "accept"],
        after="0: R1 G9 B1 B2 | turn: 2 | direction: ccw | decision: play_or_draw",
        log=["0 plays R+2", "1 faces 2", "1 plays RR", "direction ccw", "0 faces 2",
             "0 accepts 2", "0 draws B1 B2 (penalty)", "0 skipped"],
        options=DEFLECTS,
    ),
    Case(
        "§22 the draw card's player may answer in the same ways: deflect it back again",
        f"0: R+2 RR G9 | 1: RR B1 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play RR", "play RR uno"],
        after="turn: 1 | direction: cw | pending: 2 | decision: stack_or_accept",
        log=["0 plays R+2", "1 faces 2", "1 plays RR", "direction ccw", "0 faces 2",
             "0 plays RR", "0 calls UNO", "direction cw", "1 faces 2"],
        options=DEFLECTS,
    ),
    Case(
        "§22 with stacking, the draw card's player may stack on the deflected penalty",
        f"0: R+2 Y+2 G9 | 1: RR B1 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play RR", "play Y+2 uno"],
        after="turn: 2 | direction: ccw | pending: 4",
        log=["0 plays R+2", "1 faces 2", "1 plays RR", "direction ccw", "0 faces 2",
             "0 plays Y+2", "0 calls UNO", "2 faces 4"],
        options=BOTH,
    ),
    Case(
        "§22 a Wild Draw Four is deflected by a Reverse of the colour it named",
        f"0: W+4 R1 G9 | 1: GR RR B1 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4", "colour green"],
        legal=["play GR", "challenge", "accept"],
        options=DEFLECTS,
    ),
    Case(
        "§22 a deflected Wild Draw Four cannot be challenged by its own player",
        f"0: W+4 R1 G9 | 1: GR RR B1 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4", "colour green", "play GR", "accept"],
        after="0: R1 G9 B1 B2 B3 B4 | turn: 2 | direction: ccw | colour: green",
        log=["0 plays W+4", "0 names green", "1 faces 4", "1 plays GR", "direction ccw",
             "0 faces 4", "0 accepts 4", "0 draws B1 B2 B3 B4 (penalty)", "0 skipped"],
        options=DEFLECTS,
    ),
    Case(
        "§22 two players: the deflected penalty goes back to the other seat",
        f"0: R+2 R1 G9 | 1: RR B1 B7 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play RR"],
        after="turn: 0 | direction: ccw | pending: 2",
        log=["0 plays R+2", "1 faces 2", "1 plays RR", "direction ccw", "0 faces 2"],
        options=DEFLECTS,
    ),
    Case(
        "§22 only a Draw Two or a Wild Draw Four is deflected, not a +10 (§28)",
        f"0: W+10 R1 G9 | 1: GR B1 | 2: G3 | {DRAW} | discard: R5 | turn: 0",
        ["play W+10", "colour green"],
        after="turn: 1 | pending: 10",
        legal=["accept"],
        options=PLUS_TEN,
    ),
    Case(
        "§15/§22 a Reverse played as the last card still passes the penalty on",
        f"0: R+2 R1 G9 | 1: RR | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play RR"],
        after="over: yes | winner: 1 | 0: R1 G9 B1 B2",
        log=["0 plays R+2", "1 faces 2", "1 plays RR", "direction ccw",
             "0 draws B1 B2 (penalty)"],
        options=DEFLECTS,
    ),
    Case(
        "§22 a Reverse with nothing pending is an ordinary Reverse",
        f"0: RR R1 G9 | 1: RR B1 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play RR"],
        after="turn: 2 | direction: ccw | decision: play_or_draw | pending: 0",
        log=["0 plays RR", "direction ccw"],
        options=DEFLECTS,
    ),
    Case(
        "§22/§29 the draw card's player went out with it: the penalty passes back to the next"
        " seat still in play",
        f"0: R+2 | 1: RR B2 B3 | 2: G3 G4 | 3: Y1 Y2 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play RR"],
        after="turn: 3 | decision: stack_or_accept | pending: 2 | direction: ccw",
        log=["0 plays R+2", "0 out, place 1", "1 faces 2", "1 plays RR", "direction ccw",
             "3 faces 2"],
        options=RuleOptions(reverse_deflects=True, until_the_last=True),
    ),
]


@pytest.mark.parametrize("case", table(DEFLECTIONS))
def test_reverse_deflects(case: Case) -> None:
    case.check()
