"""§21 ``stacking`` (UNO Stacked): pending draw penalties add up; one card per turn; the
challenge of the last Wild Draw Four moves the whole total."""

from __future__ import annotations

import pytest
from notation import Case, table

from arena.rules.options import RuleOptions

STACKING = RuleOptions(stacking=True)
TWO_ON_FOUR = RuleOptions(stacking=True, stack_two_on_four=True)

DRAW = "draw: Y9 Y8 Y7 Y6 B6 B5 B4 B3 B2 B1"

STACKED = [
    # -- Draw Two on Draw Two
    Case(
        "§21 a Draw Two leaves the penalty pending on the next seat",
        f"0: R+2 R1 G9 | 1: Y+2 B1 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2"],
        after="turn: 1 | decision: stack_or_accept | pending: 2 | sizes: 2 2 2 | colour: red",
        log=["0 plays R+2", "1 faces 2"],
        legal=["play Y+2 uno", "accept"],
        options=STACKING,
    ),
    Case(
        "§21 a Draw Two of any colour stacks: 2+2 = 4 for the next seat",
        f"0: R+2 R1 G9 | 1: Y+2 B1 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play Y+2"],
        after="turn: 2 | decision: stack_or_accept | pending: 4 | colour: yellow",
        log=["0 plays R+2", "1 faces 2", "1 plays Y+2", "2 faces 4"],
        legal=["accept"],
        options=STACKING,
    ),
    Case(
        "§21 the first seat that does not stack draws the total and loses its turn",
        f"0: R+2 R1 G9 | 1: Y+2 B1 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play Y+2", "accept"],
        after="2: G3 G4 B1 B2 B3 B4 | turn: 0 | decision: play_or_draw | pending: 0",
        log=["0 plays R+2", "1 faces 2", "1 plays Y+2", "2 faces 4", "2 accepts 4",
             "2 draws B1 B2 B3 B4 (penalty)", "2 skipped"],
        options=STACKING,
    ),
    Case(
        "§21 penalties add up: 2+2+2 = 6",
        f"0: R+2 R1 G9 | 1: Y+2 B1 B7 | 2: G+2 G4 G5 | 3: B8 B9 | {DRAW} | discard: R5"
        " | turn: 0",
        ["play R+2", "play Y+2", "play G+2", "accept"],
        after="3: B8 B9 B1 B2 B3 B4 B5 B6 | turn: 0 | colour: green",
        log=["0 plays R+2", "1 faces 2", "1 plays Y+2", "2 faces 4", "2 plays G+2",
             "3 faces 6", "3 accepts 6", "3 draws B1 B2 B3 B4 B5 B6 (penalty)", "3 skipped"],
        options=STACKING,
    ),
    Case(
        "§21 one card per turn: a seat holding two Draw Twos stacks one, the next seat faces it",
        f"0: R+2 R1 G9 | 1: Y+2 G+2 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play G+2"],
        after="1: Y+2 B7 | turn: 2 | pending: 4",
        options=STACKING,
    ),
    Case(
        "§21 every Draw Two held is offered, then accept",
        f"0: R+2 R1 G9 | 1: Y+2 G+2 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2"],
        legal=["play Y+2", "play G+2", "accept"],
        options=STACKING,
    ),
    Case(
        "§21 a seat may accept though it holds a Draw Two",
        f"0: R+2 R1 G9 | 1: Y+2 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "accept"],
        after="1: Y+2 B7 B1 B2 | turn: 2 | decision: play_or_draw",
        log=["0 plays R+2", "1 faces 2", "1 accepts 2", "1 draws B1 B2 (penalty)",
             "1 skipped"],
        options=STACKING,
    ),
    Case(
        "§21 a pending Draw Two cannot be challenged, nor answered by a Wild Draw Four",
        f"0: R+2 R1 G9 | 1: W+4 R3 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2"],
        legal=["accept"],
        options=STACKING,
    ),
    Case(
        "§21 two players: a stacked Draw Two comes back to the first player",
        f"0: R+2 R1 G9 | 1: Y+2 B1 B7 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play Y+2"],
        after="turn: 0 | decision: stack_or_accept | pending: 4",
        log=["0 plays R+2", "1 faces 2", "1 plays Y+2", "0 faces 4"],
        options=STACKING,
    ),
    Case(
        "§21 a stacked Draw Two that leaves one card carries the UNO call",
        f"0: R+2 R1 G9 | 1: Y+2 B7 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play Y+2"],
        after="1: B7 B1 B2 | turn: 2",
        log=["0 plays R+2", "1 faces 2", "1 plays Y+2", "1 caught without UNO",
             "1 draws B1 B2 (uno_penalty)", "2 faces 4"],
        options=STACKING,
    ),
    Case(
        "§15/§21 a stacked last card ends the round: the next seat draws the whole total",
        f"0: R+2 R1 G9 | 1: Y+2 | 2: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play Y+2"],
        after="over: yes | winner: 1 | 2: G3 G4 B1 B2 B3 B4 | points: 27",
        log=["0 plays R+2", "1 faces 2", "1 plays Y+2", "2 draws B1 B2 B3 B4 (penalty)"],
        options=STACKING,
    ),
    # -- Wild Draw Four on Wild Draw Four
    Case(
        "§21 a Wild Draw Four answers only a Wild Draw Four (a Draw Two does not)",
        f"0: W+4 R1 | 1: G+2 W+4 B1 | 2: G3 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4 uno", "colour green"],
        after="turn: 1 | decision: stack_or_accept | pending: 4 | colour: green",
        log=["0 plays W+4", "0 calls UNO", "0 names green", "1 faces 4"],
        legal=["play W+4", "challenge", "accept"],
        options=STACKING,
    ),
    Case(
        "§21 Wild Draw Four on Wild Draw Four: 4+4 = 8, the last player names the colour",
        f"0: W+4 R1 | 1: G+2 W+4 B1 | 2: G3 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4 uno", "colour green", "play W+4", "colour yellow"],
        after="turn: 2 | decision: stack_or_accept | pending: 8 | colour: yellow",
        log=["0 plays W+4", "0 calls UNO", "0 names green", "1 faces 4", "1 plays W+4",
             "1 names yellow", "2 faces 8"],
        legal=["challenge", "accept"],
        options=STACKING,
    ),
    Case(
        "§21 accepting stacked Wild Draw Fours: draws the total, loses its turn",
        f"0: W+4 R1 | 1: G+2 W+4 B1 | 2: G3 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4 uno", "colour green", "play W+4", "colour yellow", "accept"],
        after="2: G3 B1 B2 B3 B4 B5 B6 Y6 Y7 | turn: 0 | colour: yellow",
        log=["0 plays W+4", "0 calls UNO", "0 names green", "1 faces 4", "1 plays W+4",
             "1 names yellow", "2 faces 8", "2 accepts 8",
             "2 draws B1 B2 B3 B4 B5 B6 Y6 Y7 (penalty)", "2 skipped"],
        options=STACKING,
    ),
    Case(
        "§21 challenge the last Wild Draw Four, guilty: its player draws the whole total",
        f"0: W+4 R1 | 1: G+2 W+4 B1 | 2: G3 Y3 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4 uno", "colour green", "play W+4", "colour yellow", "challenge"],
        after="1: G+2 B1 B1 B2 B3 B4 B5 B6 Y6 Y7 | 2: G3 Y3 | turn: 2"
              " | decision: play_or_draw | colour: yellow | pending: 0",
        log=["0 plays W+4", "0 calls UNO", "0 names green", "1 faces 4", "1 plays W+4",
             "1 names yellow", "2 faces 8", "2 challenges 1",
             "1 guilty, hand shown to 2: G+2 B1", "1 draws B1 B2 B3 B4 B5 B6 Y6 Y7 "
             "(challenge_guilty)"],
        legal=["play Y3 uno", "draw"],
        options=STACKING,
    ),
    Case(
        "§21 challenge the last Wild Draw Four, innocent: the challenger draws the total plus 2",
        f"0: W+4 R1 | 1: W+4 B1 | 2: G3 Y3 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4 uno", "colour green", "play W+4 uno", "colour yellow", "challenge"],
        after="2: G3 Y3 B1 B2 B3 B4 B5 B6 Y6 Y7 Y8 Y9 | turn: 0 | colour: yellow",
        log=["0 plays W+4", "0 calls UNO", "0 names green", "1 faces 4", "1 plays W+4",
             "1 calls UNO", "1 names yellow", "2 faces 8", "2 challenges 1",
             "1 innocent, hand shown to 2: B1",
             "2 draws B1 B2 B3 B4 B5 B6 Y6 Y7 Y8 Y9 (challenge_innocent)", "2 skipped"],
        options=STACKING,
    ),
    Case(
        "§21 a single Wild Draw Four challenged under stacking: guilty draws 4, as in §13",
        f"0: W+4 R1 G7 | 1: B1 G2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4", "colour green", "challenge"],
        after="0: R1 G7 B1 B2 B3 B4 | turn: 1 | decision: play_or_draw",
        log=["0 plays W+4", "0 names green", "1 faces 4", "1 challenges 0",
             "0 guilty, hand shown to 1: R1 G7", "0 draws B1 B2 B3 B4 (challenge_guilty)"],
        options=STACKING,
    ),
    # -- stack_two_on_four (seed 004)
    Case(
        "§21 stack_two_on_four: a Draw Two of the colour named answers a Wild Draw Four",
        f"0: W+4 R1 | 1: G+2 R+2 B1 | 2: G3 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4 uno", "colour green"],
        legal=["play G+2", "challenge", "accept"],
        options=TWO_ON_FOUR,
    ),
    Case(
        "§21 stack_two_on_four: the Draw Two adds 2 to the Wild Draw Four's 4",
        f"0: W+4 R1 | 1: G+2 R+2 B1 | 2: G3 B+2 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4 uno", "colour green", "play G+2"],
        after="turn: 2 | pending: 6 | colour: green",
        log=["0 plays W+4", "0 calls UNO", "0 names green", "1 faces 4", "1 plays G+2",
             "2 faces 6"],
        legal=["play B+2 uno", "accept"],
        options=TWO_ON_FOUR,
    ),
    Case(
        "§21 without stack_two_on_four, no Draw Two answers a Wild Draw Four",
        f"0: W+4 R1 | 1: G+2 R+2 B1 | 2: G3 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4 uno", "colour green"],
        legal=["challenge", "accept"],
        options=STACKING,
    ),
]


@pytest.mark.parametrize("case", table(STACKED))
def test_stacking(case: Case) -> None:
    case.check()
