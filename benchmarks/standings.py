"""Standings a league can trust: over simulated seasons of known strengths, how often the
true order is recovered by the live TrueSkill and by the official standings, side by side,
then the official rank intervals against equal-tailed ones, then the seating balance of
duplicate deals. In process, no bots.

    python -m benchmarks.standings [--seasons 50] [--scale]

* old: the schedule before issue 18 (every group's matches back to back, seats only
  rotated, no duplicate deals) and the live TrueSkill in schedule order, sorted by
  mu - 3 sigma (what the site showed);
* new: the balanced, interleaved schedule (duplicate deals at two seats, the default)
  and the official standings (Bradley-Terry over all results, bootstrap rank intervals).

The model of a match: a seat's performance is its bot's skill, plus the luck of the cards
dealt to that position (sd 0.8; shared by the matches of a duplicate deal, whose bots
rotate through the same hands), plus the rest of the play (sd 0.6); at 3+ seats the bot
sitting directly after another loses 0.5 x that one's skill (a strong player before you
hurts: the issue measured 18% vs 29% wins for greedy right after or two seats after a
strong bot). Places follow performance, rounded to 0.25 at 3+ seats so ties happen.

Figures: "order" is the share of seasons whose standings put every bot in its true place
(bots of equal skill in any order among themselves); "tau" the mean Kendall tau with the
true order; "first>last" (equal bots only) how often the first-listed bot finishes above
the last-listed (fair: 50%); "coverage" the share of bots whose true rank (its range, for
equal bots) meets its 95% rank interval; "shared" the share of bots shown in a shared
rank. Tied bots are listed by name; each season names its bots at random, as a season
file's listing order has nothing to do with its names.

Intervals: the official ones (the shortest run of ranks holding 95% of the resamples,
groups of connected overlaps) beside equal tails (the 2.5th percentile of the best rank to
the 97.5th of the worst, groups in which every two intervals overlap), from the same
resamples of the same seasons: coverage, mean width, the share of seasons whose neighbours
are all separated, and the matches a pair needed until that share reached 90%. Seating:
most / least often any bot sat directly after any other, with duplicate deals, for a
cyclic order per group built greedily from its first member (the same for every deal)
and for the schedule's.

``--scale`` also times the standings at 10,000 results (20 bots) and 50,000 results
(200 bots).
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.league.schedule import ScheduledMatch, schedule
from arena.rating import Outcome, official_standings, rate_season
from arena.rules.scoring import places

CARD_LUCK = 0.8
PLAY_NOISE = 0.6
SEAT_AFTER = 0.5


@dataclass(frozen=True)
class Scenario:
    name: str
    skills: tuple[float, ...]
    table_size: int
    per_group: int


def spaced(count: int, win_rate: float) -> tuple[float, ...]:
    """Skills whose neighbours beat each other ``win_rate`` of two-player matches."""
    spread = math.sqrt(2 * (CARD_LUCK ** 2 + PLAY_NOISE ** 2))
    step = spread * _probit(win_rate)
    return tuple(step * (count - 1 - i) for i in range(count))


def _probit(p: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


SCENARIOS = (
    Scenario("8 bots, 2 seats, 10 a pair, neighbours 60/40", spaced(8, 0.6), 2, 10),
    Scenario("6 bots, 4 seats, 8 a group, neighbours 60/40", spaced(6, 0.6), 4, 8),
    Scenario("6 equal bots, 2 seats, 10 a pair", (0.0,) * 6, 2, 10),
    Scenario("6 equal bots, 4 seats, 8 a group", (0.0,) * 6, 4, 8),
    Scenario("3 equal + 2 equal + 1, 2 seats, 10 a pair (the sample season's shape)",
             (1.0, 1.0, 1.0, 0.4, 0.4, -2.0), 2, 10),
)


def old_schedule(entrants: int, table_size: int, per_group: int) -> list[ScheduledMatch]:
    """The schedule before issue 18: groups in listing order, each group's matches back to
    back, its seats rotated (so its cyclic order never changes)."""
    matches: list[ScheduledMatch] = []
    for group_index, group in enumerate(itertools.combinations(range(entrants), table_size)):
        for repeat in range(per_group):
            shift = repeat % table_size
            match_id = f"m{len(matches) + 1:06d}"
            matches.append(ScheduledMatch(match_id, group[shift:] + group[:shift], match_id,
                                          group_index, repeat))
    return matches


def play(matches: Sequence[ScheduledMatch], skills: Sequence[float], rng: random.Random,
         duplicate: bool) -> list[Outcome]:
    luck: dict[tuple[str, int], float] = {}
    outcomes = []
    for match in matches:
        seats = match.seats
        performance = []
        for position, entrant in enumerate(seats):
            key = (match.chance, position)
            if key not in luck:
                luck[key] = rng.gauss(0, CARD_LUCK)
            value = skills[entrant] + luck[key] + rng.gauss(0, PLAY_NOISE)
            if len(seats) > 2:
                value -= SEAT_AFTER * skills[seats[position - 1]]
                value = round(value * 4) / 4
            performance.append(value)
        order = sorted(set(performance), reverse=True)
        final = places([len(order) - order.index(p) for p in performance])
        outcomes += [Outcome(match.match_id, entrant, seat, final[seat],
                             deal=match.chance if duplicate and match.chance != match.match_id
                             else "")
                     for seat, entrant in enumerate(seats)]
    return outcomes


def true_ranks(skills: Sequence[float]) -> list[tuple[int, int]]:
    """Each bot's true rank, as a range when others have the same skill."""
    ranks = []
    for skill in skills:
        better = sum(s > skill for s in skills)
        same = sum(s == skill for s in skills)
        ranks.append((better + 1, better + same))
    return ranks


def kendall_tau(order: Sequence[int], skills: Sequence[float]) -> float:
    """Kendall tau-b of the shown order against the skills (ties in skill: no pair)."""
    concordant = discordant = 0
    for a, b in itertools.combinations(range(len(order)), 2):
        upper, lower = skills[order[a]], skills[order[b]]
        if upper > lower:
            concordant += 1
        elif upper < lower:
            discordant += 1
    pairs = concordant + discordant
    return (concordant - discordant) / pairs if pairs else float("nan")


def in_true_order(order: Sequence[int], skills: Sequence[float]) -> bool:
    shown = [skills[e] for e in order]
    return shown == sorted(shown, reverse=True)


@dataclass
class Tally:
    seasons: int = 0
    listed: int = 0
    """Seasons whose first- and last-listed bots have equal skill."""
    ordered: int = 0
    tau: float = 0.0
    first_above_last: int = 0
    covered: int = 0
    bots: int = 0
    shared: int = 0
    width: float = 0.0


def run(scenario: Scenario, seasons: int, resamples: int) -> tuple[Tally, Tally, float]:
    count = len(scenario.skills)
    duplicate = scenario.table_size == 2
    new_matches = schedule(count, scenario.table_size, scenario.per_group, duplicate)
    old_matches = old_schedule(count, scenario.table_size, scenario.per_group)
    old, new = Tally(), Tally()
    seconds = 0.0
    for season in range(seasons):
        # Who is listed where is chance: the skills go to the entrants in a random order
        # (but the first and last listed keep equal skills when all are equal).
        skills = list(scenario.skills)
        random.Random(f"listing {season}").shuffle(skills)
        truth = true_ranks(skills)
        rng = random.Random(f"old {season}")
        outcomes = play(old_matches, skills, rng, duplicate=False)
        board = rate_season(outcomes, range(count))
        order = [s.entrant_id for s in board.standings]
        _tally(old, order, skills)

        rng = random.Random(f"new {season}")
        outcomes = play(new_matches, skills, rng, duplicate)
        started = time.perf_counter()
        names = {e: f"{random.Random(f'name {season} {e}').getrandbits(32):08x}"
                 for e in range(count)}
        official = official_standings(outcomes, range(count), resamples, names=names)
        seconds += time.perf_counter() - started
        order = [r.entrant_id for r in official.rows]
        _tally(new, order, skills)
        for row in official.rows:
            low, high = row.interval
            true_low, true_high = truth[row.entrant_id]
            new.covered += low <= true_high and true_low <= high
            new.shared += row.shared[0] != row.shared[1]
            new.width += high - low + 1
        new.bots += count
    return old, new, seconds / seasons


def _tally(tally: Tally, order: list[int], skills: Sequence[float]) -> None:
    tally.seasons += 1
    tally.ordered += in_true_order(order, skills)
    tau = kendall_tau(order, skills)
    tally.tau += 0.0 if math.isnan(tau) else tau
    first, last = 0, len(skills) - 1
    if skills[first] == skills[last]:
        tally.listed += 1
        tally.first_above_last += order.index(first) < order.index(last)


def scale() -> None:
    print("\nstandings cost (official fit + 200 bootstrap resamples; live TrueSkill apart):")
    rng = random.Random(1)
    for count, results in ((20, 10_000), (200, 50_000)):
        skills = [rng.gauss(0, 1) for _ in range(count)]
        outcomes = []
        for index in range(results):
            a, b = rng.sample(range(count), 2)
            ahead = skills[a] + rng.gauss(0, 1) > skills[b] + rng.gauss(0, 1)
            match_id = f"m{index:06d}"
            outcomes += [Outcome(match_id, a, 0, 1 if ahead else 2),
                         Outcome(match_id, b, 1, 2 if ahead else 1)]
        started = time.perf_counter()
        official_standings(outcomes, range(count))
        fit = time.perf_counter() - started
        started = time.perf_counter()
        rate_season(outcomes, range(count))
        live = time.perf_counter() - started
        print(f"  {results:>6,} results, {count:>3} bots: official {fit:5.1f} s   "
              f"live TrueSkill {live:5.1f} s")
        _resample_sums(outcomes, count)


def _resample_sums(outcomes: list[Outcome], count: int, resamples: int = 200) -> None:
    """The bootstrap's win matrices, side by side: ``UnitWins.wins`` (np.bincount) and the
    scipy.sparse product it replaced, on the same units and weights (and equal)."""
    import numpy as np
    from scipy import sparse

    from arena.rating.bradley_terry import comparison_units

    units, per_unit = comparison_units(outcomes, range(count))
    matrix = sparse.csr_matrix((per_unit.counts, (per_unit.rows, per_unit.cells)),
                               shape=(per_unit.units, count * count)).T.tocsr()
    rng = np.random.default_rng(1)
    draws = [np.bincount(rng.integers(0, len(units), len(units)), minlength=len(units))
             for _ in range(resamples)]
    started = time.perf_counter()
    ours = [per_unit.wins(weights) for weights in draws]
    summed = time.perf_counter() - started
    started = time.perf_counter()
    theirs = [np.asarray(matrix @ weights).reshape(count, count) for weights in draws]
    product = time.perf_counter() - started
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))
    print(f"    {resamples} resamples' win matrices: np.bincount {summed:.3f} s, "
          f"scipy.sparse product {product:.3f} s (ratio {summed / product:.2f}; equal)")


def bootstrap_ranks(outcomes: list[Outcome], count: int, resamples: int = 200
                    ) -> tuple[list[int], Any, Any]:
    """The official standings' resamples (the same fit, indexing and draws): the rated
    entrants best first, and each one's best and worst rank in each resample."""
    import numpy as np

    from arena.rating.bradley_terry import (
        ResampleFit,
        comparison_units,
        fit_strengths,
        rank_order,
        rank_spans,
    )
    from arena.rating.official import SEED

    rated = list(range(count))
    _, per_unit = comparison_units(outcomes, rated)
    strengths = fit_strengths(per_unit.wins())
    fitted = rank_order(strengths).tolist()
    rated, strengths = [rated[i] for i in fitted], strengths[fitted]
    units, per_unit = comparison_units(outcomes, rated)
    fit = ResampleFit(per_unit.wins(), strengths)
    rng = np.random.default_rng(SEED)
    best = np.empty((resamples, count), dtype=np.int64)
    worst = np.empty((resamples, count), dtype=np.int64)
    for b in range(resamples):
        weights = np.bincount(rng.integers(0, len(units), len(units)), minlength=len(units))
        sample, _ = fit(per_unit.wins(weights))
        best[b], worst[b] = rank_spans(sample)
    return rated, best, worst


def equal_tails(best: Any, worst: Any) -> list[tuple[int, int]]:
    import numpy as np

    low = np.percentile(best, 2.5, axis=0, method="lower")
    high = np.percentile(worst, 97.5, axis=0, method="higher")
    return [(int(a), int(b)) for a, b in zip(low, high, strict=True)]


def all_overlap_groups(intervals: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Runs of rows in which every two intervals overlap (the rule beside the official)."""
    groups: list[list[int]] = []
    common = (0, 0)
    for index, (low, high) in enumerate(intervals):
        if groups and low <= common[1] and high >= common[0]:
            groups[-1].append(index)
            common = (max(common[0], low), min(common[1], high))
        else:
            groups.append([index])
            common = (low, high)
    return groups


@dataclass
class IntervalTally:
    covered: int = 0
    bots: int = 0
    width: int = 0
    separated: int = 0
    seasons: int = 0


def interval_season(skills: Sequence[float], per_pair: int, seed: str,
                    tallies: dict[str, IntervalTally]) -> None:
    from arena.rating.official import rank_intervals, sharing_groups

    count = len(skills)
    outcomes = play(schedule(count, 2, per_pair, True), skills, random.Random(seed), True)
    rated, best, worst = bootstrap_ranks(outcomes, count)
    truth = true_ranks(skills)
    methods = {"official": (rank_intervals(best, worst, range(1, count + 1)), sharing_groups),
               "equal tails": (equal_tails(best, worst), all_overlap_groups)}
    for name, (intervals, grouping) in methods.items():
        tally = tallies[name]
        for entrant, (low, high) in zip(rated, intervals, strict=True):
            true_low, true_high = truth[entrant]
            tally.covered += low <= true_high and true_low <= high
            tally.width += high - low + 1
        tally.bots += count
        tally.separated += all(len(group) == 1 for group in grouping(intervals))
        tally.seasons += 1


def intervals(seasons: int) -> None:
    print("\nrank intervals, official beside equal tails, from the same resamples "
          "(2 seats, duplicate deals):")
    header = f"  {'':<14}{'coverage':>10}{'width':>7}{'all apart':>11}"
    for label, draw, sizes in (
            ("6 bots of random strengths (sd 0.5)", None, (10, 40)),
            ("4 bots, neighbours 60/40", spaced(4, 0.6), (10, 20, 40, 60, 80, 100, 120, 160))):
        needed: dict[str, int | None] = {"official": None, "equal tails": None}
        for per_pair in sizes:
            tallies = {name: IntervalTally() for name in needed}
            for season in range(seasons):
                rng = random.Random(f"strengths {season}")
                skills = list(draw) if draw else [rng.gauss(0, 0.5) for _ in range(6)]
                interval_season(skills, per_pair, f"{label} {per_pair} {season}", tallies)
            print(f"\n{label}, {per_pair} matches a pair\n{header}")
            for name, tally in tallies.items():
                apart = tally.separated / tally.seasons
                if apart >= 0.9 and needed[name] is None:
                    needed[name] = per_pair
                print(f"  {name:<14}{tally.covered / tally.bots:>10.1%}"
                      f"{tally.width / tally.bots:>7.2f}{apart:>11.0%}")
            if all(needed.values()):
                break
        if draw:  # random strengths can be arbitrarily close: no size separates them all
            print("  matches a pair until all neighbours are apart in 90% of seasons: "
                  + ", ".join(f"{name} {n if n else '> ' + str(per_pair)}"
                              for name, n in needed.items()))


def greedy_cyclic_schedule(entrants: int, size: int, per_group: int) -> list[tuple[int, ...]]:
    """Seatings with one cyclic order a group, built greedily from its first member."""
    import numpy as np

    successors = np.zeros((entrants, entrants), dtype=np.int64)
    seats = []
    for group in itertools.combinations(range(entrants), size):
        order = [group[0]]
        left = list(group[1:])
        while left:
            nxt = min(left, key=lambda e: (int(successors[order[-1], e]), e))
            order.append(nxt)
            left.remove(nxt)
        for a, b in zip(order, order[1:] + order[:1], strict=True):
            successors[a, b] += per_group
        seats += [tuple(order[r:] + order[:r]) for r in range(size)] * (per_group // size)
    return seats


def successor_ratio(seatings: Sequence[tuple[int, ...]], entrants: int) -> tuple[int, int]:
    counts = {(a, b): 0 for a in range(entrants) for b in range(entrants) if a != b}
    for seats in seatings:
        for i, entrant in enumerate(seats):
            counts[entrant, seats[(i + 1) % len(seats)]] += 1
    return min(counts.values()), max(counts.values())


def seating() -> None:
    print("\nwho sits directly after whom with duplicate deals (least-most, ratio):")
    for entrants, size, per_group in ((6, 4, 8), (8, 4, 8), (8, 6, 6), (9, 7, 7)):
        cells = []
        for name, seatings in (
                ("one greedy order a group", greedy_cyclic_schedule(entrants, size, per_group)),
                ("schedule", [m.seats for m in schedule(entrants, size, per_group, True)])):
            low, high = successor_ratio(seatings, entrants)
            cells.append(f"{name} {low}-{high} ({high / max(low, 1):.2f})")
        print(f"  {entrants} bots, {size} seats, {per_group} a group: " + ";  ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--seasons", type=int, default=50)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--scale", action="store_true", help="also time large seasons")
    args = parser.parse_args()
    print(f"{args.seasons} simulated seasons per scenario; old = pair-by-pair schedule + live "
          "TrueSkill (mu - 3 sigma); new = balanced interleaved schedule + official fit")
    header = (f"  {'':<6}{'order':>8}{'tau':>8}{'first>last':>12}{'coverage':>10}"
              f"{'shared':>8}{'width':>7}")
    for scenario in SCENARIOS:
        old, new, seconds = run(scenario, args.seasons, args.resamples)
        print(f"\n{scenario.name} ({seconds:.2f} s a season for the official standings)")
        print(header)
        for label, tally in (("old", old), ("new", new)):
            line = (f"  {label:<6}{tally.ordered / tally.seasons:>8.0%}"
                    f"{tally.tau / tally.seasons:>8.2f}"
                    + (f"{tally.first_above_last / tally.listed:>12.0%}" if tally.listed
                       else f"{'':>12}"))
            if tally.bots:
                line += (f"{tally.covered / tally.bots:>10.0%}{tally.shared / tally.bots:>8.0%}"
                         f"{tally.width / tally.bots:>7.1f}")
            print(line)
    intervals(args.seasons)
    seating()
    if args.scale:
        scale()


if __name__ == "__main__":
    main()
