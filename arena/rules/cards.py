"""Cards, colours, points and the 108-card deck (docs/rules.md §2-§3).

A card is a small int, its *face* code: ``colour * 13 + rank`` for the 100 coloured cards
(rank 0-9 numbers, 10 Skip, 11 Reverse, 12 Draw Two), then ``WILD`` (52),
``WILD_DRAW_FOUR`` (53) and ``DRAW_TEN`` (54), the black "+10" of the ``draw_ten`` variant
(§28), which only its 112-card deck holds. Ints keep the engine fast; the tables below give
every property of a face in one lookup, and :func:`parse_card` / :func:`card_name` give a
compact notation (``R7``, ``GS``, ``BR``, ``Y+2``, ``W``, ``W+4``, ``W+10``) used in tests
and logs.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final


class Colour(IntEnum):
    RED = 0
    YELLOW = 1
    GREEN = 2
    BLUE = 3


class Kind(IntEnum):
    NUMBER = 0
    SKIP = 1
    REVERSE = 2
    DRAW_TWO = 3
    WILD = 4
    WILD_DRAW_FOUR = 5
    DRAW_TEN = 6
    """§28: the black "+10" of the ``draw_ten`` variant."""


Card = int

COLOUR_COUNT: Final = 4
RANKS_PER_COLOUR: Final = 13
SKIP_RANK: Final = 10
REVERSE_RANK: Final = 11
DRAW_TWO_RANK: Final = 12
WILD: Final = 52
WILD_DRAW_FOUR: Final = 53
DRAW_TEN: Final = 54
CARD_FACES: Final = 55
NO_COLOUR: Final = 4  # the colour slot of a wild card in CARD_COLOUR

_COLOUR_LETTERS: Final = "RYGB"
_RANK_SYMBOLS: Final = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "S", "R", "+2")


def coloured(colour: Colour | int, rank: int) -> Card:
    """The face of a coloured card; rank 0-9, or SKIP_RANK / REVERSE_RANK / DRAW_TWO_RANK."""
    return int(colour) * RANKS_PER_COLOUR + rank


# Lookup tables indexed by face. The rank of a black card is 13 / 14 / 15 so it never
# matches a coloured card by symbol; black cards are playable on anything anyway (§8, §28).
CARD_COLOUR: Final[tuple[int, ...]] = tuple(
    [f // RANKS_PER_COLOUR for f in range(WILD)] + [NO_COLOUR, NO_COLOUR, NO_COLOUR]
)
CARD_RANK: Final[tuple[int, ...]] = tuple(
    [f % RANKS_PER_COLOUR for f in range(WILD)] + [13, 14, 15]
)
CARD_KIND: Final[tuple[Kind, ...]] = tuple(
    [
        Kind.NUMBER if r < 10 else (Kind.SKIP, Kind.REVERSE, Kind.DRAW_TWO)[r - 10]
        for r in CARD_RANK[:WILD]
    ]
    + [Kind.WILD, Kind.WILD_DRAW_FOUR, Kind.DRAW_TEN]
)
# §3: numbers face value, Skip/Reverse/Draw Two 20, wilds 50; §28: a +10 50.
CARD_POINTS: Final[tuple[int, ...]] = tuple(
    [r if r < 10 else 20 for r in CARD_RANK[:WILD]] + [50, 50, 50]
)
# §4: for the dealer draw, action and black cards count as zero.
DEALER_DRAW_VALUE: Final[tuple[int, ...]] = tuple(
    [r if r < 10 else 0 for r in CARD_RANK[:WILD]] + [0, 0, 0]
)
CARD_NAMES: Final[tuple[str, ...]] = tuple(
    [_COLOUR_LETTERS[f // 13] + _RANK_SYMBOLS[f % 13] for f in range(WILD)]
    + ["W", "W+4", "W+10"]
)
_BY_NAME: Final[dict[str, Card]] = {name: face for face, name in enumerate(CARD_NAMES)}


def card_name(card: Card) -> str:
    """Compact notation: ``R7``, ``GS`` (skip), ``BR`` (reverse), ``Y+2``, ``W``, ``W+4``,
    ``W+10`` (§28)."""
    return CARD_NAMES[card]


def parse_card(text: str) -> Card:
    """Inverse of :func:`card_name`; raises ValueError naming the bad card."""
    try:
        return _BY_NAME[text.strip().upper()]
    except KeyError:
        raise ValueError(
            f"unknown card {text!r}: expected a colour letter R/Y/G/B with 0-9, S, R or +2, "
            "or W / W+4 / W+10"
        ) from None


def parse_cards(text: str) -> list[Card]:
    """Cards separated by spaces: ``"R7 GS W+4"``."""
    return [parse_card(word) for word in text.split()]


def points(cards: list[Card] | tuple[Card, ...]) -> int:
    """The §3 points of some cards."""
    return sum([CARD_POINTS[c] for c in cards])


def full_deck(draw_ten: bool = False) -> list[Card]:
    """The 108 cards of §2, in a fixed order (shuffle with the match's generator); with
    ``draw_ten``, the 112 of §28 (four "+10" cards more)."""
    deck: list[Card] = []
    for colour in range(COLOUR_COUNT):
        deck.append(coloured(colour, 0))
        for rank in range(1, RANKS_PER_COLOUR):
            deck += [coloured(colour, rank)] * 2
    deck += [WILD] * 4 + [WILD_DRAW_FOUR] * 4
    if draw_ten:
        deck += [DRAW_TEN] * 4
    return deck


def playable_faces(colour: int, top: Card) -> frozenset[Card]:
    """Faces playable on ``top`` when the current colour is ``colour`` (§8, bluffs included)."""
    rank = CARD_RANK[top]
    return frozenset(
        f
        for f in range(CARD_FACES)
        if f >= WILD or CARD_COLOUR[f] == colour or CARD_RANK[f] == rank
    )


# PLAYABLE[colour * CARD_FACES + top]: precomputed so legal moves are one set intersection.
PLAYABLE: Final[tuple[frozenset[Card], ...]] = tuple(
    playable_faces(colour, top) for colour in range(COLOUR_COUNT) for top in range(CARD_FACES)
)
