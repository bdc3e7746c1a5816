"""§27 ``colour_circle``: a Wild or Wild Draw Four names no colour; the colour moves to the
next on the circle red, blue, green, yellow: forward clockwise, backward counter-clockwise."""

from __future__ import annotations

import random

import pytest
from notation import Case, table

from arena.rules.actions import DecisionKind
from arena.rules.match import Match
from arena.rules.options import RuleOptions

CIRCLE = RuleOptions(colour_circle=True)

STEPS = [
    ("red", "cw", "blue"), ("blue", "cw", "green"), ("green", "cw", "yellow"),
    ("yellow", "cw", "red"), ("red", "ccw", "yellow"), ("yellow", "ccw", "green"),
    ("green", "ccw", "blue"), ("blue", "ccw", "red"),
]

CIRCLES = [
    Case(
        f"§27 a Wild {'clockwise' if way == 'cw' else 'counter-clockwise'} turns {before}"
        f" into {after}",
        f"0: W G1 G2 | 1: B1 B2 | 2: Y4 | discard: {before[0].upper()}5 | turn: 0"
        f" | direction: {way}",
        ["play W"],
        after=f"colour: {after} | decision: play_or_draw | turn: {1 if way == 'cw' else 2}",
        log=["0 plays W", f"0's wild moves the colour to {after}"],
        options=CIRCLE,
    )
    for before, way, after in STEPS
] + [
    Case(
        "§27 the circle starts from the colour in play, a named one included",
        "0: W G1 G2 | 1: B1 B2 | 2: Y4 | discard: R5 W | colour: green | turn: 0",
        ["play W"],
        after="colour: yellow",
        options=CIRCLE,
    ),
    Case(
        "§27 a Wild Draw Four moves the colour too, then the next seat challenges or accepts",
        "0: W+4 G1 G2 | 1: B1 B2 | 2: Y4 | discard: R5 | turn: 0",
        ["play W+4"],
        after="colour: blue | turn: 1 | decision: challenge_or_accept",
        log=["0 plays W+4", "0's wild moves the colour to blue"],
        options=CIRCLE,
    ),
    Case(
        "§27/§13 the challenge judges the colour in play before the Wild Draw Four",
        "0: W+4 R1 B2 | 1: B1 B2 | 2: Y4 | draw: Y9 Y8 Y7 Y6 | discard: R5 | turn: 0",
        ["play W+4", "challenge"],
        after="0: R1 B2 Y6 Y7 Y8 Y9 | turn: 1 | colour: blue",
        log=["0 plays W+4", "0's wild moves the colour to blue", "1 challenges 0",
             "0 guilty, hand shown to 1: R1 B2", "0 draws Y6 Y7 Y8 Y9 (challenge_guilty)"],
        options=CIRCLE,
    ),
    Case(
        "§27/§28 a +10 is not a Wild or Wild Draw Four: its player still names a colour (found"
        " by audit: the circle moved it)",
        "0: W+10 G1 G2 | 1: B1 B2 | 2: Y4 | draw: Y9 Y8 Y7 Y6 G6 G5 G4 G3 G2 G1 | discard: R5"
        " | turn: 0",
        ["play W+10", "colour green"],
        after="colour: green | turn: 2 | decision: play_or_draw",
        log=["0 plays W+10", "0 names green", "1 draws G1 G2 G3 G4 G5 G6 Y6 Y7 Y8 Y9 (draw_ten)",
             "1 skipped"],
        options=RuleOptions(colour_circle=True, draw_ten=True),
    ),
    Case(
        "§27 a Reverse just played sets the way round the circle",
        "0: RR G1 G2 | 1: B1 B2 | 2: W Y4 Y5 | discard: R5 | turn: 0",
        ["play RR", "play W"],
        after="colour: yellow | direction: ccw | turn: 1",
        options=CIRCLE,
    ),
]


@pytest.mark.parametrize("case", table(CIRCLES))
def test_colour_circle(case: Case) -> None:
    case.check()


def test_a_wild_turned_first_is_still_named_by_the_seat_left_of_the_dealer() -> None:
    """§7/§27: before any colour is in play there is no circle to move on: the seat left of
    the dealer names the colour, as in official play."""
    found = 0
    for seed in range(400):
        match = Match(3, random.Random(seed), CIRCLE)
        if match.round.discard[-1] == 52:
            found += 1
            assert match.decision is DecisionKind.CHOOSE_COLOUR
            assert match.current_seat == (match.dealer + 1) % 3
    assert found
