"""The round-robin schedule (issue 5): pair meetings and seat positions balanced, a pure
function of its arguments, and duplicate deals played once per seat rotation.

Every (entrants, table size) from 2..12 entrants and tables of 2..10 is checked, each with a
few matches-per-group values: fewer than the table size, a multiple of it, and neither.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.league.schedule import ScheduledMatch, schedule

SHAPES = [(entrants, size) for entrants in range(2, 13)
          for size in range(2, min(10, entrants) + 1)]


def per_group_values(size: int) -> list[int]:
    """Matches per group to try: 1..3, one whole rotation, and one past it."""
    return sorted({1, 2, 3, size, size + 1})


@functools.cache
def plain_schedule(entrants: int, size: int, per_group: int) -> list[ScheduledMatch]:
    """Shared by the pair and seat tests (the schedule is pure; computing it once is enough)."""
    return schedule(entrants, size, per_group)


def shape_id(shape: tuple[int, int]) -> str:
    return f"{shape[0]}entrants-{shape[1]}seats"


def pair_meetings(matches: list[ScheduledMatch]) -> Counter[tuple[int, int]]:
    meetings: Counter[tuple[int, int]] = Counter()
    for match in matches:
        meetings.update(itertools.combinations(sorted(match.seats), 2))
    return meetings


def seat_counts(matches: list[ScheduledMatch], entrants: int, size: int) -> list[int]:
    """How often each entrant sat in each position, for every (entrant, position)."""
    counts: Counter[tuple[int, int]] = Counter()
    for match in matches:
        counts.update((entrant, position) for position, entrant in enumerate(match.seats))
    return [counts[entrant, position] for entrant in range(entrants) for position in range(size)]


def rotations(seats: tuple[int, ...]) -> set[tuple[int, ...]]:
    return {seats[shift:] + seats[:shift] for shift in range(len(seats))}


def check_well_formed(matches: list[ScheduledMatch], entrants: int, size: int) -> None:
    for match in matches:
        assert len(match.seats) == size
        assert len(set(match.seats)) == size, f"{match.match_id} seats someone twice"
        assert all(0 <= entrant < entrants for entrant in match.seats)


# -- pairs and seats ----------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("duplicate_deals", [False, True], ids=["plain", "duplicate-deals"])
def test_every_pair_of_entrants_meets_equally_often(shape: tuple[int, int],
                                                    duplicate_deals: bool) -> None:
    entrants, size = shape
    # A duplicate deal is already a whole rotation: a few deals suffice.
    for per_group in (1, 2) if duplicate_deals else per_group_values(size):
        matches = (schedule(entrants, size, per_group, duplicate_deals=True)
                   if duplicate_deals else plain_schedule(entrants, size, per_group))
        check_well_formed(matches, entrants, size)
        meetings = pair_meetings(matches)
        assert set(meetings) == set(itertools.combinations(range(entrants), 2))
        assert len(set(meetings.values())) == 1, (per_group, meetings)


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_seat_positions_balanced(shape: tuple[int, int]) -> None:
    """Exactly equal when matches_per_group is a multiple of the table size; otherwise
    every (entrant, position) count within 2 of every other (the documented guarantee)."""
    entrants, size = shape
    for per_group in per_group_values(size):
        counts = seat_counts(plain_schedule(entrants, size, per_group), entrants, size)
        if per_group % size == 0:
            assert max(counts) == min(counts), (per_group, counts)
        else:
            assert max(counts) - min(counts) <= 2, (per_group, counts)


@settings(max_examples=60, deadline=None)
@given(entrants=st.integers(2, 8), data=st.data(), per_group=st.integers(1, 12))
def test_balance_for_any_matches_per_group(entrants: int, data: st.DataObject,
                                           per_group: int) -> None:
    size = data.draw(st.integers(2, min(10, entrants)), label="table_size")
    matches = schedule(entrants, size, per_group)
    check_well_formed(matches, entrants, size)
    groups = len(list(itertools.combinations(range(entrants), size)))
    assert len(matches) == groups * per_group
    assert len(set(pair_meetings(matches).values())) == 1
    counts = seat_counts(matches, entrants, size)
    assert max(counts) - min(counts) <= (0 if per_group % size == 0 else 2)


# -- determinism, ids and deals -----------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("duplicate_deals", [False, True], ids=["plain", "duplicate-deals"])
def test_schedule_is_deterministic_with_sorted_unique_ids(shape: tuple[int, int],
                                                          duplicate_deals: bool) -> None:
    entrants, size = shape
    first = schedule(entrants, size, 3, duplicate_deals=duplicate_deals)
    assert schedule(entrants, size, 3, duplicate_deals=duplicate_deals) == first
    ids = [match.match_id for match in first]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids), "match ids must sort in schedule order (ratings use it)"


def test_match_ids_are_stable() -> None:
    """A season file's schedule must not change between versions: pinned here."""
    matches = schedule(3, 2, 2)
    assert [(m.match_id, m.seats, m.group, m.deal) for m in matches] == [
        ("m00001", (0, 1), 0, 0), ("m00002", (1, 0), 0, 1),
        ("m00003", (0, 2), 1, 0), ("m00004", (2, 0), 1, 1),
        ("m00005", (1, 2), 2, 0), ("m00006", (2, 1), 2, 1),
    ]


def test_match_ids_sort_in_schedule_order_past_99999_matches() -> None:
    """Ratings and resume order matches by id (a string): ids must keep sorting in
    schedule order however long the season (20 entrants at 10-seat tables play 184,756)."""
    matches = schedule(2, 2, 100_001)
    ids = [match.match_id for match in matches]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_every_match_has_its_own_deal_label(shape: tuple[int, int]) -> None:
    """The schedule holds no randomness, only the label each match's deals derive under
    from the season key (one per match without duplicate deals)."""
    entrants, size = shape
    matches = schedule(entrants, size, size + 1)
    labels = [match.chance for match in matches]
    assert len(set(labels)) == len(labels)
    assert labels == [match.match_id for match in matches]


# -- duplicate deals ----------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_duplicate_deals_play_each_deal_in_every_rotation(shape: tuple[int, int]) -> None:
    entrants, size = shape
    for per_group in (1, 2):
        matches = schedule(entrants, size, per_group, duplicate_deals=True)
        by_deal: dict[str, list[ScheduledMatch]] = defaultdict(list)
        for match in matches:
            by_deal[match.chance].append(match)
        groups = len(list(itertools.combinations(range(entrants), size)))
        assert len(by_deal) == groups * per_group, "one deal label per (group, deal)"
        for deal in by_deal.values():
            assert len(deal) == size, "each deal is played once per rotation"
            assert len({(m.group, m.deal) for m in deal}) == 1
            assert len({frozenset(m.seats) for m in deal}) == 1, "always the same group"
            # Each member sits in each position exactly once over the deal's matches ...
            for position in range(size):
                assert sorted(m.seats[position] for m in deal) == sorted(deal[0].seats)
            # ... namely in the table's rotations.
            assert {m.seats for m in deal} == rotations(deal[0].seats)
        counts = seat_counts(matches, entrants, size)
        assert max(counts) == min(counts)


# -- arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize(("entrants", "size"), [(2, 3), (3, 4), (5, 10), (9, 10), (2, 1)])
def test_impossible_table_size_raises(entrants: int, size: int) -> None:
    with pytest.raises(ValueError, match="table size"):
        schedule(entrants, size, 2)
