"""Action cards: Skip, Reverse, Draw Two (§11) and the wilds (§12)."""

from __future__ import annotations

import pytest
from notation import Case, table

from arena.rules.options import RuleOptions

REVERSE_NOT_SKIP = RuleOptions(two_player_reverse_is_skip=False)

ACTIONS = [
    # -- Skip
    Case(
        "§11 Skip: the next seat loses its turn",
        "0: RS R1 G9 | 1: R2 | 2: R3 | discard: R5 | turn: 0",
        ["play RS"],
        after="turn: 2 | colour: red | direction: cw | 1: R2",
        log=["0 plays RS", "1 skipped"],
    ),
    Case(
        "§11 Skip from the last seat skips seat 0",
        "0: R1 | 1: R2 | 2: GS G3 B9 | discard: G5 | turn: 2",
        ["play GS"],
        after="turn: 1",
        log=["2 plays GS", "0 skipped"],
    ),
    Case(
        "§11 Skip counter-clockwise skips the seat to the right",
        "0: BS B1 G9 | 1: R2 | 2: R3 | 3: R4 | discard: B5 | turn: 0 | direction: ccw",
        ["play BS"],
        after="turn: 2 | direction: ccw",
        log=["0 plays BS", "3 skipped"],
    ),
    Case(
        "§11 Skip with two players: the same seat plays again",
        "0: RS R1 G1 | 1: R2 | discard: R5 | turn: 0",
        ["play RS"],
        after="turn: 0 | decision: play_or_draw | turns: 2",
        log=["0 plays RS", "1 skipped"],
    ),
    Case(
        "§11 Skip on a Skip of another colour changes the colour",
        "0: GS G1 B9 | 1: R2 | 2: R3 | discard: RS | turn: 0",
        ["play GS"],
        after="turn: 2 | colour: green",
        log=["0 plays GS", "1 skipped"],
    ),
    # -- Reverse
    Case(
        "§11 Reverse with three players: direction flips, the previous seat plays",
        "0: RR R1 G9 | 1: R2 | 2: R3 | discard: R5 | turn: 0",
        ["play RR"],
        after="turn: 2 | direction: ccw",
        log=["0 plays RR", "direction ccw"],
    ),
    Case(
        "§11 Reverse counter-clockwise turns play clockwise again",
        "0: R1 | 1: YR Y1 G9 | 2: R3 | 3: R4 | discard: Y5 | turn: 1 | direction: ccw",
        ["play YR"],
        after="turn: 2 | direction: cw",
        log=["1 plays YR", "direction cw"],
    ),
    Case(
        "§11 after a Reverse play keeps going the new way",
        "0: RR R1 G9 | 1: R2 R6 | 2: R3 R7 | 3: R4 R8 | discard: R5 | turn: 0",
        ["play RR", "play R4 uno", "play R3 uno"],
        after="turn: 1 | direction: ccw",
        log=["0 plays RR", "direction ccw", "3 plays R4", "3 calls UNO", "2 plays R3",
             "2 calls UNO"],
    ),
    Case(
        "§11 Reverse with two players acts as a Skip",
        "0: RR R1 G1 | 1: R2 | discard: R5 | turn: 0",
        ["play RR"],
        after="turn: 0 | direction: cw",
        log=["0 plays RR", "1 skipped"],
    ),
    Case(
        "§11 option two_player_reverse_is_skip=False: a two-player Reverse only reverses",
        "0: RR R1 G1 | 1: R2 R3 | discard: R5 | turn: 0",
        ["play RR"],
        after="turn: 1 | direction: ccw",
        log=["0 plays RR", "direction ccw"],
        options=REVERSE_NOT_SKIP,
    ),
    Case(
        "§11 option two_player_reverse_is_skip=False: then the other seat plays back",
        "0: RR R1 G1 | 1: R2 R3 | discard: R5 | turn: 0",
        ["play RR", "play R2 uno"],
        after="turn: 0 | direction: ccw",
        options=REVERSE_NOT_SKIP,
    ),
    Case(
        "§11 option two_player_reverse_is_skip=False leaves three players alone",
        "0: RR R1 G9 | 1: R2 | 2: R3 | discard: R5 | turn: 0",
        ["play RR"],
        after="turn: 2 | direction: ccw",
        log=["0 plays RR", "direction ccw"],
        options=REVERSE_NOT_SKIP,
    ),
    Case(
        "§11 option two_player_reverse_is_skip=False leaves a two-player Skip a Skip",
        "0: RS R1 G1 | 1: R2 | discard: R5 | turn: 0",
        ["play RS"],
        after="turn: 0",
        log=["0 plays RS", "1 skipped"],
        options=REVERSE_NOT_SKIP,
    ),
    # -- Draw Two
    Case(
        "§11 Draw Two: the next seat draws 2 and loses its turn",
        "0: R+2 R1 G9 | 1: Y1 | 2: Y2 | draw: B3 B2 B1 | discard: R5 | turn: 0",
        ["play R+2"],
        after="1: Y1 B1 B2 | draw: B3 | turn: 2 | colour: red",
        log=["0 plays R+2", "1 draws B1 B2 (draw_two)", "1 skipped"],
    ),
    Case(
        "§11 Draw Two counter-clockwise hits the seat to the right",
        "0: R+2 R1 G9 | 1: Y1 | 2: Y2 | draw: B2 B1 | discard: R5 | turn: 0 | direction: ccw",
        ["play R+2"],
        after="2: Y2 B1 B2 | turn: 1",
        log=["0 plays R+2", "2 draws B1 B2 (draw_two)", "2 skipped"],
    ),
    Case(
        "§11 Draw Two with two players: the other draws, the same seat plays again",
        "0: R+2 R1 G1 | 1: Y1 | draw: B2 B1 | discard: R5 | turn: 0",
        ["play R+2"],
        after="1: Y1 B1 B2 | turn: 0",
        log=["0 plays R+2", "1 draws B1 B2 (draw_two)", "1 skipped"],
    ),
    Case(
        "§11 no stacking: holding a Draw Two does not save the next seat",
        "0: R+2 R1 G9 | 1: Y+2 G+2 | 2: Y2 | draw: B2 B1 | discard: R5 | turn: 0",
        ["play R+2"],
        after="1: Y+2 G+2 B1 B2 | turn: 2 | decision: play_or_draw",
        log=["0 plays R+2", "1 draws B1 B2 (draw_two)", "1 skipped"],
    ),
    Case(
        "§11 no stacking: the seat after the victim plays an ordinary turn",
        "0: R+2 R1 G9 | 1: Y+2 G+2 | 2: Y2 G+2 | draw: B2 B1 | discard: R5 | turn: 0",
        ["play R+2"],
        legal=["play G+2 uno", "draw"],
    ),
    # -- Wild (§12)
    Case(
        "§12 Wild: the player names the colour before play goes on",
        "0: W G1 G9 | 1: R2 R3 | 2: Y3 | discard: R5 | turn: 0",
        ["play W"],
        after="turn: 0 | decision: choose_colour | discard: R5 W",
        legal=["colour red", "colour yellow", "colour green", "colour blue"],
    ),
    Case(
        "§12 Wild: the current colour may be named again",
        "0: W G1 G9 | 1: R2 R3 | 2: Y3 | discard: R5 | turn: 0",
        ["play W", "colour red"],
        after="turn: 1 | colour: red | decision: play_or_draw",
        log=["0 plays W", "0 names red"],
        legal=["play R2 uno", "play R3 uno", "draw"],
    ),
    Case(
        "§12 Wild: a new colour binds the next seat",
        "0: W G1 G9 | 1: R2 B3 | 2: Y3 | discard: R5 | turn: 0",
        ["play W", "colour blue"],
        after="turn: 1 | colour: blue",
        log=["0 plays W", "0 names blue"],
        legal=["play B3 uno", "draw"],
    ),
    Case(
        "§12 Wild counter-clockwise: the seat to the right plays next",
        "0: W G1 G9 | 1: R2 B3 | 2: Y3 | discard: R5 | turn: 0 | direction: ccw",
        ["play W", "colour yellow"],
        after="turn: 2 | colour: yellow",
        log=["0 plays W", "0 names yellow"],
    ),
    Case(
        "§12 Wild Draw Four: named colour, then the next seat challenges or accepts",
        "0: W+4 G1 G9 | 1: R2 B3 | 2: Y3 | draw: B1 B2 B3 B4 | discard: R5 | turn: 0",
        ["play W+4", "colour green"],
        after="turn: 1 | colour: green | decision: challenge_or_accept | sizes: 2 2 1",
        log=["0 plays W+4", "0 names green"],
        legal=["challenge", "accept"],
    ),
    Case(
        "§12 Wild Draw Four accepted: the next seat draws 4 and loses its turn",
        "0: W+4 G1 G9 | 1: R2 B3 | 2: Y3 | draw: B1 B2 B3 B4 B5 | discard: R5 | turn: 0",
        ["play W+4", "colour green", "accept"],
        after="1: R2 B3 B5 B4 B3 B2 | draw: B1 | turn: 2 | colour: green",
        log=["0 plays W+4", "0 names green", "1 accepts",
             "1 draws B5 B4 B3 B2 (wild_draw_four)", "1 skipped"],
    ),
    Case(
        "§12 Wild Draw Four accepted with two players: the player plays again",
        "0: W+4 G1 G2 | 1: R2 B3 | draw: B1 B2 B3 B4 | discard: R5 | turn: 0",
        ["play W+4", "colour green", "accept"],
        after="turn: 0 | sizes: 2 6 | colour: green",
        log=["0 plays W+4", "0 names green", "1 accepts",
             "1 draws B4 B3 B2 B1 (wild_draw_four)", "1 skipped"],
        legal=["play G1 uno", "play G2 uno", "draw"],
    ),
    Case(
        "§12 Wild Draw Four counter-clockwise hits the seat to the right",
        "0: W+4 G1 G9 | 1: R2 | 2: Y3 | draw: B1 B2 B3 B4 | discard: R5 | turn: 0 | direction: ccw",
        ["play W+4", "colour red", "accept"],
        after="2: Y3 B1 B2 B3 B4 | turn: 1 | colour: red",
        log=["0 plays W+4", "0 names red", "2 accepts",
             "2 draws B4 B3 B2 B1 (wild_draw_four)", "2 skipped"],
    ),
]


@pytest.mark.parametrize("case", table(ACTIONS))
def test_action_cards(case: Case) -> None:
    case.check()
