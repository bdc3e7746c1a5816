"""Official standings: an order-independent Bradley-Terry fit over all of a season's
results (``arena.rating.bradley_terry``), with rank intervals from a bootstrap over its
matches.

Uncertainty: the matches are resampled with replacement (``RESAMPLES`` times, with a fixed
seed: the standings are a pure function of the results); the matches of one duplicate deal
are resampled together, as they share their cards. The entrants are indexed by the full
fit's order, so the resamples drawn do not depend on how the entrants are numbered;
entrants the fit ties exactly are ordered by name (``names``), so neither do their order
and their figures depend on the season file's listing order, and they share a position.

Each entrant's rank interval is the shortest run of ranks that holds its rank in at least
``MASS`` (95%) of the resamples (``rank_intervals``). Equal tails (the 2.5th to the 97.5th
percentile) spend 2.5% on a side where little can go wrong: a leader whose rank is 1 in
96% of the resamples is shown as "1", not "1-2". Over simulated seasons of bots of
random strengths the intervals hold the true rank about 95% of the time; where a season's
bots are far apart compared with its noise any interval that holds the truth 95% of the
time holds it nearly always, as the order itself is then nearly always right
(``python -m benchmarks.standings`` prints both cases). Entrants whose intervals overlap,
directly or through a chain of others, share a rank ("1-3"): the data cannot put a line
between them (``sharing_groups``). Two entrants who met no one else are judged by a sign
test over their units instead, which resampling cannot replace: every resample of one deal
is that deal.

"P > next" is the share of resamples in which an entrant's strength is above the next
one's: the same statistic the table is sorted by, and it keeps the correlation between
the two estimates (both come from the same resampled season).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from arena.rating.bradley_terry import (
    ResampleFit,
    UnitWins,
    comparison_units,
    fit_strengths,
    rank_order,
    rank_spans,
    shares_ahead,
)
from arena.rating.outcome import Outcome

RESAMPLES = 200
"""The same at every size: a 95% run of ranks needs about that many resamples."""
SEED = 20260518
MASS = 0.95
"""Share of the resamples whose rank an entrant's rank interval holds."""
SIGN_TEST_LEVEL = 0.025
"""Neighbours in the standings are told apart only if the units in which they met would
be this unlikely to favour the upper one as often were they equal (one-sided). Six
duplicate deals won out of six pass (1/64); five do not (1/32)."""


@dataclass(frozen=True)
class OfficialRow:
    entrant_id: int
    strength: float
    """Bradley-Terry log-strength, the rated entrants' mean at 0: a difference d means the
    stronger finishes ahead of the weaker e^d times as often as behind."""
    position: int
    """1-based place in the order of ``strength``; entrants the fit ties exactly share the
    best of their places (and are listed by name)."""
    interval: tuple[int, int]
    """The shortest run of ranks holding its rank in ``MASS`` of the resamples (95%)."""
    shared: tuple[int, int]
    """The rows its group spans: rows whose intervals overlap, directly or through others,
    share a rank."""
    above_next: float | None
    """Share of resamples in which its strength is above the next row's (None: last)."""
    matches: int

    @property
    def rank_label(self) -> str:
        first, last = self.shared
        return str(first) if first == last else f"{first}\N{EN DASH}{last}"

    @property
    def interval_label(self) -> str:
        low, high = self.interval
        return str(low) if low == high else f"{low}\N{EN DASH}{high}"


@dataclass(frozen=True)
class OfficialStandings:
    rows: tuple[OfficialRow, ...]
    """Rated entrants (at least one match), best first."""
    unrated: tuple[int, ...]
    """Entrants with no recorded match (build failed, unreadable, not yet played)."""
    groups: tuple[tuple[int, ...], ...]
    """Entrant ids of each group of two or more that the data cannot separate, in order."""
    resamples: int
    units: int
    """How many resampling units (matches, or duplicate deals) the season had."""

    def row(self, entrant_id: int) -> OfficialRow | None:
        return next((r for r in self.rows if r.entrant_id == entrant_id), None)


def _pair_alone(per_unit: UnitWins, total: NDArray[np.float64], upper: int, lower: int
                ) -> tuple[int, int] | None:
    """For two entrants whose results are all against each other (a season of two, say):
    how many units each won (its net result in the unit); None when either has another
    opponent. Resampling cannot doubt what every unit says: after one duplicate deal that
    one bot won, every resample holds that deal only and puts it ahead with certainty;
    such a pair is judged by its units instead (``_separated_alone``). With
    other opponents, the rest of the season varies across the resamples."""
    others = np.ones(len(total), dtype=bool)
    others[[upper, lower]] = False
    if total[[upper, lower]][:, others].any() or total[others][:, [upper, lower]].any():
        return None
    size = per_unit.entrants
    ahead = per_unit.cells == upper * size + lower
    behind = per_unit.cells == lower * size + upper
    net = (np.bincount(per_unit.rows[ahead], per_unit.counts[ahead], per_unit.units)
           - np.bincount(per_unit.rows[behind], per_unit.counts[behind], per_unit.units))
    return int((net > 0).sum()), int((net < 0).sum())


def _separated_alone(won: int, lost: int) -> bool:
    """The sign test: ``won`` units of ``won + lost`` (split ones left out) would be this
    many or more for equal entrants less often than ``SIGN_TEST_LEVEL``."""
    tail: int = sum(math.comb(won + lost, k) for k in range(won, won + lost + 1))
    return tail / (1 << (won + lost)) < SIGN_TEST_LEVEL


def _above_alone(won: int, lost: int) -> float:
    """The chance that the upper one wins more than half of such units, every share
    equally likely beforehand (a uniform prior): 0.75 after one unit won, 63/64 after
    five."""
    tosses = won + lost + 1
    below: int = sum(math.comb(tosses, k) for k in range(won + 1))
    return below / (1 << tosses)


def sharing_groups(intervals: Sequence[tuple[int, int]]) -> list[list[int]]:
    """The rows (indices, best first) that share a rank: the connected overlaps. Two rows
    whose intervals overlap are in one group, as is every row listed between them, so
    a group is a run of rows and no interval overlaps one outside its group (the page
    says that overlapping intervals share a rank, and so it is true). Each row's own
    interval is shown beside the shared rank, which tells how far the doubt reaches."""
    size = len(intervals)
    lows = np.array([low for low, _ in intervals], dtype=np.int64)
    highs = np.array([high for _, high in intervals], dtype=np.int64)
    groups: list[list[int]] = []
    start = 0
    while start < size:
        end = start
        k = start
        while k <= end:  # the furthest row any member's interval overlaps, until fixed
            overlapping = np.flatnonzero((lows <= highs[k]) & (lows[k] <= highs))
            end = max(end, int(overlapping.max()))
            k += 1
        groups.append(list(range(start, end + 1)))
        start = end + 1
    return groups


def rank_intervals(best: NDArray[np.int64], worst: NDArray[np.int64],
                   places: Sequence[int]) -> list[tuple[int, int]]:
    """Each entrant's rank interval from the resamples' ranks (``best[b, i]`` to
    ``worst[b, i]``: its rank in resample ``b``, a span where the resample ties it with
    others): the shortest run of ranks that wholly holds the span in at least ``MASS`` of
    the resamples; among equally short runs, the one that holds the most, then the best.
    It always reaches the entrant's own place (``places[i]``)."""
    resamples, size = best.shape
    need = max(1, math.ceil(MASS * resamples - 1e-9))
    intervals = []
    for i in range(size):
        lows, highs = best[:, i], worst[:, i]
        chosen: tuple[int, int, int] | None = None  # (length, -held, low)
        for low in np.unique(lows).tolist():
            held = highs[lows >= low]
            if len(held) < need:
                break
            high = int(np.partition(held, need - 1)[need - 1])
            key = (high - low, -int((held <= high).sum()), low)
            if chosen is None or key < chosen:
                chosen = key
        assert chosen is not None  # the lowest start holds every resample
        low, high = chosen[2], chosen[2] + chosen[0]
        intervals.append((min(low, places[i]), max(high, places[i])))
    return intervals


def official_standings(outcomes: Sequence[Outcome], entrant_ids: Sequence[int],
                       resamples: int = RESAMPLES, seed: int = SEED,
                       names: Mapping[int, str] | None = None) -> OfficialStandings:
    """The official standings of a season: a pure function of the set of results and,
    for entrants the fit ties exactly, of their ``names`` (listed by name, then id)."""
    played: dict[int, set[str]] = defaultdict(set)
    for outcome in outcomes:
        played[outcome.entrant_id].add(outcome.match_id)
    known = sorted(set(entrant_ids) | set(played))
    rated = sorted((e for e in known if played.get(e)),
                   key=lambda e: ((names or {}).get(e, ""), e))
    unrated = tuple(e for e in known if not played.get(e))
    if not rated:
        return OfficialStandings((), unrated, (), resamples, 0)
    # The matrices are small (entrants squared): BLAS threads only fight over the cores
    # (measured: 3 to 8 times slower on a busy 2-core machine than one thread).
    with threadpool_limits(limits=1):
        return _fit_and_bootstrap(outcomes, played, rated, unrated, resamples, seed)


def _fit_and_bootstrap(outcomes: Sequence[Outcome], played: dict[int, set[str]],
                       rated: list[int], unrated: tuple[int, ...], resamples: int,
                       seed: int) -> OfficialStandings:
    units, per_unit = comparison_units(outcomes, rated)
    size = len(rated)
    strengths = fit_strengths(per_unit.wins())
    # The entrants indexed by the fit's order, not by their ids: the units' order (so the
    # resamples drawn) and the resamples' ties then follow from the results alone, and
    # numbering the entrants otherwise (another order in the season file, new versions)
    # changes no figure. Exactly tied entrants stay in the order given: by name.
    fitted = rank_order(strengths).tolist()
    rated = [rated[i] for i in fitted]
    strengths = strengths[fitted]
    units, per_unit = comparison_units(outcomes, rated)
    total = per_unit.wins()
    ranked = rank_order(strengths)  # 0, 1, 2...: the same order, now the indices'
    order = ranked.tolist()
    position = {i: p for p, i in enumerate(order, start=1)}  # its row
    tied_best, _ = rank_spans(strengths)  # the position shown: shared by exact ties
    rng = np.random.default_rng(seed)
    # Each entrant's best and worst rank in each resample: apart only when it is tied (a
    # resample that cannot separate two entrants counts for both orders).
    best = np.empty((resamples, size), dtype=np.int64)
    worst = np.empty((resamples, size), dtype=np.int64)
    above = np.zeros(size)
    resample_fit = ResampleFit(total, strengths)
    for b in range(resamples):
        weights = np.bincount(rng.integers(0, len(units), len(units)), minlength=len(units))
        wins = per_unit.wins(weights)
        sample, _ = resample_fit(wins)
        best[b], worst[b] = rank_spans(sample)
        above[ranked[:-1]] += shares_ahead(sample[ranked[:-1]] - sample[ranked[1:]])
    intervals = dict(enumerate(rank_intervals(best, worst, [position[i] for i in range(size)])))
    for upper, lower in itertools.pairwise(order):
        alone = _pair_alone(per_unit, total, upper, lower)
        if alone is None:
            continue
        above[upper] = _above_alone(*alone) * resamples
        if not _separated_alone(*alone):
            # Too few units to tell them apart, whatever the resamples say: each interval
            # reaches the other's place, so they share a rank.
            intervals[upper] = (intervals[upper][0], max(intervals[upper][1], position[lower]))
            intervals[lower] = (min(intervals[lower][0], position[upper]), intervals[lower][1])
    groups = [[order[k] for k in run] for run in sharing_groups([intervals[i] for i in order])]
    shared = {}
    for group in groups:
        first, last = position[group[0]], position[group[-1]]
        for i in group:
            shared[i] = (first, last)
    rows = tuple(
        OfficialRow(rated[i], float(strengths[i]), int(tied_best[i]), intervals[i], shared[i],
                    None if position[i] == size else float(above[i] / resamples),
                    len(played[rated[i]]))
        for i in order)
    return OfficialStandings(
        rows, unrated,
        tuple(tuple(rated[i] for i in group) for group in groups if len(group) > 1),
        resamples, len(units))
