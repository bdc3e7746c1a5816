"""The round-robin schedule: a pure function of the season.

Tables are every group of ``table_size`` entrants (every pair, at 2-player tables), so
every pair of entrants meets equally often. Each group plays ``matches_per_group`` matches
with the seats rotated between them, so each entrant sits in each position as equally as
the numbers allow (exactly, when ``matches_per_group`` is a multiple of the table size).
With duplicate deals each deal is played once per rotation of the seats, so every bot
meets the same cards from every position.

The schedule holds no randomness: each match names the label its deals are derived under
from the season's secret key (``arena.rules.seeds.MatchSeed.keyed``); the matches of one
duplicate deal share a label.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass


@dataclass(frozen=True)
class ScheduledMatch:
    match_id: str
    """Stable, sortable: the match's position in the schedule (ratings apply in this order)."""
    seats: tuple[int, ...]
    """Entrant index per seat."""
    chance: str
    """The label of the match's deals under the season key (shared by a duplicate deal)."""
    group: int
    deal: int


def schedule(entrants: int, table_size: int, matches_per_group: int,
             duplicate_deals: bool = False) -> list[ScheduledMatch]:
    if not 2 <= table_size <= entrants:
        raise ValueError(f"table size {table_size} needs at least that many entrants "
                         f"(have {entrants})")
    matches: list[ScheduledMatch] = []
    groups = list(itertools.combinations(range(entrants), table_size))
    total = len(groups) * matches_per_group * (table_size if duplicate_deals else 1)
    width = max(5, len(str(total)))  # ids sort in schedule order, however long the season
    # seat_counts[e][p]: how often entrant e has sat in position p so far.
    seat_counts = [[0] * table_size for _ in range(entrants)]
    for group_index, group in enumerate(groups):
        if duplicate_deals:
            for deal in range(matches_per_group):
                label = f"deal/{group_index}/{deal}"
                for rotation in range(table_size):
                    matches.append(_match(len(matches), group, rotation, label,
                                          group_index, deal, width))
            continue
        used: set[int] = set()
        for repeat in range(matches_per_group):
            rotation = _balancing_rotation(group, seat_counts, used)
            used = set() if len(used) + 1 == table_size else used | {rotation}
            match = _match(len(matches), group, rotation, None, group_index, repeat, width)
            for position, entrant in enumerate(match.seats):
                seat_counts[entrant][position] += 1
            matches.append(match)
    if not duplicate_deals:
        _even_out_seats(matches, seat_counts)
    return matches


def _even_out_seats(matches: list[ScheduledMatch], seat_counts: list[list[int]]) -> None:
    """Swap two players' seats within a match while that makes seat positions more even
    (sum of squared counts falls); deterministic, stops at a local optimum."""
    improved = True
    while improved:
        improved = False
        for index, match in enumerate(matches):
            seats = list(match.seats)
            for i, j in itertools.combinations(range(len(seats)), 2):
                a, b = seats[i], seats[j]
                ca, cb = seat_counts[a], seat_counts[b]
                if ca[j] - ca[i] + cb[i] - cb[j] + 2 < 0:
                    ca[i] -= 1
                    ca[j] += 1
                    cb[j] -= 1
                    cb[i] += 1
                    seats[i], seats[j] = b, a
                    improved = True
            if tuple(seats) != match.seats:
                matches[index] = dataclasses.replace(match, seats=tuple(seats))


def _balancing_rotation(group: tuple[int, ...], seat_counts: list[list[int]],
                        used: set[int]) -> int:
    """The rotation of the group's seats that sends each member where it has sat least
    (a group's repeats take distinct rotations first); ties go to the lowest rotation."""
    size = len(group)

    def cost(rotation: int) -> tuple[int, int, int]:
        seats = group[rotation:] + group[:rotation]
        counts = [seat_counts[entrant][position] for position, entrant in enumerate(seats)]
        return (rotation in used, sum(c * c for c in counts), rotation)

    return min(range(size), key=cost)


def _match(index: int, group: tuple[int, ...], rotation: int, chance: str | None,
           group_index: int, deal: int, width: int) -> ScheduledMatch:
    seats = group[rotation:] + group[:rotation]
    match_id = f"m{index + 1:0{width}d}"
    return ScheduledMatch(match_id, seats, chance or match_id, group_index, deal)
