"""The ladder's matchmaker, pure: no I/O, no clock; chance only from the ``random.Random``
passed in (the seat order).

The rule: seat first an entrant still in its placement matches (fewest played first),
then one that has waited more than ``OVERDUE_FACTOR`` times the matches it takes every
entrant to play once (longest wait first); otherwise play the pair whose match teaches
most about the ladder's order: the expected fall (TrueSkill predicting the result) in the
entropy of who is the stronger and, weighted ``SHOWN_WEIGHT``, of who is shown above (by
mu - 3 sigma), over the pairs its two seats form with their ``WINDOW`` nearest in mu on
each side. A certain result or a settled order teaches nothing, so close, uncertain
entrants play most; the overdue rule keeps every entrant playing, and its sigma in step
with the others'. A pair holding more than ``REPEAT_SHARE`` of either entrant's matches
plus ``REPEAT_ALLOWANCE`` is not seated while a table without one can be made.

The cap is a share of each entrant's own matches, not a multiple of the median pair's:
most pairs of a ladder are far apart and seldom worth playing, so a median stays low and
pushes close pairs off towards certain results. A placing or overdue entrant meets the
opponent that teaches most; a table of three or more seats is built seat by seat, each
seat the free entrant whose pairs with those seated teach most. An author's entrants share
a table only under ``same_author_matches``, and an author has at most
``max_running_per_author`` tables running.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from arena.rating.trueskill_ratings import ENVIRONMENT, draw_margin, rate_two

OVERDUE_FACTOR = 3.0
"""An entrant waiting for more than this many times entrants / seats matches (the gap
between its matches were every entrant to play as often) is seated before any other:
every entrant plays regularly, the hopeless ones too (whose results teach little), and its
rating's uncertainty keeps up with the others', which the ladder's mu - 3 sigma ranks by."""
REPEAT_SHARE = 0.5
"""No pair holds more than half of either entrant's matches ..."""
REPEAT_ALLOWANCE = 5
"""... plus this many: a new entrant's first matches are not held back."""
WINDOW = 4
"""The neighbours (in mu, on each side) whose order an entrant's match is scored against,
and among whom its opponents are sought: further apart the order is all but settled (8
finds the order no sooner in ``benchmarks/matchmaking.py`` and takes 3.7 times as long to
choose two tables among 200 entrants: 212 ms rather than 58)."""

SHOWN_WEIGHT = 0.25
"""The share of a pair's uncertainty that is of which the ladder shows above (by mu -
3 sigma), beside which is the stronger: the ladder must find the order it shows, and an
entrant whose sigma lags the others' is shown below its place. With a quarter the order of
evenly spaced bots is found in 211 matches (90% of runs, ``benchmarks/matchmaking.py
--outlier 0``) rather than 256 with none; with three quarters the rule chases sigmas, and
some runs settle late (505)."""

_MARGIN = draw_margin(ENVIRONMENT)
_SETTLED = 6.0
"""Standard deviations apart beyond which an order's entropy (under 1e-7 nats) counts as 0."""
_BETA_SQUARED = ENVIRONMENT.beta ** 2


@dataclass(frozen=True)
class Entrant:
    """A version on the ladder as the matchmaker sees it."""

    id: int
    author_id: int
    mu: float
    sigma: float
    played: int
    """Its matches, rated or running."""
    waited: int
    """Ladder matches made since its last one (every match made, for one that never played)."""


@dataclass(frozen=True)
class Constraints:
    """What a table must respect (the league file's ``[ladder]``)."""

    table_size: int = 2
    placement_matches: int = 4
    same_author_matches: bool = False
    max_running_per_author: int = 2


PairCounts = Mapping[tuple[int, int], int]
"""Matches played (finished or running) by each pair of entrant ids, the lower id first."""


def pair(a: int, b: int) -> tuple[int, int]:
    """The key of the pair ``a``, ``b`` in ``PairCounts``."""
    return (a, b) if a < b else (b, a)


def win_probability(first: Entrant, second: Entrant) -> float:
    """TrueSkill's prediction that ``first`` beats ``second`` (ties left out)."""
    spread = math.sqrt(2 * _BETA_SQUARED + first.sigma ** 2 + second.sigma ** 2)
    return 0.5 * (1 + math.erf((first.mu - second.mu) / (spread * math.sqrt(2))))


def _entropy(difference: float, spread: float) -> float:
    """The entropy, in nats, of the sign of a normal variable of this mean and spread."""
    if abs(difference) > _SETTLED * spread:
        return 0.0
    p = 0.5 * (1 + math.erf(difference / (spread * math.sqrt(2))))
    if p <= 0 or p >= 1:
        return 0.0
    return -(p * math.log(p) + (1 - p) * math.log(1 - p))


def _order_uncertainty(first: tuple[float, float], second: tuple[float, float]) -> float:
    """How uncertain the order of two (mu, sigma) ratings is: of which is the stronger,
    and (weighted ``SHOWN_WEIGHT``) of which the ladder shows above."""
    spread = math.sqrt(first[1] ** 2 + second[1] ** 2)
    stronger = _entropy(first[0] - second[0], spread)
    shown = _entropy(first[0] - 3 * first[1] - second[0] + 3 * second[1], spread)
    return (1 - SHOWN_WEIGHT) * stronger + SHOWN_WEIGHT * shown


def order_gain(first: Entrant, second: Entrant, neighbours: Sequence[Entrant],
               known: dict[tuple[int, int], float] | None = None) -> float:
    """The expected fall of the order's uncertainty (nats) that a match of ``first``
    against ``second`` brings, over their pairs with each other and with ``neighbours``;
    ``known`` keeps the uncertainties of pairs as they are, by ids, for the next call."""
    known = {} if known is None else known
    others = [e for e in neighbours if e.id not in (first.id, second.id)]

    def now(x: Entrant, y: Entrant) -> float:
        key = pair(x.id, y.id)
        if key not in known:
            known[key] = _order_uncertainty((x.mu, x.sigma), (y.mu, y.sigma))
        return known[key]

    def after(a: tuple[float, float], b: tuple[float, float]) -> float:
        return _order_uncertainty(a, b) + sum(
            _order_uncertainty(a, (k.mu, k.sigma)) + _order_uncertainty(b, (k.mu, k.sigma))
            for k in others)

    before = now(first, second) + sum(now(first, k) + now(second, k) for k in others)
    a, b = (first.mu, first.sigma), (second.mu, second.sigma)
    p = win_probability(first, second)
    won = rate_two(ENVIRONMENT, _MARGIN, a, b, 1, 2)
    lost = rate_two(ENVIRONMENT, _MARGIN, a, b, 2, 1)
    return before - p * after(*won) - (1 - p) * after(*lost)


class _Field:
    """The ladder as one call sees it: the free entrants, everyone's neighbourhood in mu
    (seating moves an entrant from free to playing, never out of the ladder), and the
    gains and uncertainties computed so far (the ratings do not change within a call)."""

    def __init__(self, free: Sequence[Entrant], playing: Sequence[Entrant],
                 counts: PairCounts, constraints: Constraints,
                 author_running: Mapping[int, int]) -> None:
        self.constraints = constraints
        self.counts = dict(counts)
        self.running = dict(author_running)
        self.free = list(free)
        ladder = sorted([*free, *playing], key=lambda e: (e.mu, e.id))
        self.neighbours: dict[int, list[Entrant]] = {}
        for index, entrant in enumerate(ladder):
            self.neighbours[entrant.id] = ladder[max(index - WINDOW, 0):index + WINDOW + 1]
        self.entrants = len(ladder)
        self.gains: dict[tuple[int, int], float] = {}
        self.uncertainties: dict[tuple[int, int], float] = {}

    def gain(self, a: Entrant, b: Entrant) -> float:
        key = pair(a.id, b.id)
        if key not in self.gains:
            near = {e.id: e for e in (*self.neighbours[a.id], *self.neighbours[b.id])}
            self.gains[key] = order_gain(a, b, list(near.values()), self.uncertainties)
        return self.gains[key]

    def capped(self, a: Entrant, b: Entrant) -> bool:
        count = self.counts.get(pair(a.id, b.id), 0)
        return count >= REPEAT_SHARE * min(a.played, b.played) + REPEAT_ALLOWANCE

    def fits(self, candidate: Entrant, seated: Sequence[Entrant], cap: bool) -> bool:
        if any(candidate.id == e.id for e in seated):
            return False
        if not self.constraints.same_author_matches and any(
                candidate.author_id == e.author_id for e in seated):
            return False
        return not (cap and any(self.capped(candidate, e) for e in seated))

    def complete(self, seated: list[Entrant], cap: bool) -> list[Entrant] | None:
        """``seated`` with seats added, each the fitting free entrant that teaches most
        with those seated (None: no fitting entrant is left)."""
        seated = list(seated)
        while len(seated) < self.constraints.table_size:
            near = {e.id for s in seated for e in self.neighbours[s.id]}
            fitting = [e for e in self.free if self.fits(e, seated, cap)]
            if not fitting:
                return None
            # Neighbours first; beyond them only when none fits.
            pool = [e for e in fitting if e.id in near] or fitting
            seated.append(max(pool, key=lambda e: (sum(self.gain(e, s) for s in seated),
                                                   -e.id)))
        return seated

    def first_seats(self) -> Iterator[list[Entrant]]:
        """The tables' beginnings, in the rule's order (the module's docstring), then every
        free entrant (a table beyond the neighbourhoods, when none is left within)."""
        placing = [e for e in self.free if e.played < self.constraints.placement_matches]
        yield from ([e] for e in sorted(placing, key=lambda e: (e.played, e.id)))
        overdue = OVERDUE_FACTOR * self.entrants / self.constraints.table_size
        late = [e for e in self.free if e.waited > overdue
                and e.played >= self.constraints.placement_matches]
        yield from ([e] for e in sorted(late, key=lambda e: (-e.waited, e.id)))
        free = {e.id for e in self.free}
        pairs = {pair(a.id, b.id): (a, b) for a in self.free for b in self.neighbours[a.id]
                 if a.id != b.id and b.id in free}
        for a, b in sorted(pairs.values(), key=lambda p: (-self.gain(*p), p[0].id, p[1].id)):
            yield [a, b]
        yield from ([e] for e in sorted(self.free, key=lambda e: (-e.waited, e.id)))

    def table(self) -> list[Entrant] | None:
        """The next table by the rule, among the free entrants whose authors are under
        their limit; None when none can be made."""
        self.free = [e for e in self.free if self.running.get(e.author_id, 0)
                     < self.constraints.max_running_per_author]
        for cap in (True, False):
            for start in self.first_seats():
                if all(self.fits(e, start[:i], cap) for i, e in enumerate(start)):
                    table = self.complete(start, cap)
                    if table is not None:
                        return table
        return None

    def seat(self, table: Sequence[Entrant]) -> None:
        """``table`` is playing: its entrants leave the free, its pairs count one more
        match, its authors one more table running."""
        ids = {e.id for e in table}
        self.free = [e for e in self.free if e.id not in ids]
        for a, b in itertools.combinations(sorted(ids), 2):
            self.counts[(a, b)] = self.counts.get((a, b), 0) + 1
        for author in {e.author_id for e in table}:
            self.running[author] = self.running.get(author, 0) + 1


def pick_tables(free: Sequence[Entrant], counts: PairCounts, constraints: Constraints,
                author_running: Mapping[int, int], slots: int, rng: random.Random,
                playing: Sequence[Entrant] = ()) -> list[tuple[int, ...]]:
    """Up to ``slots`` tables (entrant ids by seat, in an order drawn from ``rng``) among
    the ``free`` entrants, one after another by the module's rule: an entrant seated at
    one is playing for the next. ``counts``: the matches played by each pair;
    ``author_running``: each author's running tables; ``playing``: the entrants in
    running matches, counted in the order's uncertainty, never seated."""
    field = _Field(free, playing, counts, constraints, author_running)
    tables: list[tuple[int, ...]] = []
    while len(tables) < slots and len(field.free) >= constraints.table_size:
        table = field.table()
        if table is None:
            break
        field.seat(table)
        ids = [e.id for e in table]
        rng.shuffle(ids)
        tables.append(tuple(ids))
    return tables


def next_table(free: Sequence[Entrant], counts: PairCounts, constraints: Constraints,
               author_running: Mapping[int, int], rng: random.Random,
               playing: Sequence[Entrant] = ()) -> tuple[int, ...] | None:
    """The next table by the module's rule (``pick_tables`` for one slot); None when none
    can be made."""
    tables = pick_tables(free, counts, constraints, author_running, 1, rng, playing)
    return tables[0] if tables else None
