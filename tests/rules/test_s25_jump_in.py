"""§25 ``jump_in``: after a card is played, the seats holding an identical card are offered
to play it out of turn, in the direction of play from the player (the player last); the
first that plays takes the turn, and its card's effect replaces the covered card's."""

from __future__ import annotations

import random

import pytest
from notation import Case, position, run, table

from arena.rules.actions import DecisionKind
from arena.rules.match import Match
from arena.rules.options import RuleOptions

JUMP = RuleOptions(jump_in=True)
JUMP_STACK = RuleOptions(jump_in=True, stacking=True)
JUMP_SEVEN = RuleOptions(jump_in=True, seven_o=True)

DRAW = "draw: Y9 Y8 Y7 Y6 B6 B5 B4 B3 B2 B1"

JUMPS = [
    Case(
        "§25 a seat holding an identical card is asked to jump in or pass",
        f"0: R7 G1 G2 | 1: B1 B2 | 2: R7 Y4 Y5 | 3: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R7"],
        after="turn: 2 | decision: jump_in_or_pass",
        log=["0 plays R7"],
        legal=["play R7", "pass"],
        options=JUMP,
    ),
    Case(
        "§25 a card of the same number but another colour is not identical: nobody is asked",
        f"0: R7 G1 G2 | 1: B7 B2 | 2: G7 Y4 Y5 | 3: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R7"],
        after="turn: 1 | decision: play_or_draw",
        options=JUMP,
    ),
    Case(
        "§25 the offers go in the direction of play from the player",
        f"0: RS G1 G2 | 1: RS B2 | 2: Y4 | 3: RS G4 | {DRAW} | discard: R5 | turn: 0",
        ["play RS"],
        after="turn: 1 | decision: jump_in_or_pass",
        legal=["play RS uno", "pass"],
        options=JUMP,
    ),
    Case(
        "§25 counter-clockwise the first offer goes to the right",
        f"0: RS G1 G2 | 1: RS B2 | 2: Y4 | 3: RS G4 | {DRAW} | discard: R5 | turn: 0"
        " | direction: ccw",
        ["play RS"],
        after="turn: 3 | decision: jump_in_or_pass",
        options=JUMP,
    ),
    Case(
        "§25 a pass leaves no trace and the offer moves on; when all pass, the card takes effect",
        f"0: RS G1 G2 | 1: RS B2 | 2: Y4 | 3: RS G4 | {DRAW} | discard: R5 | turn: 0",
        ["play RS", "pass", "pass"],
        after="turn: 2 | decision: play_or_draw",
        log=["0 plays RS", "1 skipped"],
        options=JUMP,
    ),
    Case(
        "§25 the player itself is offered last, for its second identical card",
        f"0: R7 R7 G2 | 1: R7 B2 | 2: Y4 | {DRAW} | discard: R5 | turn: 0",
        ["play R7", "pass"],
        after="turn: 0 | decision: jump_in_or_pass",
        legal=["play R7 uno", "pass"],
        options=JUMP,
    ),
    Case(
        "§25 the jumper takes the turn as if it were its own: play goes on from it",
        f"0: R7 G1 G2 | 1: B1 B2 | 2: R7 Y4 Y5 | 3: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R7", "play R7"],
        after="turn: 3 | decision: play_or_draw | 2: Y4 Y5",
        log=["0 plays R7", "2 jumps in", "2 plays R7"],
        options=JUMP,
    ),
    Case(
        "§25 a jumped Skip: only the seat after the jumper is skipped",
        f"0: RS G1 G2 | 1: B1 B2 | 2: RS Y4 Y5 | 3: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play RS", "play RS"],
        after="turn: 0",
        log=["0 plays RS", "2 jumps in", "2 plays RS", "3 skipped"],
        options=JUMP,
    ),
    Case(
        "§25 a Draw Two jumped by a Draw Two: only the seat after the jumper draws 2",
        f"0: R+2 G1 G2 | 1: B1 B2 | 2: R+2 Y4 Y5 | 3: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play R+2"],
        after="1: B1 B2 | 3: G3 G4 B1 B2 | turn: 0",
        log=["0 plays R+2", "2 jumps in", "2 plays R+2", "3 draws B1 B2 (draw_two)",
             "3 skipped"],
        options=JUMP,
    ),
    Case(
        "§25 a jumped Reverse flips the direction once, from the jumper",
        f"0: RR G1 G2 | 1: B1 B2 | 2: RR Y4 Y5 | 3: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play RR", "play RR"],
        after="turn: 1 | direction: ccw",
        log=["0 plays RR", "2 jumps in", "2 plays RR", "direction ccw"],
        options=JUMP,
    ),
    Case(
        "§25 never with a Wild Draw Four: no seat is asked",
        f"0: W+4 G1 G2 | 1: W+4 B2 | 2: Y4 | {DRAW} | discard: R5 | turn: 0",
        ["play W+4"],
        after="turn: 0 | decision: choose_colour",
        log=["0 plays W+4"],
        options=JUMP,
    ),
    Case(
        "§25 a Wild on a Wild: the jumper names the colour, the covered Wild names none",
        f"0: W G1 G2 | 1: B1 B2 | 2: W Y4 Y5 | {DRAW} | discard: R5 | turn: 0",
        ["play W", "play W", "colour yellow"],
        after="turn: 0 | colour: yellow | decision: play_or_draw",
        log=["0 plays W", "2 jumps in", "2 plays W", "2 names yellow"],
        options=JUMP,
    ),
    Case(
        "§25 a jump-in opens a new round of offers for the jumper's card",
        f"0: W G1 G2 | 1: W B2 B3 | 2: W Y4 Y5 | {DRAW} | discard: R5 | turn: 0",
        ["play W", "play W"],
        after="turn: 2 | decision: jump_in_or_pass",
        log=["0 plays W", "1 jumps in", "1 plays W"],
        options=JUMP,
    ),
    Case(
        "§25/§14 a jump-in that leaves one card carries the UNO call",
        f"0: R7 G1 G2 | 1: R7 B2 | 2: Y4 | {DRAW} | discard: R5 | turn: 0",
        ["play R7", "play R7 uno"],
        after="1: B2 | turn: 2",
        log=["0 plays R7", "1 jumps in", "1 plays R7", "1 calls UNO"],
        options=JUMP,
    ),
    Case(
        "§25/§15 jumping in with the last card ends the round",
        f"0: R7 G1 G2 | 1: R7 | 2: Y4 | {DRAW} | discard: R5 | turn: 0",
        ["play R7", "play R7"],
        after="over: yes | winner: 1",
        options=JUMP,
    ),
    Case(
        "§25/§21 with stacking, a jumped Draw Two moves the penalty after the jumper, not adds",
        f"0: R+2 G1 G2 | 1: B1 B2 | 2: R+2 Y4 Y5 | 3: G3 G4 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play R+2"],
        after="turn: 3 | decision: stack_or_accept | pending: 2",
        log=["0 plays R+2", "2 jumps in", "2 plays R+2", "3 faces 2"],
        options=JUMP_STACK,
    ),
    Case(
        "§25/§23 a jumped 7: the jumper chooses the seat to swap with",
        f"0: R7 G1 G2 | 1: B1 B2 | 2: R7 Y4 Y5 | {DRAW} | discard: R5 | turn: 0",
        ["play R7", "play R7"],
        after="turn: 2 | decision: choose_seat",
        legal=["seat 0", "seat 1"],
        options=JUMP_SEVEN,
    ),
    Case(
        "§25/§22 a jump-in on a deflecting Reverse: play goes on from the jumper, so the"
        " penalty passes to the seat after it (the deflector), not to the draw card's player",
        f"0: R+2 G1 G2 | 1: RR B1 B2 | 2: RR G4 G5 | 3: Y4 Y5 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2", "play RR", "play RR"],
        after="turn: 1 | decision: stack_or_accept | pending: 2 | direction: ccw",
        log=["0 plays R+2", "1 faces 2", "1 plays RR", "2 jumps in", "2 plays RR",
             "direction ccw", "1 faces 2"],
        options=RuleOptions(jump_in=True, reverse_deflects=True),
    ),
    Case(
        "§25/§21 a jump-in on a stacked Draw Two replaces it: its 2 is not added twice, and the"
        " seat it was aimed at escapes",
        f"0: R+2 G1 G2 | 1: Y+2 B1 B2 | 2: G3 G4 G5 | 3: Y+2 Y4 Y5 | 4: B7 B8 | {DRAW}"
        " | discard: R5 | turn: 0",
        ["play R+2", "play Y+2", "play Y+2"],
        after="turn: 4 | decision: stack_or_accept | pending: 4",
        log=["0 plays R+2", "1 faces 2", "1 plays Y+2", "3 jumps in", "3 plays Y+2",
             "4 faces 4"],
        options=JUMP_STACK,
    ),
]


@pytest.mark.parametrize("case", table(JUMPS))
def test_jump_in(case: Case) -> None:
    case.check()


def test_seats_not_asked_learn_nothing() -> None:
    """§25: while a seat is offered a jump-in, the other seats' observations show the player
    still acting, the same whichever seat holds the identical card."""
    bystander = []
    for holder in (1, 2):
        held = {seat: "R7" if seat == holder else "B7" for seat in (1, 2)}
        round_ = position(f"0: R7 G1 G2 | 1: {held[1]} B2 | 2: {held[2]} Y4 | 3: G3 G4"
                          " | discard: R5 | turn: 0", options=JUMP)
        run(round_, ["play R7"])
        assert round_.decision is DecisionKind.JUMP_IN_OR_PASS and round_.current == holder
        asked = round_.observation(holder)
        assert (asked.current_seat, asked.decision) == (holder, DecisionKind.JUMP_IN_OR_PASS)
        for seat in {0, 1, 2, 3} - {holder}:
            view = round_.observation(seat)
            assert (view.current_seat, view.decision) == (0, None)
        bystander.append(round_.observation(3))
    assert bystander[0] == bystander[1]


def test_no_jump_in_on_the_card_turned_to_start_a_round() -> None:
    """§25: the first decision of a round is never a jump-in (the turned card is not played)."""
    firsts = set()
    for seed in range(300):
        match = Match(4, random.Random(seed), JUMP)
        firsts.add(match.decision)
    assert DecisionKind.JUMP_IN_OR_PASS not in firsts
    assert DecisionKind.PLAY_OR_DRAW in firsts
