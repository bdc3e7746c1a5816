"""The round-robin schedule: a pure, deterministic function of the season.

Tables are every group of ``table_size`` entrants (every pair, at 2-player tables), so
every pair of entrants meets equally often; each group plays ``matches_per_group``
matches. Three things are balanced:

* **Interleaving.** The season is played round by round: in a round each entrant sits at
  one table at most, and a group's matches fall in different rounds (never back to back),
  so the live rating, which applies results in schedule order, does not see one pair's
  matches all at once. Two-player seasons use the circle method: each *leg* is a whole
  round robin (n - 1 rounds, n if n is odd), and match k is computed directly from k
  (``two_player_match``) without the matches before it. Larger tables play one match of
  every group per *cycle*, the groups split into rounds of disjoint tables.
* **Seat positions.** Each entrant sits in each position as equally as the numbers allow
  (exactly when ``matches_per_group`` is a multiple of the table size, within 2
  otherwise). Two-player: the pair (a, b), a < b, has a first when a + b is odd, and
  every other leg swaps the seats.
* **Who sits directly after whom** (tables of 3+), which matters a lot in UNO (the player
  after you suffers your Skips and Draw Twos). A group's matches come in blocks of
  ``table_size``: one cyclic order of the group, played in each of its rotations (which
  balances positions and leaves "who sits after whom" unchanged). Each block takes the
  cyclic order this group has used least, and among those the one whose successor pairs
  have been used least over the whole season so far, so a group with enough matches
  plays all (k - 1)! cyclic orders equally, and the season stays balanced when it has
  fewer. Up to 6 seats every cyclic order is a candidate; beyond that (9! orders at 10
  seats) the order is built greedily, each next seat going to the member that has sat
  after the previous one least. A last, incomplete block chooses order and rotation per
  match, positions first.

With duplicate deals each deal is played once per rotation of one cyclic order (at two
seats: once per seat order), so every bot meets the same cards from every position;
``matches_per_group`` then counts matches and must be a multiple of the table size. Each
deal is then a block, and the blocks' cyclic orders are what balances who sits after whom:
each takes the order least used so far, and a local search over whole blocks swaps in
other orders of the same group while that evens the season's successor counts.

The schedule holds no randomness: each match names the label its deals are derived under
from the season's secret key (``arena.rules.seeds.MatchSeed.keyed``); the matches of one
duplicate deal share a label.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:  # numpy and scipy are imported where tables of 3+ need them: every
    # process that reads the store imports this module (a Dask worker, at its first
    # match), and scipy.optimize alone costs about 0.7 s to import
    import numpy as np
    from numpy.typing import NDArray

EXHAUSTIVE_SEATINGS = 720
"""Groups with at most this many seatings (k!, up to 6 seats) weigh every one."""

MOST_MATCHES = 2_000_000
"""The most matches a two-player season schedules (each computed from its number alone)."""
MOST_TABLE_MATCHES = 100_000
"""The most matches a season at tables of 3+ schedules: that schedule is made whole before
the first match (every group of entrants, balanced match by match: 30 to 90 s at this
size on a 2-core machine), and the groups grow fast (200 entrants at 4 seats: 64,684,950
groups)."""


def schedule_size(entrants: int, table_size: int, matches_per_group: int) -> int:
    """The matches of a season: every group of ``table_size`` entrants, each
    ``matches_per_group`` times."""
    return math.comb(entrants, table_size) * matches_per_group


def too_large(entrants: int, table_size: int, matches_per_group: int) -> str | None:
    """Why a season of this shape cannot be scheduled (None: it can)."""
    total = schedule_size(entrants, table_size, matches_per_group)
    most = MOST_MATCHES if table_size == 2 else MOST_TABLE_MATCHES
    if total <= most:
        return None
    groups = math.comb(entrants, table_size)
    kind = ("pair" if table_size == 2 else "group") + ("" if groups == 1 else "s") + (
        "" if table_size == 2 else f" of {table_size}")
    return (f"{entrants} entrants make {groups:,} {kind}, {total:,} matches at "
            f"matches_per_group = {matches_per_group}: more than the {most:,} a season "
            f"{'at two seats' if table_size == 2 else 'at tables of 3+'} schedules (every "
            f"{'pair' if table_size == 2 else 'group'} plays); lower matches_per_group"
            + (", or split the entrants into several seasons" if table_size == 2 else
               ", play at smaller tables, or split the entrants into several seasons"))


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
    """The group's repeat (or, with duplicate deals, the group's deal) this match plays."""
    round: int = 0
    """1-based round of the season: an entrant plays at most once a round."""


def match_id(index: int, total: int) -> str:
    """Ids sort in schedule order, however long the season."""
    return f"m{index + 1:0{max(5, len(str(total)))}d}"


def check_shape(entrants: int, table_size: int, matches_per_group: int,
                duplicate_deals: bool) -> None:
    if not 2 <= table_size <= entrants:
        raise ValueError(f"table size {table_size} needs at least that many entrants "
                         f"(have {entrants})")
    if matches_per_group < 1:
        raise ValueError("matches per group must be at least 1")
    if duplicate_deals and matches_per_group % table_size:
        raise ValueError(
            f"with duplicate deals each deal is played once per seat rotation, so matches "
            f"per group ({matches_per_group}) must be a multiple of the table size "
            f"({table_size})")


def schedule(entrants: int, table_size: int, matches_per_group: int,
             duplicate_deals: bool = False) -> list[ScheduledMatch]:
    """The whole schedule as a list (see ``lazy_schedule`` for large seasons)."""
    return list(lazy_schedule(entrants, table_size, matches_per_group, duplicate_deals))


def lazy_schedule(entrants: int, table_size: int, matches_per_group: int,
                  duplicate_deals: bool = False) -> Sequence[ScheduledMatch]:
    """The schedule as a sequence: at two seats each match is computed when asked for
    (``TwoPlayerSchedule``: nothing is held, match k costs the same for any k); tables of
    3+ are balanced match after match over the whole season, so they come as a list."""
    check_shape(entrants, table_size, matches_per_group, duplicate_deals)
    if table_size == 2:
        return TwoPlayerSchedule(entrants, matches_per_group, duplicate_deals)
    return _table_schedule(entrants, table_size, matches_per_group, duplicate_deals)


class TwoPlayerSchedule(Sequence[ScheduledMatch]):
    """A two-player season's schedule, each match computed from its index on its own (a
    200-entrant round robin of 4 matches a pair is 79,600 matches: the list took 40 MB)."""

    def __init__(self, entrants: int, matches_per_group: int, duplicate_deals: bool) -> None:
        self.entrants = entrants
        self.matches_per_group = matches_per_group
        self.duplicate_deals = duplicate_deals
        self.total = math.comb(entrants, 2) * matches_per_group

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, index: int) -> ScheduledMatch: ...

    @overload
    def __getitem__(self, index: slice) -> list[ScheduledMatch]: ...

    def __getitem__(self, index: int | slice) -> ScheduledMatch | list[ScheduledMatch]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.total))]
        if index < 0:
            index += self.total
        return two_player_match(self.entrants, self.matches_per_group, self.duplicate_deals,
                                index)

    def __iter__(self) -> Iterator[ScheduledMatch]:
        """Every match in order, a round's pairs computed once (the same matches as
        ``two_player_match`` index by index: tested)."""
        entrants, per_group = self.entrants, self.matches_per_group
        rounds_per_leg = entrants - 1 + entrants % 2
        index = 0
        for leg in range(per_group):
            for round_in_leg in range(rounds_per_leg):
                round_number = leg * rounds_per_leg + round_in_leg + 1
                for a, b in circle_round(entrants, round_in_leg):
                    first, second = (a, b) if (a + b) % 2 else (b, a)
                    if leg % 2:
                        first, second = second, first
                    group = pair_index(entrants, a, b)
                    identifier = match_id(index, self.total)
                    if self.duplicate_deals:
                        deal, chance = leg // 2, f"deal/{group}/{leg // 2}"
                    else:
                        deal, chance = leg, identifier
                    yield ScheduledMatch(identifier, (first, second), chance, group, deal,
                                         round_number)
                    index += 1

    def index_of(self, identifier: str) -> int:
        """The index of the match called ``identifier`` (ValueError if none is)."""
        index = int(identifier[1:]) - 1 if identifier[1:].isdigit() else -1
        if not 0 <= index < self.total or match_id(index, self.total) != identifier:
            raise ValueError(f"{identifier} is not in this schedule")
        return index


# -- two players: the circle method, match by match ------------------------------------------


def circle_round(entrants: int, round_index: int) -> list[tuple[int, int]]:
    """The pairs of one round of the circle method (a < b), odd counts with a bye."""
    size = entrants + entrants % 2
    slots = [size - 1] + [(i + round_index) % (size - 1) for i in range(size - 1)]
    pairs = []
    for position in range(size // 2):
        a, b = slots[position], slots[size - 1 - position]
        if a < entrants and b < entrants:
            pairs.append((min(a, b), max(a, b)))
    return pairs


def circle_pair(entrants: int, round_index: int, table: int) -> tuple[int, int]:
    """Table ``table`` of ``circle_round(entrants, round_index)``, computed on its own.

    Slot 0 holds the fixed entrant (with an odd count, the bye: then table t is the pair
    at position t + 1), slot i > 0 holds (i - 1 + round) mod (size - 1), and position p
    pairs slots p and size - 1 - p."""
    size = entrants + entrants % 2
    position = table + entrants % 2

    def slot(i: int) -> int:
        return size - 1 if i == 0 else (i - 1 + round_index) % (size - 1)

    a, b = slot(position), slot(size - 1 - position)
    return (a, b) if a < b else (b, a)


def pair_index(entrants: int, a: int, b: int) -> int:
    """The index of the pair (a, b), a < b, in ``itertools.combinations`` order."""
    return a * entrants - a * (a + 1) // 2 + (b - a - 1)


def two_player_match(entrants: int, matches_per_group: int, duplicate_deals: bool,
                     index: int) -> ScheduledMatch:
    """Match ``index`` of a two-player season, computed on its own."""
    per_round = entrants // 2
    rounds_per_leg = entrants - 1 + entrants % 2
    total = math.comb(entrants, 2) * matches_per_group
    if not 0 <= index < total:
        raise IndexError(f"match {index} of a {total}-match season")
    round_number, table = divmod(index, per_round)
    leg, round_in_leg = divmod(round_number, rounds_per_leg)
    a, b = circle_pair(entrants, round_in_leg, table)
    first, second = (a, b) if (a + b) % 2 else (b, a)
    if leg % 2:
        first, second = second, first
    group = pair_index(entrants, a, b)
    identifier = match_id(index, total)
    if duplicate_deals:
        deal = leg // 2
        chance = f"deal/{group}/{deal}"
    else:
        deal, chance = leg, identifier
    return ScheduledMatch(identifier, (first, second), chance, group, deal, round_number + 1)


# -- tables of three or more --------------------------------------------------------------------


@dataclass
class _Balance:
    """What the season has used so far: seat positions and who sat right after whom."""

    positions: NDArray[np.int64]
    """positions[e, p]: how often entrant e sat in position p."""
    successors: NDArray[np.int64]
    """successors[a, b]: how often b sat directly after a, round the table."""

    def add(self, seats: tuple[int, ...]) -> None:
        for position, entrant in enumerate(seats):
            self.positions[entrant, position] += 1
        for a, b in _successor_pairs(seats):
            self.successors[a, b] += 1


def _successor_pairs(order: tuple[int, ...]) -> list[tuple[int, int]]:
    """(a, b) for each b sitting directly after a, round the table."""
    return [(order[i], order[(i + 1) % len(order)]) for i in range(len(order))]


def _rotations(order: tuple[int, ...]) -> list[tuple[int, ...]]:
    return [order[r:] + order[:r] for r in range(len(order))]


@dataclass
class _GroupPlan:
    members: NDArray[np.int64]
    successors: NDArray[np.int64]
    """Who sat directly after whom within this group (by member index)."""
    taken: NDArray[np.bool_]
    """taken[i, p]: member i already sat in position p in the block in progress."""
    block: list[tuple[int, ...]] = field(default_factory=list)


def _greedy_order(group: tuple[int, ...], balance: _Balance) -> tuple[int, ...]:
    """A cyclic order built seat by seat: next comes whoever sat after the last one least."""
    order = [group[0]]
    left = list(group[1:])
    while left:
        nxt = min(left, key=lambda e: (int(balance.successors[order[-1], e]), e))
        order.append(nxt)
        left.remove(nxt)
    return tuple(order)


_NEXT_SEAT = {size: [(i + 1) % size for i in range(size)] for size in range(2, 11)}

EXHAUSTIVE_CYCLIC_ORDERS = 120
"""Groups with at most this many cyclic orders ((k - 1)!, up to 6 seats) weigh every one
when a block must be the rotations of one order (duplicate deals)."""


def cyclic_orders(members: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every cyclic order of the members, each once (starting with the first member)."""
    first, rest = members[0], members[1:]
    return [(first, *others) for others in itertools.permutations(rest)]


def _least_used_order(plan: _GroupPlan, members: tuple[int, ...],
                      balance: _Balance) -> tuple[int, ...]:
    """The cyclic order for a block of rotations: of every cyclic order (up to
    ``EXHAUSTIVE_CYCLIC_ORDERS``), the one whose successor pairs this group, then the
    season, has used least; beyond that, one built greedily seat by seat."""
    if math.factorial(len(members) - 1) > EXHAUSTIVE_CYCLIC_ORDERS:
        order = _greedy_order(members, balance)
    else:
        index = {e: i for i, e in enumerate(members)}

        def used(order: tuple[int, ...]) -> tuple[int, int, tuple[int, ...]]:
            pairs = _successor_pairs(order)
            return (sum(int(plan.successors[index[a], index[b]]) for a, b in pairs),
                    sum(int(balance.successors[a, b]) for a, b in pairs), order)

        order = min(cyclic_orders(members), key=used)
    for a, b in _successor_pairs(order):
        plan.successors[members.index(a), members.index(b)] += 1
    return order


def _balanced_positions(members: tuple[int, ...], balance: _Balance) -> tuple[int, ...]:
    """The seating that sends each member where it has sat least (a minimum-cost
    assignment of members to positions)."""
    from scipy.optimize import linear_sum_assignment

    cost = balance.positions[list(members)]
    rows, columns = linear_sum_assignment(cost)
    seats = [0] * len(members)
    for row, column in zip(rows, columns, strict=True):
        seats[int(column)] = members[int(row)]
    return tuple(seats)


def _next_seats(plan: _GroupPlan, balance: _Balance, complete_block: bool,
                seatings: NDArray[np.int64] | None) -> tuple[int, ...]:
    """The seating of the group's next match.

    Within a whole block of ``table_size`` matches each member takes each position once (a
    Latin square, always completable row by row), and the row chosen is the one whose
    successor pairs this group, then the season, has used least. ``complete_block``
    false: the group's last, incomplete block, where positions over the season come
    first. ``seatings``: every permutation of member indices, or None when there are too
    many to weigh (then a block is the rotations of a greedily built cyclic order)."""
    import numpy as np

    size = len(plan.members)
    if len(plan.block) == size:
        plan.block = []
        plan.taken[:] = False
    members = tuple(int(e) for e in plan.members)
    if seatings is None:
        if not complete_block:
            seats = _balanced_positions(members, balance)
        else:
            base = plan.block[0] if plan.block else _least_used_order(plan, members, balance)
            left = [r for r in _rotations(base) if r not in plan.block]
            seats = min(left, key=lambda r: sum(int(balance.positions[e, p])
                                                for p, e in enumerate(r)))
    else:
        following = seatings[:, _NEXT_SEAT[size]]
        local = plan.successors[seatings, following].sum(axis=1)
        entrants, after = plan.members[seatings], plan.members[following]
        season = balance.successors[entrants, after].sum(axis=1)
        positions = balance.positions[entrants, np.arange(size)].sum(axis=1)
        weight = 1 << 20  # lexicographic order of the three costs in one integer
        if complete_block:
            key = (local * weight + season) * weight + positions
            allowed = ~plan.taken[seatings, np.arange(size)].any(axis=1)
            key = np.where(allowed, key, np.iinfo(np.int64).max)
        else:
            key = (positions * weight + local) * weight + season
        best = seatings[int(np.argmin(key))]
        seats = tuple(members[i] for i in best)
        for position, i in enumerate(best):
            plan.taken[i, position] = True
        for a, b in _successor_pairs(tuple(int(i) for i in best)):
            plan.successors[a, b] += 1
    plan.block.append(seats)
    return seats


LOCAL_SEARCH_PASSES = 20
LOCAL_SEARCH_MOVES = 20_000
"""Blocks times position permutations tried per pass, at most (else mirror images only)."""


def _improve_blocks(matches: list[ScheduledMatch], table_size: int,
                    rotations_only: bool) -> list[ScheduledMatch]:
    """Local search over whole blocks: permuting the positions of every seating of a block
    alike keeps it a Latin square (so positions stay exact) and changes who sits after
    whom; a permutation is kept when it lowers the sum of squared successor counts.
    Deterministic; stops at a local optimum (or after ``LOCAL_SEARCH_PASSES``).
    ``rotations_only``: blocks must stay the rotations of one cyclic order (duplicate
    deals), so a move gives the block the rotations of another cyclic order of its group:
    any of them, or past ``LOCAL_SEARCH_MOVES`` those two swaps away (``_block_moves``)."""
    blocks: dict[tuple[int, int], list[int]] = {}
    for index, match in enumerate(matches):  # a duplicate deal is a block on its own
        block = match.deal if rotations_only else match.deal // table_size
        blocks.setdefault((match.group, block), []).append(index)
    whole = [indices for indices in blocks.values() if len(indices) == table_size]
    counts: dict[tuple[int, int], int] = {}
    for match in matches:
        for pair in _successor_pairs(match.seats):
            counts[pair] = counts.get(pair, 0) + 1
    if not whole:
        return matches
    orders = math.factorial(table_size - (1 if rotations_only else 0))
    affordable = len(whole) * orders <= LOCAL_SEARCH_MOVES
    moves = (list(itertools.permutations(range(table_size))) if affordable
             else [tuple([0, *range(table_size - 1, 0, -1)])])  # the mirror image only
    seats = [match.seats for match in matches]
    for _ in range(LOCAL_SEARCH_PASSES):
        improved = False
        for indices in whole:
            old_pairs = [pair for i in indices for pair in _successor_pairs(seats[i])]
            for pair in old_pairs:
                counts[pair] -= 1
            best, best_cost = None, _added_cost(counts, old_pairs)
            for moved in _block_moves(seats, indices, moves, rotations_only, affordable):
                pairs = [pair for row in moved for pair in _successor_pairs(row)]
                cost = _added_cost(counts, pairs)
                if cost < best_cost:
                    best, best_cost = moved, cost
            if best is not None:
                for i, row in zip(indices, best, strict=True):
                    seats[i] = row
                improved = True
            for i in indices:
                for pair in _successor_pairs(seats[i]):
                    counts[pair] = counts.get(pair, 0) + 1
        if not improved:
            break
    return [dataclasses.replace(match, seats=row) if row != match.seats else match
            for match, row in zip(matches, seats, strict=True)]


def _block_moves(seats: list[tuple[int, ...]], indices: list[int],
                 moves: list[tuple[int, ...]], rotations_only: bool, every_order: bool
                 ) -> Iterator[list[tuple[int, ...]]]:
    """The seatings a block of matches could take instead. A block of rotations
    (``rotations_only``) becomes the rotations of another cyclic order of its group: any
    (``every_order``), else one with two members swapped or mirrored. Otherwise each
    position permutation in ``moves`` is applied to every seating alike."""
    size = len(seats[indices[0]])
    if rotations_only:
        base = seats[indices[0]]
        if every_order:
            others = cyclic_orders(base)
        else:
            others = [base[:1] + base[:0:-1]]  # the mirror image
            for i, j in itertools.combinations(range(size), 2):
                swapped = list(base)
                swapped[i], swapped[j] = swapped[j], swapped[i]
                others.append(tuple(swapped))
        for order in others:
            yield _rotations(order)[:len(indices)]
        return
    for move in moves:
        yield [tuple(seats[i][move[p]] for p in range(size)) for i in indices]


def _added_cost(counts: dict[tuple[int, int], int], pairs: list[tuple[int, int]]) -> int:
    """How much adding ``pairs`` raises the sum of squared successor counts."""
    extra: dict[tuple[int, int], int] = {}
    for pair in pairs:
        extra[pair] = extra.get(pair, 0) + 1
    return sum((counts.get(p, 0) + n) ** 2 - counts.get(p, 0) ** 2 for p, n in extra.items())


def _rounds_of_disjoint_groups(groups: list[tuple[int, ...]]) -> list[list[int]]:
    """The groups (by index) split into rounds where no entrant sits twice (first fit)."""
    rounds: list[tuple[list[int], set[int]]] = []
    for index, group in enumerate(groups):
        for members, seated in rounds:
            if seated.isdisjoint(group):
                members.append(index)
                seated.update(group)
                break
        else:
            rounds.append(([index], set(group)))
    return [members for members, _ in rounds]


def _table_schedule(entrants: int, table_size: int, matches_per_group: int,
                    duplicate_deals: bool) -> list[ScheduledMatch]:
    import numpy as np

    groups = list(itertools.combinations(range(entrants), table_size))
    rounds = _rounds_of_disjoint_groups(groups)
    total = len(groups) * matches_per_group
    balance = _Balance(np.zeros((entrants, table_size), dtype=np.int64),
                       np.zeros((entrants, entrants), dtype=np.int64))
    plans = [_GroupPlan(np.array(group, dtype=np.int64),
                        np.zeros((table_size, table_size), dtype=np.int64),
                        np.zeros((table_size, table_size), dtype=bool)) for group in groups]
    # A duplicate deal is played in the rotations of one cyclic order (the classic
    # duplicate format: the same neighbours for every hand), so blocks are rotations.
    seatings = (np.array(list(itertools.permutations(range(table_size))), dtype=np.int64)
                if math.factorial(table_size) <= EXHAUSTIVE_SEATINGS and not duplicate_deals
                else None)
    full_blocks = matches_per_group - matches_per_group % table_size
    matches: list[ScheduledMatch] = []
    for cycle in range(matches_per_group):
        for round_in_cycle, members in enumerate(rounds):
            round_number = cycle * len(rounds) + round_in_cycle + 1
            for group_index in members:
                seats = _next_seats(plans[group_index], balance, cycle < full_blocks,
                                   seatings)
                balance.add(seats)
                identifier = match_id(len(matches), total)
                if duplicate_deals:
                    deal = cycle // table_size
                    chance = f"deal/{group_index}/{deal}"
                else:
                    deal, chance = cycle, identifier
                matches.append(ScheduledMatch(identifier, seats, chance, group_index, deal,
                                              round_number))
    return _improve_blocks(matches, table_size, rotations_only=duplicate_deals)
