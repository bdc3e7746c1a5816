"""UNO (§14): the call on the next-to-last card, the penalty, needless calls."""

from __future__ import annotations

import pytest
from notation import Case, table

UNO = [
    Case(
        "§14 plays that leave one card are offered with the UNO call",
        "0: R1 R2 | 1: G1 G2 | discard: R5 | turn: 0",
        legal=["play R1 uno", "play R2 uno", "draw"],
    ),
    Case(
        "§14 plays that leave more cards are offered without it",
        "0: R1 R2 G3 | 1: G1 G2 | discard: R5 | turn: 0",
        legal=["play R1", "play R2", "draw"],
    ),
    Case(
        "§14 calling UNO on the next-to-last card: counted, no penalty",
        "0: R1 R2 | 1: G1 G2 | 2: Y1 | draw: B3 B4 | discard: R5 | turn: 0",
        ["play R1 uno"],
        after="0: R2 | draw: B3 B4 | turn: 1",
        log=["0 plays R1", "0 calls UNO"],
    ),
    Case(
        "§14 missing the call: caught at once, draws 2 before the next seat's turn",
        "0: R1 R2 | 1: G1 G2 | 2: Y1 | draw: B3 B4 | discard: R5 | turn: 0",
        ["play R1"],
        after="0: R2 B3 B4 | draw: | turn: 1 | decision: play_or_draw",
        log=["0 plays R1", "0 caught without UNO", "0 draws B4 B3 (uno_penalty)"],
    ),
    Case(
        "§14 a call on a play leaving two cards is ignored and logged",
        "0: R1 R2 G3 | 1: G1 G2 | 2: Y1 | draw: B3 B4 | discard: R5 | turn: 0",
        ["play R1 uno"],
        after="0: R2 G3 | draw: B3 B4 | turn: 1",
        log=["0 plays R1", "0 calls UNO, ignored"],
    ),
    Case(
        "§14 a call on the last card is ignored and logged",
        "0: R1 | 1: G1 G2 | 2: Y1 | draw: B3 B4 | discard: R5 | turn: 0",
        ["play R1 uno"],
        after="0: | winner: 0 | draw: B3 B4",
        log=["0 plays R1", "0 calls UNO, ignored"],
    ),
    Case(
        "§14 the drawn card leaving one card is offered with the call",
        "0: G1 | 1: G2 G3 | 2: Y1 | draw: B3 B4 R9 | discard: R5 | turn: 0",
        ["draw"],
        legal=["play R9 uno", "keep"],
    ),
    Case(
        "§14 UNO called on playing the drawn card",
        "0: G1 | 1: G2 G3 | 2: Y1 | draw: B3 B4 R9 | discard: R5 | turn: 0",
        ["draw", "play R9 uno"],
        after="0: G1 | draw: B3 B4 | turn: 1",
        log=["0 draws R9 (choice)", "0 plays R9", "0 calls UNO"],
    ),
    Case(
        "§14 the drawn card played without the call is caught",
        "0: G1 | 1: G2 G3 | 2: Y1 | draw: B3 B4 R9 | discard: R5 | turn: 0",
        ["draw", "play R9"],
        after="0: G1 B3 B4 | draw: | turn: 1",
        log=["0 draws R9 (choice)", "0 plays R9", "0 caught without UNO",
             "0 draws B4 B3 (uno_penalty)"],
    ),
    Case(
        "§14 keeping the drawn card needs no call",
        "0: G1 | 1: G2 G3 | 2: Y1 | draw: B3 B4 R9 | discard: R5 | turn: 0",
        ["draw", "keep"],
        after="0: G1 R9 | turn: 1",
        log=["0 draws R9 (choice)", "0 keeps"],
    ),
    Case(
        "§14 missing the call on a Wild: penalty first, then the colour",
        "0: W G1 | 1: G2 G3 | 2: Y1 | draw: B3 B4 | discard: R5 | turn: 0",
        ["play W", "colour green"],
        after="0: G1 B3 B4 | turn: 1 | colour: green",
        log=["0 plays W", "0 caught without UNO", "0 draws B4 B3 (uno_penalty)",
             "0 names green"],
    ),
    Case(
        "§14 missing the call on a Draw Two: the penalty comes before the next seat draws",
        "0: R+2 G1 | 1: G2 G3 | 2: Y1 | draw: B1 B2 B3 B4 | discard: R5 | turn: 0",
        ["play R+2"],
        after="0: G1 B4 B3 | 1: G2 G3 B2 B1 | turn: 2",
        log=["0 plays R+2", "0 caught without UNO", "0 draws B4 B3 (uno_penalty)",
             "1 draws B2 B1 (draw_two)", "1 skipped"],
    ),
    Case(
        "§14 missing the call on a two-player Skip: penalty, then the seat plays again",
        "0: RS G1 | 1: G2 G3 | draw: B3 B4 | discard: R5 | turn: 0",
        ["play RS"],
        after="0: G1 B3 B4 | turn: 0",
        log=["0 plays RS", "0 caught without UNO", "0 draws B4 B3 (uno_penalty)",
             "1 skipped"],
    ),
    Case(
        "§14 missing the call on a Wild Draw Four: penalty, colour, then the challenge",
        "0: W+4 G1 | 1: G2 G3 | 2: Y1 | draw: B3 B4 | discard: R5 | turn: 0",
        ["play W+4", "colour blue"],
        after="0: G1 B3 B4 | turn: 1 | decision: challenge_or_accept",
        log=["0 plays W+4", "0 caught without UNO", "0 draws B4 B3 (uno_penalty)",
             "0 names blue"],
    ),
    Case(
        "§14 a counted call on a Wild Draw Four",
        "0: W+4 G1 | 1: G2 G3 | 2: Y1 | draw: B3 B4 | discard: R5 | turn: 0",
        ["play W+4 uno", "colour blue"],
        after="0: G1 | turn: 1 | decision: challenge_or_accept",
        log=["0 plays W+4", "0 calls UNO", "0 names blue"],
    ),
    Case(
        "§14 another seat's single card changes nothing for the seat to act",
        "0: R1 R2 G3 | 1: G1 | discard: R5 | turn: 0",
        ["play R1"],
        after="0: R2 G3 | 1: G1 | turn: 1",
        log=["0 plays R1"],
    ),
]


@pytest.mark.parametrize("case", table(UNO))
def test_uno(case: Case) -> None:
    case.check()
