"""What one seat may know at a decision: exactly docs/rules.md §19, nothing about the shuffle.

The last four fields are the variants' (§21-§32): which are on, and the public facts they
add; in official play they keep their defaults.
"""

from __future__ import annotations

from typing import Final, NamedTuple

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
    variants: tuple[str, ...] = ()
    """The variants in force (RuleOptions.variants), in rulebook order."""
    pending_penalty: int = 0
    """§21/§22: the draw penalty pending (cards), 0 when none."""
    partner: int = -1
    """§24: during an exchange, the other seat of it; -1 otherwise."""
    refills: tuple[int, ...] = ()
    """§30: the cards each seat draws the next time it empties its hand (0: it goes out);
    empty unless ``uno_in_seven`` is on."""


OFFICIAL_PLAY: Final = tuple(Observation._field_defaults.values())
"""The variants' fields in official play: their defaults."""
new_observation: Final = tuple.__new__
"""``new_observation(Observation, fields)``: ``Observation._make`` without its length check,
for the engine, which builds an observation at every decision; ``fields`` are all 18."""
