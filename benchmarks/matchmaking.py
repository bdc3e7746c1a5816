"""The ladder's matchmaker: over simulated ladders of bots of known strengths, how soon the
ladder shows the true order, side by side for the baseline (the highest sigma seated
first, against the nearest in mu: that rule as a pure function, below) and
``arena.server.matchmaking``. In process, no bots.

    python -m benchmarks.matchmaking [--runs 200] [--bots 8] [--matches 1500]

The ladder: ``--bots`` bots, each its own author's, true skills ``--spacing`` TrueSkill
betas apart, the weakest another ``--outlier`` betas below the rest (a random player: the
measured ladder's random bot lost all of its 521 matches); two-seat tables, ``--parallel``
picked at once and then played, in that order; a result drawn from TrueSkill's own model
(performances of sd beta about the true skills, so the ratings' predictions are right),
rated with the project's live TrueSkill (``arena.rating``: the ladder's environment, its
closed-form two-player update) and placement matches as the league file's default. Each run
gives its bots their skills in a random order of ids (ties in the ladder's order go by id).

Figures, over ``--runs`` seeded runs of ``--matches`` matches: "found" is the number of
matches after which the ladder's order (by mu - 3 sigma, as ``ladder_rows`` ranks) is the
true order and stays so to the end of the run, in 90% of runs (its 90th percentile; "-"
when more than a tenth never settle), beside the median; "certain" the share of matches
whose result was already certain (a predicted win probability above ``CERTAIN`` from the
ratings before the match); "pairs" the most and least matches one pair played (medians
over runs of each run's most and least); "weakest" the weakest bot's share of the matches;
"ms" the time to choose a match, and to choose two tables on larger ladders.
The ratio of the matches needed, new over baseline, is the figure the target is met by
(at most 0.7).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import math
import os
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arena.rating.trueskill_ratings import BETA, ENVIRONMENT, MU, SIGMA, draw_margin, rate_two
from arena.server import matchmaking
from arena.server.config import LadderSettings

CERTAIN = 0.95
"""A predicted win probability above this (either way): the result was already known."""
FOUND_IN = 0.9
"""The share of runs whose order must be found."""
TARGET_RATIO = 0.7
"""The new rule's matches needed over the baseline's: at least 30% fewer."""
LARGE_LADDERS = (50, 200)
"""Ladder sizes the time to choose tables is measured at, after the runs."""
SETTINGS = LadderSettings()
MARGIN = draw_margin(ENVIRONMENT)


@dataclass
class Bot:
    id: int
    author_id: int
    skill: float
    mu: float = MU
    sigma: float = SIGMA
    matches: int = 0
    last: int = -1
    """The number of its last match (-1: none)."""

    @property
    def conservative(self) -> float:
        return self.mu - 3 * self.sigma


@dataclass
class Ladder:
    bots: list[Bot]
    made: int = 0
    pairs: dict[tuple[int, int], int] = field(default_factory=lambda: defaultdict(int))


Picker = Callable[[Ladder, int, random.Random], list[tuple[int, ...]]]


def baseline_tables(ladder: Ladder, slots: int, rng: random.Random) -> list[tuple[int, ...]]:
    """The baseline rule, over the simulated ladder rather than a store: the first seat a
    bot in its placement matches (fewest first), else the one of highest sigma; its
    opponents the closest in mu; an author's bots apart, at most
    ``max_running_per_author`` of an author's tables at once."""
    active = ladder.bots
    running: dict[int, int] = {}
    author_running: dict[int, int] = defaultdict(int)
    tables: list[tuple[int, ...]] = []
    unusable: set[int] = set()
    while len(tables) < slots:
        free = [v for v in active if not running.get(v.id) and v.id not in unusable
                and author_running[v.author_id] < SETTINGS.max_running_per_author]
        if len(free) < SETTINGS.table_size:
            break

        def placed(version: Bot) -> int:
            return version.matches + running.get(version.id, 0)

        def priority(version: Bot) -> tuple[int, float, int]:
            if placed(version) < SETTINGS.placement_matches:
                return (0, placed(version), version.id)
            return (1, -version.sigma, version.id)

        focus = min(free, key=priority)
        mu = focus.mu
        table = [focus]
        for candidate in sorted(free, key=lambda v: (abs(v.mu - mu), v.id)):
            if len(table) == SETTINGS.table_size:
                break
            if candidate in table:
                continue
            if not SETTINGS.same_author_matches and any(
                    candidate.author_id == seated.author_id for seated in table):
                continue
            table.append(candidate)
        if len(table) < SETTINGS.table_size:
            unusable.add(focus.id)
            continue
        rng.shuffle(table)
        tables.append(tuple(v.id for v in table))
        for version in table:
            running[version.id] = running.get(version.id, 0) + 1
        for author in {v.author_id for v in table}:
            author_running[author] += 1
    return tables


CONSTRAINTS = matchmaking.Constraints(SETTINGS.table_size, SETTINGS.placement_matches,
                                      SETTINGS.same_author_matches,
                                      SETTINGS.max_running_per_author)


def new_tables(ladder: Ladder, slots: int, rng: random.Random) -> list[tuple[int, ...]]:
    """``arena.server.matchmaking``'s rule, over the same ladder."""
    entrants = [matchmaking.Entrant(b.id, b.author_id, b.mu, b.sigma, b.matches,
                                    ladder.made - b.last - 1 if b.last >= 0 else ladder.made)
                for b in ladder.bots]
    return matchmaking.pick_tables(entrants, ladder.pairs, CONSTRAINTS, {}, slots, rng)


PICKERS: dict[str, Picker] = {"baseline": baseline_tables, "new": new_tables}


@dataclass(frozen=True)
class Run:
    found: int | None
    """The matches after which the order was true to the end (None: not true at the end)."""
    certain: int
    matches: int
    most_pair: int
    least_pair: int
    weakest: int
    """The weakest bot's matches."""
    seconds: float
    """Spent choosing tables."""


def skills(bots: int, spacing: float, outlier: float) -> list[float]:
    """True skills, weakest first: ``spacing`` betas apart, the weakest ``outlier`` further."""
    return [MU + BETA * (spacing * (i - (bots - 1) / 2) - (outlier if i == 0 else 0))
            for i in range(bots)]


def simulate(picker: str, seed: int, bots: int, spacing: float, outlier: float,
             matches: int, parallel: int) -> Run:
    draw = random.Random(seed)
    true = skills(bots, spacing, outlier)
    ids = list(range(1, bots + 1))
    draw.shuffle(ids)
    ladder = Ladder([Bot(ids[i], ids[i], true[i]) for i in range(bots)])
    by_id = {b.id: b for b in ladder.bots}
    true_order = [b.id for b in sorted(ladder.bots, key=lambda b: -b.skill)]
    weakest = min(ladder.bots, key=lambda b: b.skill)
    results = random.Random(f"results {seed}")
    seats = random.Random(f"seats {seed}")
    choose = PICKERS[picker]
    found: int | None = None
    certain = 0
    seconds = 0.0
    while ladder.made < matches:
        started = time.perf_counter()
        tables = choose(ladder, min(parallel, matches - ladder.made), seats)
        seconds += time.perf_counter() - started
        for a_id, b_id in tables:
            a, b = by_id[a_id], by_id[b_id]
            predicted = matchmaking.win_probability(
                matchmaking.Entrant(a.id, a.id, a.mu, a.sigma, 0, 0),
                matchmaking.Entrant(b.id, b.id, b.mu, b.sigma, 0, 0))
            certain += max(predicted, 1 - predicted) > CERTAIN
            won = results.random() < 0.5 * (1 + math.erf((a.skill - b.skill) / (2 * BETA)))
            (a.mu, a.sigma), (b.mu, b.sigma) = rate_two(
                ENVIRONMENT, MARGIN, (a.mu, a.sigma), (b.mu, b.sigma), 1 if won else 2,
                2 if won else 1)
            for bot in (a, b):
                bot.matches += 1
                bot.last = ladder.made
            ladder.pairs[matchmaking.pair(a.id, b.id)] += 1
            ladder.made += 1
            shown = sorted(ladder.bots, key=lambda b: (-b.conservative, b.id))
            if [b.id for b in shown] != true_order:
                found = None
            elif found is None:
                found = ladder.made
    counts = [ladder.pairs.get(matchmaking.pair(a.id, b.id), 0)
              for a, b in itertools.combinations(ladder.bots, 2)]
    return Run(found, certain, ladder.made, max(counts), min(counts), weakest.matches,
               seconds)


def percentile(values: Sequence[float], share: float) -> float:
    """The smallest value at least ``share`` of ``values`` are at or below."""
    ordered = sorted(values)
    return ordered[max(math.ceil(share * len(ordered)) - 1, 0)]


def summary(runs: Sequence[Run]) -> dict[str, float]:
    found = [r.found if r.found is not None else math.inf for r in runs]
    matches = sum(r.matches for r in runs)
    return {"found": percentile(found, FOUND_IN), "median": statistics.median(found),
            "never": sum(r.found is None for r in runs), "certain": sum(r.certain for r in runs)
            / matches, "most": statistics.median(r.most_pair for r in runs),
            "least": statistics.median(r.least_pair for r in runs),
            "weakest": sum(r.weakest for r in runs) / matches,
            "ms": 1000 * sum(r.seconds for r in runs) / matches}


def choosing_time(picker: str, bots: int, repeats: int = 5) -> float:
    """Milliseconds to choose ``SETTINGS.parallel`` tables on a ladder of ``bots`` bots
    some way into its season (ratings spread, sigmas 1 to 3, placements done)."""
    rng = random.Random(bots)
    ladder = Ladder([Bot(i, i, 0.0, rng.gauss(MU, 6), rng.uniform(1, 3), 50,
                         rng.randrange(bots)) for i in range(1, bots + 1)], made=bots)
    started = time.perf_counter()
    for _ in range(repeats):
        PICKERS[picker](ladder, SETTINGS.parallel, rng)
    return 1000 * (time.perf_counter() - started) / repeats


def shown(value: float) -> str:
    return "-" if math.isinf(value) else f"{value:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="seeded runs of each rule")
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--matches", type=int, default=1500, help="matches a run")
    parser.add_argument("--spacing", type=float, default=0.7,
                        help="betas between neighbouring skills (0.7: the stronger wins 69%%)")
    parser.add_argument("--outlier", type=float, default=4.0,
                        help="betas the weakest bot is further below (0: evenly spaced)")
    parser.add_argument("--parallel", type=int, default=SETTINGS.parallel,
                        help="tables picked at once")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    print(f"{args.bots} bots {args.spacing} betas apart, the weakest {args.outlier} further; "
          f"{args.runs} runs of {args.matches} matches, {args.parallel} tables at once")
    figures = {}
    started = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(args.workers) as pool:
        for name in PICKERS:
            runs = list(pool.map(simulate, itertools.repeat(name),
                                 range(args.seed, args.seed + args.runs),
                                 itertools.repeat(args.bots), itertools.repeat(args.spacing),
                                 itertools.repeat(args.outlier),
                                 itertools.repeat(args.matches),
                                 itertools.repeat(args.parallel), chunksize=4))
            figures[name] = summary(runs)
    print(f"{'':30}{'baseline':>12}{'new':>12}")
    rows = [(f"found in {FOUND_IN:.0%} of runs", "found", shown),
            ("found, median run", "median", shown),
            ("runs never settled", "never", lambda v: f"{v:.0f}"),
            (f"certain (p > {CERTAIN})", "certain", lambda v: f"{v:.1%}"),
            ("most matches of a pair", "most", lambda v: f"{v:.0f}"),
            ("least matches of a pair", "least", lambda v: f"{v:.0f}"),
            ("the weakest bot's matches", "weakest", lambda v: f"{v:.1%}"),
            ("ms choosing a match", "ms", lambda v: f"{v:.2f}")]
    for label, key, show in rows:
        print(f"{label:30}{show(figures['baseline'][key]):>12}{show(figures['new'][key]):>12}")
    old, new = figures["baseline"]["found"], figures["new"]["found"]
    if math.isinf(old) or math.isinf(new):
        print("RATIO new / baseline: - (a rule did not settle in 90% of runs: more --matches)")
    else:
        ratio = new / old
        met = "met" if ratio <= TARGET_RATIO else "NOT met"
        print(f"RATIO new / baseline: {ratio:.2f}   target <= {TARGET_RATIO}: {met}")
    for size in LARGE_LADDERS:
        print(f"{f'ms choosing at {size} bots':30}{choosing_time('baseline', size):>12.1f}"
              f"{choosing_time('new', size):>12.1f}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
