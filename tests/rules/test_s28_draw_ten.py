"""§28 ``draw_ten``: four black +10 cards (112 in the deck), playable at any time; the
player names a colour, the next seat draws 10 and loses its turn; 50 points. With
``stacking`` a +10 answers only a +10."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from notation import Case, table

from arena.rules import events as ev
from arena.rules.cards import DRAW_TEN, full_deck, parse_cards, points
from arena.rules.match import Match
from arena.rules.options import RuleOptions
from arena.rules.variants import VariantRound

TEN = RuleOptions(draw_ten=True)
TEN_STACKING = RuleOptions(draw_ten=True, stacking=True)

DRAW = "draw: Y9 Y8 Y7 Y6 G6 G5 G4 G3 G2 G1 B6 B5 B4 B3 B2 B1"

TENS = [
    Case(
        "§28 a +10 is playable at any time",
        "0: W+10 R1 G9 | 1: B1 B2 | 2: Y3 | discard: B5 | turn: 0",
        [],
        legal=["play W+10", "draw"],
        options=TEN,
    ),
    Case(
        "§28 the player of a +10 names a colour",
        "0: W+10 R1 G9 | 1: B1 B2 | 2: Y3 | discard: B5 | turn: 0",
        ["play W+10"],
        after="turn: 0 | decision: choose_colour",
        options=TEN,
    ),
    Case(
        "§28 the next seat draws 10 and loses its turn",
        f"0: W+10 R1 G9 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: B5 | turn: 0",
        ["play W+10", "colour green"],
        after="1: B1 B2 B1 B2 B3 B4 B5 B6 G1 G2 G3 G4 | turn: 2 | colour: green"
              " | decision: play_or_draw",
        log=["0 plays W+10", "0 names green", "1 draws B1 B2 B3 B4 B5 B6 G1 G2 G3 G4 (draw_ten)",
             "1 skipped"],
        options=TEN,
    ),
    Case(
        "§28 no challenge on a +10 (that is the Wild Draw Four's, §13)",
        f"0: W+10 R1 G9 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0",
        ["play W+10", "colour green"],
        after="turn: 2 | sizes: 2 12 1",
        options=TEN,
    ),
    Case(
        "§28/§15 a +10 played as the last card: the next seat still draws 10, and they count",
        f"0: W+10 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: B5 | turn: 0",
        ["play W+10"],
        after="over: yes | winner: 0 | 1: B1 B2 B1 B2 B3 B4 B5 B6 G1 G2 G3 G4 | points: 37",
        log=["0 plays W+10", "1 draws B1 B2 B3 B4 B5 B6 G1 G2 G3 G4 (draw_ten)"],
        options=TEN,
    ),
    Case(
        "§28 a +10 scores 50",
        "0: R3 | 1: W+10 | 2: B9 | discard: R5 | turn: 0",
        ["play R3"],
        after="points: 59",
        options=TEN,
    ),
    Case(
        "§28/§21 with stacking a +10 is answered only by a +10",
        f"0: W+10 R1 G9 | 1: W+10 W+4 G+2 | 2: Y3 | {DRAW} | discard: B5 | turn: 0",
        ["play W+10", "colour green"],
        after="turn: 1 | decision: stack_or_accept | pending: 10",
        legal=["play W+10", "accept"],
        options=TEN_STACKING,
    ),
    Case(
        "§28/§21 stacked +10s add up: 10+10 = 20",
        f"0: W+10 R1 G9 | 1: W+10 W+4 G+2 | 2: Y3 | {DRAW} | discard: B5 | turn: 0",
        ["play W+10", "colour green", "play W+10", "colour red"],
        after="turn: 2 | pending: 20 | colour: red",
        options=TEN_STACKING,
    ),
    Case(
        "§28/§21 a +10 does not answer a Draw Two, nor a Wild Draw Four",
        f"0: R+2 W+4 G9 | 1: W+10 B1 | 2: Y3 | {DRAW} | discard: R5 | turn: 0",
        ["play R+2"],
        legal=["accept"],
        options=TEN_STACKING,
    ),
]


@pytest.mark.parametrize("case", table(TENS))
def test_draw_ten(case: Case) -> None:
    case.check()


def test_the_deck_holds_112_cards_with_four_plus_tens() -> None:
    deck = full_deck(draw_ten=True)
    assert len(deck) == 112
    assert Counter(deck)[DRAW_TEN] == 4
    assert sorted(deck) == sorted([*full_deck(), *parse_cards("W+10 W+10 W+10 W+10")])
    assert points([DRAW_TEN]) == 50


def test_a_match_deals_from_the_112_cards() -> None:
    match = Match(4, random.Random(3), TEN)
    round_ = match.round
    held = sum(len(h) for h in round_.hands) + len(round_.draw_pile) + len(round_.discard)
    assert held == 112


def test_a_plus_ten_turned_first_goes_back_into_the_pile() -> None:
    """§7/§28: like a Wild Draw Four, a +10 cannot start the discard pile."""
    deck = full_deck(draw_ten=True)
    deck.remove(DRAW_TEN)
    dealt = deck[-21:]  # the top 21 cards deal 7 to each of 3 seats; the +10 comes next
    pile = [*deck[:-21], DRAW_TEN, *dealt]
    events: list[ev.Event] = []
    round_ = VariantRound(3, 0, 1, TEN, random.Random(1), events, [0, 0, 0], deck=pile)
    assert events[4] == ev.FirstCardReturned(DRAW_TEN)
    assert round_.discard[-1] != DRAW_TEN
    assert DRAW_TEN in round_.draw_pile
    assert sum(len(h) for h in round_.hands) + len(round_.draw_pile) + 1 == 112
