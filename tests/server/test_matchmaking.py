"""The ladder's matchmaker as a pure function: tables of cases (the entrants, the pairs'
matches, the constraints, then the table expected), and the property that every table it
makes is a table."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.league.results import MatchRecord, SeatResult
from arena.rating.trueskill_ratings import ENVIRONMENT
from arena.server import ladder
from arena.server.config import League
from arena.server.matchmaking import (
    OVERDUE_FACTOR,
    REPEAT_ALLOWANCE,
    REPEAT_SHARE,
    Constraints,
    Entrant,
    next_table,
    pick_tables,
)
from arena.server.store import LeagueStore


def entrant(id: int, mu: float, sigma: float = 3.0, played: int = 20, waited: int = 0,
            author: int | None = None) -> Entrant:
    """An entrant past its placement, its own author's unless ``author`` says."""
    return Entrant(id, id if author is None else author, mu, sigma, played, waited)


CAP_AT_20 = int(REPEAT_SHARE * 20 + REPEAT_ALLOWANCE)
"""The matches two entrants of 20 matches each may play before the cap holds them."""


@dataclass(frozen=True)
class Case:
    name: str
    free: tuple[Entrant, ...]
    expected: frozenset[int] | None
    """The first table's ids (None: no table)."""
    counts: dict[tuple[int, int], int] = field(default_factory=dict)
    constraints: Constraints = field(default_factory=Constraints)
    author_running: dict[int, int] = field(default_factory=dict)


CASES = [
    Case("the closest pair, all equally uncertain",
         (entrant(1, 10), entrant(2, 20), entrant(3, 26), entrant(4, 27.5), entrant(5, 40)),
         frozenset({3, 4})),
    Case("placement first: a new entrant is seated before the closest pair",
         (entrant(1, 25, sigma=2), entrant(2, 25.5, sigma=2), entrant(3, 35, 6, played=1)),
         frozenset({3, 2})),
    Case("of two in placement, the one with fewer matches first",
         (entrant(1, 10, played=3, sigma=7), entrant(2, 40, played=1, sigma=7),
          entrant(3, 39), entrant(4, 11)),
         frozenset({2, 3})),
    Case("equal sigmas: a placing entrant meets the match of highest quality",
         (entrant(1, 25, played=0), entrant(2, 18), entrant(3, 23.5), entrant(4, 29),
          entrant(5, 33)),
         frozenset({1, 3})),
    Case("a pair at its repeat cap is not seated while another pair is under",
         (entrant(1, 25), entrant(2, 25.3), entrant(3, 32)), frozenset({2, 3}),
         counts={(1, 2): CAP_AT_20}),
    Case("a pair just under its cap is seated",
         (entrant(1, 25), entrant(2, 25.3), entrant(3, 32)), frozenset({1, 2}),
         counts={(1, 2): CAP_AT_20 - 1}),
    Case("a pair over its cap is seated when no other pair is under",
         (entrant(1, 25), entrant(2, 25.3)), frozenset({1, 2}),
         counts={(1, 2): 3 * CAP_AT_20}),
    Case("an author's entrants never meet",
         (entrant(1, 25, author=7), entrant(2, 25.1, author=7), entrant(3, 30)),
         frozenset({2, 3})),
    Case("an author's two entrants alone make no table",
         (entrant(1, 25, author=7), entrant(2, 25.1, author=7)), None),
    Case("an author's entrants meet when the league allows it",
         (entrant(1, 25, author=7), entrant(2, 25.1, author=7)), frozenset({1, 2}),
         constraints=Constraints(same_author_matches=True)),
    Case("an author at the running limit is not seated",
         (entrant(1, 25, author=7), entrant(2, 25.1), entrant(3, 30)), frozenset({2, 3}),
         author_running={7: 2}),
    Case("an author under the running limit is",
         (entrant(1, 25, author=7), entrant(2, 25.1), entrant(3, 30)), frozenset({1, 2}),
         author_running={7: 1}),
    Case("an entrant that waited past the overdue limit is seated first",
         (entrant(1, 25), entrant(2, 25.3), entrant(3, 5, waited=int(OVERDUE_FACTOR * 3))),
         frozenset({3, 2})),
    Case("one that waited less is not",
         (entrant(1, 25), entrant(2, 25.3), entrant(3, 5, waited=int(OVERDUE_FACTOR))),
         frozenset({1, 2})),
    Case("of two overdue, the one that waited longer",
         (entrant(1, 25), entrant(2, 25.3), entrant(3, 5, waited=40),
          entrant(4, 50, waited=60)), frozenset({4, 2})),
    Case("three seats: the two closest to the first",
         (entrant(1, 25, played=0), entrant(2, 10), entrant(3, 24), entrant(4, 27),
          entrant(5, 40)), frozenset({1, 3, 4}),
         constraints=Constraints(table_size=3)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_next_table(case: Case) -> None:
    table = next_table(case.free, case.counts, case.constraints, case.author_running,
                       random.Random(0))
    assert (None if table is None else frozenset(table)) == case.expected
    if table is not None:
        assert len(table) == len(set(table)) == case.constraints.table_size


def test_equal_sigmas_choose_the_highest_quality() -> None:
    """The placing entrant's opponent, among equally uncertain ones, is the one TrueSkill
    rates the best match (its quality)."""
    focus = entrant(1, 25, played=0)
    others = [entrant(2, 18), entrant(3, 23.5), entrant(4, 29), entrant(5, 33)]
    table = next_table([focus, *others], {}, Constraints(), {}, random.Random(0))
    assert table is not None
    best = max(others, key=lambda e: trueskill.quality_1vs1(
        ENVIRONMENT.create_rating(focus.mu, focus.sigma),
        ENVIRONMENT.create_rating(e.mu, e.sigma), env=ENVIRONMENT))
    assert set(table) == {focus.id, best.id}


def test_tables_in_one_call_seat_each_entrant_once_and_count_its_author() -> None:
    free = [entrant(1, 25, author=7), entrant(2, 25.2, author=7), entrant(3, 25.1),
            entrant(4, 25.3), entrant(5, 26), entrant(6, 26.1)]
    tables = pick_tables(free, {}, Constraints(max_running_per_author=1), {}, 3,
                         random.Random(1))
    seated = [v for t in tables for v in t]
    # Author 7 plays one table at most, so five entrants make two tables, not three.
    assert len(tables) == 2 and len(set(seated)) == 4
    assert len({1, 2} & set(seated)) <= 1


def test_the_seat_order_comes_from_the_generator_passed_in() -> None:
    free = [entrant(1, 25), entrant(2, 25.3)]
    orders = {next_table(free, {}, Constraints(), {}, random.Random(seed))
              for seed in range(20)}
    assert orders == {(1, 2), (2, 1)}
    assert next_table(free, {}, Constraints(), {}, random.Random(5)) == \
        next_table(free, {}, Constraints(), {}, random.Random(5))


entrants = st.lists(st.tuples(st.integers(1, 4), st.floats(0, 50), st.floats(0.5, 8.5),
                              st.integers(0, 30), st.integers(0, 60)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(entrants, st.integers(2, 4), st.integers(1, 4), st.booleans(), st.integers(1, 3),
       st.dictionaries(st.integers(1, 4), st.integers(0, 3)),
       st.dictionaries(st.tuples(st.integers(1, 12), st.integers(1, 12)),
                       st.integers(0, 40)), st.integers(0, 9))
def test_every_table_seats_distinct_free_entrants_once(
        rows: list[tuple[int, float, float, int, int]], table_size: int, slots: int,
        same_author: bool, limit: int, author_running: dict[int, int],
        counts: dict[tuple[int, int], int], seed: int) -> None:
    free = [Entrant(i, author, mu, sigma, played, waited)
            for i, (author, mu, sigma, played, waited) in enumerate(rows, 1)]
    constraints = Constraints(table_size, 4, same_author, limit)
    tables = pick_tables(free, {(min(a, b), max(a, b)): n for (a, b), n in counts.items()},
                         constraints, author_running, slots, random.Random(seed))
    assert len(tables) <= slots
    seated = [v for t in tables for v in t]
    assert len(seated) == len(set(seated))  # no entrant at two tables
    assert set(seated) <= {e.id for e in free}
    author_of = {e.id: e.author_id for e in free}
    tables_of: Counter[int] = Counter()
    for table in tables:
        assert len(table) == len(set(table)) == table_size
        authors = [author_of[v] for v in table]
        assert same_author or len(set(authors)) == len(authors)
        tables_of.update(set(authors))
    for author, count in tables_of.items():
        assert author_running.get(author, 0) + count <= limit


# -- the ladder's adapter, over a real store -------------------------------------------------


def test_the_ladder_reads_each_pairs_matches_and_each_wait_from_its_store(
        store: LeagueStore, league: League) -> None:
    """``ladder.pick_tables`` over a real store: a version that has not played for long is
    seated first; a pair past its cap is not seated again while a third version is free
    (though its match would teach most); running matches keep their versions out."""
    versions = []
    for name in ("alice", "bob", "carol"):
        author = store.authenticate(store.add_author(name))
        assert author is not None
        version = store.add_version(author.id, name, "1.0", f"hash-{name}", "sha",
                                    f"/bots/{name}", 5)
        store.activate(version.id, 1)
        versions.append(version.id)
    a, b, c = versions

    def play(seats: tuple[int, int], winner: int) -> None:
        match_id = store.start_ladder_match(seats)
        store.record(MatchRecord(match_id, 1.0, 10, 1, False, f"/logs/{match_id}", tuple(
            SeatResult(seat, 1 if seat == winner else 2, 0, 0, 0, False, ())
            for seat in range(2)), "0" * 64), seats)

    def tables(slots: int = 1) -> list[set[int]]:
        board = ladder.ladder_ratings(store, league)
        return [set(t) for t in ladder.pick_tables(store, league, board, slots, 0)]

    def teaching_most() -> set[int]:
        """The table of the same ratings with no wait and no pair's matches counted."""
        board = ladder.ladder_ratings(store, league)
        entrants = [Entrant(s.entrant_id, s.entrant_id, s.mu, s.sigma, s.matches, 0)
                    for s in board.standings]
        table = next_table(entrants, {}, Constraints(), {}, random.Random(0))
        assert table is not None
        return set(table)

    for seats in ((a, c), (b, c)) * league.ladder.placement_matches:
        play(seats, 0)  # c loses every match: far below a and b
    for number in range(8):
        play((a, b), number % 2)
    assert teaching_most() == {a, b}
    assert c in tables()[0]  # but c has waited 8 matches: overdue among three
    for number in range(40):
        play((a, b), number % 2)
    play((a, c), 0)
    play((b, c), 0)
    assert teaching_most() == {a, b}
    assert c in tables()[0]  # but a and b have played 48 of their 51 matches together
    store.start_ladder_match((a, c))
    assert tables(2) == []  # a and c are playing: b is free alone
