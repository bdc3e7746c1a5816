"""Final standing (§16-§17, §20, §31) and the points of a hand (§3, §26)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from arena.rules.cards import CARD_POINTS, CARD_RANK


def places(
    scores: Sequence[int], lowest_wins: bool = False, disqualified: Iterable[int] = ()
) -> tuple[int, ...]:
    """Each seat's place, 1 first; equal scores share a place (1, 2, 2, 4).

    Disqualified seats (§20) come after every seat that finished, ordered among
    themselves by score.
    """
    return places_by([s if lowest_wins else -s for s in scores], disqualified)


def places_by(keys: Sequence[Any], disqualified: Iterable[int] = ()) -> tuple[int, ...]:
    """Each seat's place by a key per seat, lowest first; equal keys share a place, and
    disqualified seats (§20) come after every seat that finished."""
    out = set(disqualified)

    def key(seat: int) -> tuple[bool, Any]:
        return (seat in out, keys[seat])

    order = sorted(range(len(keys)), key=key)
    result = [0] * len(keys)
    for position, seat in enumerate(order):
        if position and key(order[position - 1]) == key(seat):
            result[seat] = result[order[position - 1]]
        else:
            result[seat] = position + 1
    return tuple(result)


def lazy_places(won: Sequence[int], lost: Sequence[int], disqualified: Iterable[int] = ()
                ) -> tuple[int, ...]:
    """§31: by rounds won, then by fewer rounds lost."""
    return places_by([(-w, lost[s]) for s, w in enumerate(won)], disqualified)


def hand_points(hand: Sequence[int], zero_scores_50: bool = False) -> int:
    """The §3 points of a hand; with §26, a hand of one card, a 0, scores 50."""
    if zero_scores_50 and len(hand) == 1 and CARD_RANK[hand[0]] == 0:
        return 50
    return sum([CARD_POINTS[c] for c in hand])
