"""Drawing from an empty pile: reshuffle the discards but the top card, else draw what there
is (§10). Cards that come out of a reshuffle are random, so the log writes them as ``*``."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from notation import Case, cards, position, run, table

from arena.rules.state import Round

PILES = [
    Case(
        "§10 an empty draw pile: the discards but the top card become the new pile",
        "0: G1 G2 | 1: Y1 Y2 | draw: | discard: R1 R2 R3 R5 | turn: 0",
        ["draw"],
        after="discard: R5 | draw_size: 2 | sizes: 3 2 | colour: red",
        log=["reshuffled 3 cards", "0 draws * (choice)"],
    ),
    Case(
        "§10 a reshuffled card is drawn like any other: playable, so offered",
        "0: G1 G2 | 1: Y1 Y2 | draw: | discard: R1 R2 R3 R5 | turn: 0",
        ["draw"],
        after="turn: 0 | decision: play_drawn_or_keep",
    ),
    Case(
        "§10 the top card stays, even a Wild with its named colour",
        "0: G1 G2 | 1: Y1 Y2 | draw: | discard: R1 R2 B3 W | colour: blue | turn: 0",
        ["draw"],
        after="discard: W | colour: blue | draw_size: 2",
        log=["reshuffled 3 cards", "0 draws * (choice)", "0 keeps"],
    ),
    Case(
        "§10 exactly enough cards: no reshuffle, the pile is left empty",
        "0: R+2 G1 G2 | 1: Y1 Y2 | 2: Y3 | draw: B2 B1 | discard: R7 R5 | turn: 0",
        ["play R+2"],
        after="draw: | discard: R7 R5 R+2 | 1: Y1 Y2 B1 B2 | turn: 2",
        log=["0 plays R+2", "1 draws B1 B2 (draw_two)", "1 skipped"],
    ),
    Case(
        "§10 a Draw Two with one card left: that card, then one from the reshuffle",
        "0: R+2 G1 G2 | 1: Y1 Y2 | 2: Y3 | draw: B9 | discard: G7 G8 R5 | turn: 0",
        ["play R+2"],
        after="discard: R+2 | draw_size: 2 | sizes: 2 4 1 | turn: 2",
        log=["0 plays R+2", "reshuffled 3 cards", "1 draws B9 * (draw_two)", "1 skipped"],
    ),
    Case(
        "§10 nothing to draw at all: the seat draws nothing and play goes on",
        "0: G1 G2 | 1: Y1 Y2 | 2: Y3 | draw: | discard: R5 | turn: 0",
        ["draw"],
        after="0: G1 G2 | discard: R5 | draw: | turn: 1 | decision: play_or_draw",
        log=["0 draws nothing (choice)"],
    ),
    Case(
        "§10 nothing to draw with a playable card in hand: the turn still passes",
        "0: R1 G2 | 1: Y1 Y2 | 2: Y3 | draw: | discard: R5 | turn: 0",
        ["draw"],
        after="0: R1 G2 | turn: 1",
        log=["0 draws nothing (choice)"],
    ),
    Case(
        "§10 a Draw Two penalty takes what there is: one card of two",
        "0: R+2 G1 G2 | 1: Y1 Y2 | 2: Y3 | draw: | discard: R5 | turn: 0",
        ["play R+2"],
        after="1: Y1 Y2 R5 | discard: R+2 | draw: | turn: 2",
        log=["0 plays R+2", "reshuffled 1 cards", "1 draws R5 (draw_two)", "1 skipped"],
    ),
    Case(
        "§10 an accepted Wild Draw Four takes what there is: two cards of four",
        "0: W+4 G1 G2 | 1: Y1 Y2 | 2: Y3 | draw: B1 | discard: R5 | turn: 0",
        ["play W+4", "colour green", "accept"],
        after="1: Y1 Y2 B1 R5 | discard: W+4 | draw: | turn: 2 | colour: green",
        log=["0 plays W+4", "0 names green", "1 accepts", "reshuffled 1 cards",
             "1 draws B1 R5 (wild_draw_four)", "1 skipped"],
    ),
    Case(
        "§10 an innocent challenger draws what there is of its six",
        "0: W+4 G1 G2 | 1: Y1 Y2 | 2: Y3 | draw: B1 B2 | discard: R5 | turn: 0",
        ["play W+4", "colour green", "challenge"],
        after="1: Y1 Y2 B1 B2 R5 | draw: | turn: 2",
        log=["0 plays W+4", "0 names green", "1 challenges 0",
             "0 innocent, hand shown to 1: G1 G2", "reshuffled 1 cards",
             "1 draws B2 B1 R5 (challenge_innocent)", "1 skipped"],
    ),
    Case(
        "§10 a guilty offender draws what there is of its four",
        "0: W+4 R1 G2 | 1: Y1 Y2 | 2: Y3 | draw: | discard: R5 | turn: 0",
        ["play W+4", "colour green", "challenge"],
        after="0: R1 G2 R5 | draw: | discard: W+4 | turn: 1",
        log=["0 plays W+4", "0 names green", "1 challenges 0",
             "0 guilty, hand shown to 1: R1 G2", "reshuffled 1 cards",
             "0 draws R5 (challenge_guilty)"],
    ),
    Case(
        "§10 a UNO penalty takes what there is",
        "0: R1 R2 | 1: Y1 Y2 | 2: Y3 | draw: | discard: R5 | turn: 0",
        ["play R1"],
        after="0: R2 R5 | discard: R1 | turn: 1",
        log=["0 plays R1", "0 caught without UNO", "reshuffled 1 cards",
             "0 draws R5 (uno_penalty)"],
    ),
]


@pytest.mark.parametrize("case", table(PILES))
def test_piles(case: Case) -> None:
    case.check()


def test_reshuffle_is_random_and_loses_no_card() -> None:
    """§10: the old discards, shuffled by the match's generator; nothing lost or invented."""
    before = "0: R+2 G1 G2 | 1: Y1 Y2 | 2: Y3 | draw: B9 | discard: G7 G8 B5 R5 Y9 W R5"
    old_discards = Counter(cards("G7 G8 B5 R5 Y9 W R5"))  # all but the R+2 played
    orders = set()
    for seed in range(10):
        round_ = position(before + " | colour: red | turn: 2", rng=random.Random(seed))
        start = everything(round_)
        run(round_, ["draw"])  # seat 2 draws B9, the last card, and cannot play it
        run(round_, ["play R+2"])  # seat 1 must draw 2 from the reshuffled discards
        assert everything(round_) == start
        assert round_.discard == cards("R+2")
        drawn = round_.hands[1][2:]
        assert len(drawn) == 2
        assert Counter(drawn + round_.draw_pile) == old_discards
        orders.add(tuple(drawn + round_.draw_pile))
    assert len(orders) > 5


def everything(round_: Round) -> Counter[int]:
    total = Counter(round_.draw_pile + round_.discard)
    for hand in round_.hands:
        total.update(hand)
    return total
