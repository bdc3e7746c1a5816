"""What the rating code reads: one seat's outcome of one match.

The league converts its stored results into these (``arena.league.store.StoredResult``
→ ``Outcome``), so rating never depends on how a season is stored.
"""

from __future__ import annotations

from typing import NamedTuple


class Outcome(NamedTuple):
    """One seat's outcome of one match: a tuple, as a report rates 100,000 of them (a
    frozen dataclass cost six times as much to make)."""

    match_id: str
    """Sorts in schedule order: the live rating applies matches in this order."""
    entrant_id: int
    seat: int
    place: int
    """1 is best; equal places are ties; a disqualified seat is placed last."""
    score: int = 0
    rounds_won: int = 0
    strikes: int = 0
    disqualified: bool = False
    faults: tuple[dict[str, object], ...] = ()
    deal: str = ""
    """The unit the bootstrap resamples: the matches of one duplicate deal share it (they
    are correlated by their cards); empty means the match on its own."""

    @property
    def unit(self) -> str:
        return self.deal or self.match_id
