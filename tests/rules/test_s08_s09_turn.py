"""A turn: what is playable (§8), play or draw, and the drawn card (§9); illegal moves."""

from __future__ import annotations

import pytest
from notation import Case, describe, legal, position, run, table

from arena.rules.actions import ACCEPT, CHALLENGE, DRAW, KEEP, choose, parse_action
from arena.rules.cards import Colour
from arena.rules.state import IllegalActionError

PLAYABILITY = [
    Case(
        "§8 a card of the top card's colour is playable",
        "0: R1 G2 B3 | 1: Y1 | discard: Y5 R5 | turn: 0",
        legal=["play R1", "draw"],
    ),
    Case(
        "§8 a card of the same number is playable",
        "0: G5 B7 Y4 | 1: Y1 | discard: R5 | turn: 0",
        legal=["play G5", "draw"],
    ),
    Case(
        "§8 a 0 matches a 0 of another colour",
        "0: B0 G1 | 1: Y1 Y2 | discard: R0 | turn: 0",
        legal=["play B0 uno", "draw"],
    ),
    Case(
        "§8 Skip matches Skip by symbol, not Draw Two or Reverse",
        "0: GS G+2 GR | 1: Y1 | discard: RS | turn: 0",
        legal=["play GS", "draw"],
    ),
    Case(
        "§8 Reverse matches Reverse by symbol",
        "0: BR BS B5 | 1: Y1 | discard: YR | turn: 0",
        legal=["play BR", "draw"],
    ),
    Case(
        "§8 Draw Two matches Draw Two by symbol, not the number 2",
        "0: Y+2 Y2 B2 | 1: Y1 | discard: G+2 | turn: 0",
        legal=["play Y+2", "draw"],
    ),
    Case(
        "§8 a number does not match an action card of another colour",
        "0: G2 | 1: Y1 | discard: R+2 | turn: 0",
        legal=["draw"],
    ),
    Case(
        "§8 a Wild is always playable, with other playable cards too",
        "0: W R1 G2 | 1: Y1 | discard: R5 | turn: 0",
        legal=["play R1", "play W", "draw"],
    ),
    Case(
        "§8 a Wild on a Wild",
        "0: W G2 B3 | 1: Y1 | discard: W | colour: red | turn: 0",
        legal=["play W", "draw"],
    ),
    Case(
        "§8 after a Wild the named colour counts, not any number",
        "0: B3 R3 Y+2 | 1: Y1 | discard: R3 W | colour: blue | turn: 0",
        legal=["play B3", "draw"],
    ),
    Case(
        "§8 after a Wild Draw Four the named colour counts",
        "0: G1 W R4 | 1: Y1 | discard: W+4 | colour: green | turn: 0",
        legal=["play G1", "play W", "draw"],
    ),
    Case(
        "§8 Wild Draw Four offered while holding the colour (a bluff, §13)",
        "0: R1 W+4 G2 | 1: Y1 | discard: R5 | turn: 0",
        legal=["play R1", "play W+4", "draw"],
    ),
    Case(
        "§8 Wild Draw Four offered without the colour",
        "0: G1 W+4 B2 | 1: Y1 | discard: R5 | turn: 0",
        legal=["play W+4", "draw"],
    ),
    Case(
        "§8 nothing playable: the only action is to draw",
        "0: G1 B2 Y3 | 1: Y1 | discard: R5 | turn: 0",
        legal=["draw"],
    ),
    Case(
        "§8 only the seat to act is asked: seat 1's cards do not count",
        "0: G1 B2 | 1: R1 W | discard: R5 | turn: 0",
        legal=["draw"],
    ),
]


@pytest.mark.parametrize("case", table(PLAYABILITY))
def test_playability(case: Case) -> None:
    case.check()


WILD_DRAW_FOUR_LEGALITY = [
    pytest.param("0: W+4 W G3 | 1: Y1 | discard: R5", True,
                 id="§8 Wild Draw Four legal while holding a Wild"),
    pytest.param("0: W+4 G5 B5 | 1: Y1 | discard: R5", True,
                 id="§8 Wild Draw Four legal while holding a matching number"),
    pytest.param("0: W+4 GS B+2 | 1: Y1 | discard: RS", True,
                 id="§8 Wild Draw Four legal while holding a matching symbol"),
    pytest.param("0: W+4 W+4 G1 | 1: Y1 | discard: R5", True,
                 id="§8 Wild Draw Four legal while holding another Wild Draw Four"),
    pytest.param("0: W+4 R1 G1 | 1: Y1 | discard: R5", False,
                 id="§8 Wild Draw Four illegal while holding the colour"),
    pytest.param("0: W+4 R+2 G1 | 1: Y1 | discard: R5", False,
                 id="§8 Wild Draw Four illegal while holding an action card of the colour"),
    pytest.param("0: W+4 B2 G1 | 1: Y1 | discard: R5 W | colour: blue", False,
                 id="§8 Wild Draw Four illegal while holding the colour named for a Wild"),
    pytest.param("0: W+4 R2 G1 | 1: Y1 | discard: R5 W | colour: blue", True,
                 id="§8 after a Wild only the named colour counts, not the card's"),
]


@pytest.mark.parametrize(("before", "was_legal"), WILD_DRAW_FOUR_LEGALITY)
def test_wild_draw_four_legality(before: str, was_legal: bool) -> None:
    round_ = position(before + " | turn: 0")
    assert "play W+4" in legal(round_)  # §8: always offered, legal or not
    run(round_, ["play W+4", "colour yellow"])
    assert round_.wild_draw_four_was_legal() is was_legal
    assert legal(round_) == ["challenge", "accept"]


DRAWING = [
    Case(
        "§9 a seat may draw while holding a playable card",
        "0: R1 G2 | 1: Y1 Y2 | 2: Y3 | draw: B9 | discard: R5 | turn: 0",
        ["draw"],
        after="0: R1 G2 B9 | turn: 1 | draw: | decision: play_or_draw",
        log=["0 draws B9 (choice)", "0 keeps"],
    ),
    Case(
        "§9 the drawn card is playable: that card only, or keep it",
        "0: R1 G2 | 1: Y1 Y2 | 2: Y3 | draw: R9 | discard: R5 | turn: 0",
        ["draw"],
        after="0: R1 G2 R9 | turn: 0 | decision: play_drawn_or_keep | turns: 1",
        legal=["play R9", "keep"],
    ),
    Case(
        "§9 playing the drawn card",
        "0: R1 G2 | 1: Y1 Y2 | 2: Y3 | draw: R9 | discard: R5 | turn: 0",
        ["draw", "play R9"],
        after="0: R1 G2 | discard: R5 R9 | turn: 1 | turns: 2",
        log=["0 draws R9 (choice)", "0 plays R9"],
    ),
    Case(
        "§9 keeping the drawn card ends the turn",
        "0: R1 G2 | 1: Y1 Y2 | 2: Y3 | draw: R9 | discard: R5 | turn: 0",
        ["draw", "keep"],
        after="0: R1 G2 R9 | discard: R5 | turn: 1 | decision: play_or_draw",
        log=["0 draws R9 (choice)", "0 keeps"],
    ),
    Case(
        "§9 drawing by need, the drawn card matching by number",
        "0: G1 B2 | 1: Y1 Y2 | 2: Y3 | draw: Y5 | discard: R5 | turn: 0",
        ["draw"],
        after="turn: 0 | decision: play_drawn_or_keep",
        legal=["play Y5", "keep"],
    ),
    Case(
        "§9 a drawn Wild may be played",
        "0: G1 B2 | 1: Y1 Y2 | 2: Y3 | draw: W | discard: R5 | turn: 0",
        ["draw", "play W", "colour green"],
        after="0: G1 B2 | turn: 1 | colour: green",
        log=["0 draws W (choice)", "0 plays W", "0 names green"],
    ),
    Case(
        "§9 a drawn Wild Draw Four is offered even while holding the colour",
        "0: R1 B2 | 1: Y1 Y2 | 2: Y3 | draw: W+4 | discard: R5 | turn: 0",
        ["draw"],
        legal=["play W+4", "keep"],
    ),
    Case(
        "§9 a drawn action card played takes effect",
        "0: G1 B2 | 1: Y1 Y2 | 2: Y3 | draw: RS | discard: R5 | turn: 0",
        ["draw", "play RS"],
        after="turn: 2",
        log=["0 draws RS (choice)", "0 plays RS", "1 skipped"],
    ),
    Case(
        "§9 an unplayable drawn card ends the turn",
        "0: G1 B2 | 1: Y1 Y2 | 2: Y3 | draw: B9 | discard: R5 | turn: 0",
        ["draw"],
        after="0: G1 B2 B9 | turn: 1 | decision: play_or_draw | turns: 2",
        log=["0 draws B9 (choice)", "0 keeps"],
    ),
    Case(
        "§9 an unplayable drawn card counter-clockwise passes to the right",
        "0: G1 B2 | 1: Y1 Y2 | 2: Y3 | draw: B9 | discard: R5 | turn: 0 | direction: ccw",
        ["draw"],
        after="turn: 2",
        log=["0 draws B9 (choice)", "0 keeps"],
    ),
    Case(
        "§9 after drawing, the other playable cards of the hand are not offered",
        "0: R1 R2 W W+4 | 1: Y1 Y2 | draw: Y5 | discard: R5 | turn: 0",
        ["draw"],
        legal=["play Y5", "keep"],
    ),
    Case(
        "§9 a number play passes the turn to the left",
        "0: R1 G2 | 1: Y1 Y2 | 2: Y3 | discard: R5 | turn: 0",
        ["play R1 uno"],
        after="turn: 1 | colour: red | discard: R5 R1",
        log=["0 plays R1", "0 calls UNO"],
    ),
    Case(
        "§9 from the last seat play wraps to seat 0",
        "0: Y1 Y2 | 1: Y3 | 2: R1 G2 | discard: R5 | turn: 2",
        ["play R1 uno"],
        after="turn: 0",
        log=["2 plays R1", "2 calls UNO"],
    ),
]


@pytest.mark.parametrize("case", table(DRAWING))
def test_play_or_draw(case: Case) -> None:
    case.check()


def play(name: str) -> int:
    return parse_action(f"play {name}")


ILLEGAL = [
    pytest.param("0: R1 G2 G3 | 1: Y1 | discard: R5 | turn: 0", [], play("B4"),
                 id="§8 playing a card not in the hand"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | discard: R5 | turn: 0", [], play("G2"),
                 id="§8 playing an unplayable card of the hand"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | discard: R5 | turn: 0", [], play("W"),
                 id="§8 playing a Wild the hand does not hold"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | draw: R9 | discard: R5 | turn: 0", ["draw"],
                 play("R1"), id="§9 after drawing, another playable card of the hand"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | draw: R9 | discard: R5 | turn: 0", ["draw"], DRAW,
                 id="§9 drawing twice"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | discard: R5 | turn: 0", [], KEEP,
                 id="§9 keeping without having drawn"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | discard: R5 | turn: 0", [], CHALLENGE,
                 id="§13 challenging with no Wild Draw Four pending"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | discard: R5 | turn: 0", [], ACCEPT,
                 id="§13 accepting with no Wild Draw Four pending"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | discard: R5 | turn: 0", [], choose(Colour.RED),
                 id="§12 naming a colour without a Wild"),
    pytest.param("0: W G2 G3 | 1: Y1 | discard: R5 | turn: 0", ["play W"], DRAW,
                 id="§12 drawing instead of naming the colour"),
    pytest.param("0: W G2 G3 | 1: Y1 | discard: R5 | turn: 0", ["play W"], play("G2"),
                 id="§12 playing on before naming the colour"),
    pytest.param("0: W+4 G2 G3 | 1: Y1 | discard: R5 | turn: 0", ["play W+4", "colour blue"],
                 DRAW, id="§13 drawing instead of challenging or accepting"),
    pytest.param("0: W+4 G2 G3 | 1: Y1 | discard: R5 | turn: 0", ["play W+4", "colour blue"],
                 play("Y1"), id="§13 playing instead of challenging or accepting"),
    pytest.param("0: R1 | 1: Y1 | discard: R5 | turn: 0", ["play R1"], DRAW,
                 id="§15 any action once the round is over"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | discard: R5 | turn: 0", [], 60,
                 id="§20 a code that is no action at all"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | discard: R5 | turn: 0", [], 200,
                 id="§20 a code past the last action"),
    pytest.param("0: R1 G2 G3 | 1: Y1 | discard: R5 | turn: 0", [], -1,
                 id="§20 a negative code"),
]


@pytest.mark.parametrize(("before", "actions", "action"), ILLEGAL)
def test_illegal_action_raises_and_changes_nothing(
    before: str, actions: list[str], action: int
) -> None:
    round_ = position(before)
    run(round_, actions)
    snapshot, events = describe(round_), list(round_.events)
    assert not round_.is_legal(action)
    with pytest.raises(IllegalActionError):
        round_.apply(action)
    assert describe(round_) == snapshot
    assert round_.events == events
