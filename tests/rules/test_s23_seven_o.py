"""§23 ``seven_o``: a played 7 swaps its player's hand with a chosen seat's; a played 0
passes every hand on in the direction of play. UNO is judged before the swap; a last 7
or 0 swaps nothing; each seat sees the hand it receives, hand sizes stay public."""

from __future__ import annotations

import pytest
from notation import Case, position, run, table

from arena.rules import events as ev
from arena.rules.events import seen_by
from arena.rules.options import RuleOptions

SEVEN_O = RuleOptions(seven_o=True)

SWAPS = [
    Case(
        "§23 a played 7 makes its player choose another seat",
        "0: R7 R1 G2 | 1: B1 B2 | 2: Y3 | discard: R5 | turn: 0",
        ["play R7"],
        after="turn: 0 | decision: choose_seat | 0: R1 G2",
        log=["0 plays R7"],
        legal=["seat 1", "seat 2"],
        options=SEVEN_O,
    ),
    Case(
        "§23 the 7's player swaps whole hands with the seat it chose; play goes on",
        "0: R7 R1 G2 | 1: B1 B2 | 2: Y3 | discard: R5 | turn: 0",
        ["play R7", "seat 2"],
        after="0: Y3 | 2: R1 G2 | 1: B1 B2 | turn: 1 | decision: play_or_draw | colour: red",
        log=["0 plays R7", "0 swaps hands with 2 (1 / 2 cards): Y3 / R1 G2"],
        options=SEVEN_O,
    ),
    Case(
        "§23 two players: the 7 swaps with the only other seat, which then plays",
        "0: R7 R1 G2 | 1: B1 B2 B3 B4 | discard: R5 | turn: 0",
        ["play R7", "seat 1"],
        after="0: B1 B2 B3 B4 | 1: R1 G2 | turn: 1",
        legal=["play R1 uno", "draw"],
        options=SEVEN_O,
    ),
    Case(
        "§23 a played 0 passes every hand to the next seat clockwise",
        "0: R0 R1 | 1: B1 B2 B3 | 2: Y3 G4 G5 G6 | discard: R5 | turn: 0",
        ["play R0 uno"],
        after="1: R1 | 2: B1 B2 B3 | 0: Y3 G4 G5 G6 | turn: 1 | colour: red",
        log=["0 plays R0", "0 calls UNO",
             "0's 0 passes hands cw: Y3 G4 G5 G6 / R1 / B1 B2 B3"],
        options=SEVEN_O,
    ),
    Case(
        "§23 counter-clockwise a 0 passes every hand to the right",
        "0: R0 R1 | 1: B1 B2 B3 | 2: Y3 G4 G5 G6 | discard: R5 | turn: 0 | direction: ccw",
        ["play R0 uno"],
        after="2: R1 | 0: B1 B2 B3 | 1: Y3 G4 G5 G6 | turn: 2",
        log=["0 plays R0", "0 calls UNO",
             "0's 0 passes hands ccw: B1 B2 B3 / Y3 G4 G5 G6 / R1"],
        options=SEVEN_O,
    ),
    Case(
        "§23/§14 the UNO call is judged before the swap, on the player's own hand",
        "0: R7 R1 | 1: B1 B2 B3 | 2: Y3 | discard: R5 | turn: 0",
        ["play R7 uno", "seat 1"],
        after="0: B1 B2 B3 | 1: R1 | turn: 1",
        log=["0 plays R7", "0 calls UNO", "0 swaps hands with 1 (3 / 1 cards): B1 B2 B3 / R1"],
        options=SEVEN_O,
    ),
    Case(
        "§23/§14 a 7 leaving one card without the call is caught before the swap",
        "0: R7 R1 | 1: B1 B2 B3 | 2: Y3 | draw: G1 G2 | discard: R5 | turn: 0",
        ["play R7", "seat 2"],
        after="0: Y3 | 2: R1 G2 G1 | turn: 1",
        log=["0 plays R7", "0 caught without UNO", "0 draws G2 G1 (uno_penalty)",
             "0 swaps hands with 2 (1 / 3 cards): Y3 / R1 G2 G1"],
        options=SEVEN_O,
    ),
    Case(
        "§23/§15 a 7 that is the last card ends the round with no swap",
        "0: R7 | 1: B1 B2 B3 | 2: Y3 | discard: R5 | turn: 0",
        ["play R7"],
        after="over: yes | winner: 0 | 1: B1 B2 B3 | points: 9",
        log=["0 plays R7"],
        options=SEVEN_O,
    ),
    Case(
        "§23/§15 a 0 that is the last card ends the round with no pass",
        "0: R0 | 1: B1 B2 B3 | 2: Y3 | discard: R5 | turn: 0",
        ["play R0"],
        after="over: yes | winner: 0 | 2: Y3",
        log=["0 plays R0"],
        options=SEVEN_O,
    ),
    Case(
        "§23 off: a 7 is an ordinary number card",
        "0: R7 R1 G2 | 1: B1 B2 | 2: Y3 | discard: R5 | turn: 0",
        ["play R7"],
        after="turn: 1 | decision: play_or_draw | 0: R1 G2",
        options=RuleOptions(jump_in=True),
    ),
    Case(
        "§23/§29 a 0 that empties a hand while the round goes on passes no hands (its player"
        " is out and holds none)",
        "0: R0 | 1: B1 B2 | 2: G3 G4 | 3: Y1 Y2 | draw: Y9 Y8 Y7 Y6 | discard: R5 | turn: 0",
        ["play R0"],
        after="turn: 1 | decision: play_or_draw | 1: B1 B2 | 2: G3 G4 | 3: Y1 Y2",
        log=["0 plays R0", "0 out, place 1"],
        options=RuleOptions(seven_o=True, until_the_last=True),
    ),
]


@pytest.mark.parametrize("case", table(SWAPS))
def test_seven_o(case: Case) -> None:
    case.check()


def test_each_seat_sees_the_hand_it_receives_and_only_that() -> None:
    """§23: hand sizes stay public; a seat sees the hand it receives, not others'."""
    round_ = position("0: R7 R1 G2 | 1: B1 B2 | 2: Y3 | 3: G7 G8 | discard: R5 | turn: 0",
                      options=SEVEN_O)
    run(round_, ["play R7", "seat 2"])
    swap = round_.events[-1]
    assert isinstance(swap, ev.HandsSwapped)
    assert [seen_by(swap, s) for s in range(4)] == [
        ev.HandsSwapped(0, 2, swap.cards, (), 1, 2),
        ev.HandsSwapped(0, 2, (), (), 1, 2),
        ev.HandsSwapped(0, 2, (), swap.other_cards, 1, 2),
        ev.HandsSwapped(0, 2, (), (), 1, 2),
    ]
    for seat in range(4):
        observation = round_.observation(seat)
        assert observation.hand_sizes == (1, 2, 2, 2)
        assert observation.hand == tuple(sorted(round_.hands[seat]))


def test_a_zero_shows_each_seat_its_new_hand_only() -> None:
    round_ = position("0: R0 R1 | 1: B1 B2 B3 | 2: Y3 G4 | discard: R5 | turn: 0",
                      options=SEVEN_O)
    run(round_, ["play R0 uno"])
    passed = round_.events[-1]
    assert isinstance(passed, ev.HandsPassed)
    for seat in range(3):
        seen = seen_by(passed, seat)
        assert isinstance(seen, ev.HandsPassed)
        assert seen.amounts == (2, 1, 3)
        assert [bool(hand) for hand in seen.hands] == [s == seat for s in range(3)]
        assert seen.hands[seat] == tuple(round_.hands[seat])
