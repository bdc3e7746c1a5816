"""Final standing (§16-§17, §20)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def places(
    scores: Sequence[int], lowest_wins: bool = False, disqualified: Iterable[int] = ()
) -> tuple[int, ...]:
    """Each seat's place, 1 first; equal scores share a place (1, 2, 2, 4).

    Disqualified seats (§20) come after every seat that finished, ordered among
    themselves by score.
    """
    out = set(disqualified)

    def key(seat: int) -> tuple[bool, int]:
        return (seat in out, scores[seat] if lowest_wins else -scores[seat])

    order = sorted(range(len(scores)), key=key)
    result = [0] * len(scores)
    for position, seat in enumerate(order):
        if position and key(order[position - 1]) == key(seat):
            result[seat] = result[order[position - 1]]
        else:
            result[seat] = position + 1
    return tuple(result)
