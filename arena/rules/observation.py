"""What one seat may know at a decision: exactly RULES.md §19, nothing about the shuffle."""

from __future__ import annotations

from typing import NamedTuple

from arena.rules.actions import DecisionKind


class Observation(NamedTuple):
    seat: int
    hand: tuple[int, ...]
    """The seat's own cards, sorted by face."""
    decision: DecisionKind | None
    """The decision this seat must make now; None when it is not this seat's decision."""
    current_seat: int
    top_card: int
    colour: int
    """The colour in play (the named one after a wild); 4 before a turned Wild is named."""
    direction: int
    """+1 clockwise, -1 counter-clockwise."""
    hand_sizes: tuple[int, ...]
    draw_pile_size: int
    discard_pile_size: int
    dealer: int
    scores: tuple[int, ...]
    round_number: int
    turn: int
    """Turns started in this round (§18 counts them against the turn limit)."""
