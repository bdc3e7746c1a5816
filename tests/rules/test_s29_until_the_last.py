"""§29 ``until_the_last``: the round goes on after the first seat goes out, until one seat
still holds cards; round places follow the order of going out; the first out scores as in
§16 from the hands at the moment it went out."""

from __future__ import annotations

import pytest
from notation import Case, MatchCase, table

from arena.rules.options import RuleOptions

LAST = RuleOptions(until_the_last=True)
LAST_STACKING = RuleOptions(until_the_last=True, stacking=True)

DRAW = "draw: Y9 Y8 Y7 Y6 B6 B5 B4 B3 B2 B1"

ROUNDS = [
    Case(
        "§29 the round goes on after the first seat goes out",
        f"0: R3 | 1: R4 B4 B8 | 2: R5 G5 | {DRAW} | discard: R9 | turn: 0",
        ["play R3"],
        after="over: no | out: 0 | turn: 1 | winner: 0 | decision: play_or_draw",
        log=["0 plays R3", "0 out, place 1"],
        options=LAST,
    ),
    Case(
        "§29 a seat that went out is skipped",
        f"0: R3 | 1: R4 B4 B8 | 2: R5 G5 | {DRAW} | discard: R9 | turn: 0",
        ["play R3", "play R4", "play R5 uno"],
        after="turn: 1 | out: 0",
        options=LAST,
    ),
    Case(
        "§29 the round ends when one seat still holds cards",
        f"0: R3 | 1: R4 | 2: R5 G5 | {DRAW} | discard: R9 | turn: 0",
        ["play R3", "play R4"],
        after="over: yes | out: 0 1 | winner: 0",
        log=["0 plays R3", "0 out, place 1", "1 plays R4", "1 out, place 2"],
        options=LAST,
    ),
    Case(
        "§29 the first out scores from the hands at the moment it went out",
        f"0: R3 | 1: R4 B5 | 2: R5 G5 G6 | {DRAW} | discard: R9 | turn: 0",
        ["play R3", "play R4 uno", "play R5", "play B5"],
        after="over: yes | winner: 0 | points: 25 | 2: G5 G6 | out: 0 1",
        options=LAST,
    ),
    Case(
        "§29 a Skip skips the next seat still in play",
        f"0: R3 | 1: RS B4 B8 | 2: R5 G5 | 3: G7 G8 | {DRAW} | discard: R9 | turn: 0",
        ["play R3", "play RS"],
        after="turn: 3 | out: 0",
        log=["0 plays R3", "0 out, place 1", "1 plays RS", "2 skipped"],
        options=LAST,
    ),
    Case(
        "§29/§11 with two seats left in play a Reverse acts as a Skip",
        f"0: R3 | 1: RR B4 B8 | 2: R5 G5 | {DRAW} | discard: R9 | turn: 0",
        ["play R3", "play RR"],
        after="turn: 1 | direction: cw",
        log=["0 plays R3", "0 out, place 1", "1 plays RR", "2 skipped"],
        options=LAST,
    ),
    Case(
        "§29 a last Wild names no colour when the round goes on",
        f"0: W | 1: R4 B4 | 2: R5 G5 | {DRAW} | discard: R9 | turn: 0",
        ["play W"],
        after="turn: 1 | colour: red | decision: play_or_draw",
        log=["0 plays W", "0 out, place 1"],
        legal=["play R4 uno", "draw"],
        options=LAST,
    ),
    Case(
        "§29 a last Draw Two still hits the next seat in play",
        f"0: R+2 | 1: R4 B4 | 2: R5 G5 | {DRAW} | discard: R9 | turn: 0",
        ["play R+2"],
        after="1: R4 B4 B1 B2 | turn: 2",
        log=["0 plays R+2", "0 out, place 1", "1 draws B1 B2 (draw_two)", "1 skipped"],
        options=LAST,
    ),
    Case(
        # Pinned (the texts allow both readings): §15 counts the cards a
        # last Draw Two makes the next seat draw because that ends the round; under §29 the
        # round goes on, and the first out scores "from the hands at the moment it went
        # out", before the draw (R4 + R5, not B1 B2 too).
        "§29/§15 the first out's points leave out what its last Draw Two made a seat draw",
        f"0: R+2 | 1: R4 | 2: R5 | {DRAW} | discard: R9 | turn: 0",
        ["play R+2", "play R5"],
        after="over: yes | winner: 0 | points: 9 | 1: R4 B1 B2 | out: 0 2",
        log=["0 plays R+2", "0 out, place 1", "1 draws B1 B2 (draw_two)", "1 skipped",
             "2 plays R5", "2 out, place 2"],
        options=LAST,
    ),
    Case(
        # With two seats the first out ends the round (one seat still holds cards), so
        # nothing of §29 applies and §15 counts the drawn cards, as in official play (11,
        # not the 8 of the hand before the draw).
        "§29/§15 with two seats the first out ends the round: its last Draw Two's cards count",
        f"0: R+2 | 1: R4 B4 | {DRAW} | discard: R9 | turn: 0",
        ["play R+2"],
        after="over: yes | winner: 0 | points: 11 | 1: R4 B4 B1 B2 | out: 0",
        options=LAST,
    ),
    Case(
        "§29/§15 with two seats a last Wild Draw Four's four cards count",
        f"0: W+4 | 1: R4 B4 | {DRAW} | discard: R9 | turn: 0",
        ["play W+4"],
        after="over: yes | winner: 0 | points: 18 | 1: R4 B4 B1 B2 B3 B4",
        options=LAST,
    ),
    Case(
        "§29/§13 a last Wild Draw Four cannot be challenged: its player is out",
        f"0: W+4 | 1: R4 B4 | 2: R5 G5 | {DRAW} | discard: R9 | turn: 0",
        ["play W+4"],
        after="1: R4 B4 B1 B2 B3 B4 | turn: 2 | colour: red",
        log=["0 plays W+4", "0 out, place 1", "1 draws B1 B2 B3 B4 (wild_draw_four)",
             "1 skipped"],
        options=LAST,
    ),
    Case(
        "§29/§21 with stacking a last Draw Two leaves the penalty pending on the next seat",
        f"0: R+2 | 1: Y+2 B4 | 2: R5 G5 | {DRAW} | discard: R9 | turn: 0",
        ["play R+2", "play Y+2"],
        after="turn: 2 | pending: 4",
        options=LAST_STACKING,
    ),
    Case(
        "§29 the seats already out are not offered seats in play (arranged: 0 out)",
        f"0: | 1: R4 B4 | 2: R5 G5 | 3: Y3 | {DRAW} | discard: Y9 | turn: 3 | out: 0",
        ["play Y3"],
        after="over: no | out: 0 3 | turn: 1",
        log=["3 plays Y3", "3 out, place 2"],
        options=LAST,
    ),
]


@pytest.mark.parametrize("case", table(ROUNDS))
def test_until_the_last(case: Case) -> None:
    case.check()


MATCHES = [
    MatchCase(
        "§29 round places follow the order of going out, logged before the round's end",
        "0: R3 | 1: R4 | 2: R5 G5 | discard: R9 | turn: 0",
        ["play R3", "play R4"],
        "scores: 14 0 0 | over: no",
        LAST,
        log=["0 plays R3", "0 out, place 1", "1 plays R4", "1 out, place 2",
             "round 1 places 1 2 3", "round 1 won by 0 for 14 points, scores 14 0 0"],
    ),
    MatchCase(
        "§29/§17 alternative scoring counts each seat's hand when the first went out",
        "0: R3 | 1: R4 B5 | 2: R5 G5 G6 | draw: B1 | discard: R9 | turn: 0",
        ["play R3", "play R4 uno", "play R5", "play B5"],
        "scores: 0 9 16 | over: no",
        RuleOptions(until_the_last=True, alternative_scoring=True),
    ),
]


@pytest.mark.parametrize("case", table(MATCHES))
def test_until_the_last_in_the_match(case: MatchCase) -> None:
    case.check()
