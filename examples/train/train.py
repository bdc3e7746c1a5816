"""Train the linear policy of ``policy.py`` with the cross-entropy method, numpy only.

    python -m examples.train.train [--seed 1] [--generations 30] [--out my-trained-bot]

Each generation samples a population of weight vectors from a diagonal Gaussian, scores
every one on the same fresh deals (common random numbers: the candidates differ by their
play, not by their cards), and refits the Gaussian to the best quarter. A deal is one
round of the official rules played twice, seats swapped (duplicate), against the greedy
policy on even deals and the strategist on odd ones (``--opponents``); a candidate's
fitness is its mean points margin a round (its points scored minus the opponent's), which
is what a match to 500 (§16) adds up. The policies are deterministic and every deal comes
from the generator seeded by ``--seed``, so a seed gives the same weights, whatever
``--workers``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from arena.bots.policies import POLICIES, Policy, make_policy
from arena.bots.runner import play_match
from arena.rules.options import RuleOptions
from examples.train.policy import SIZE, LinearPolicy

ONE_ROUND = RuleOptions(target_score=1, round_limit=1)
"""One official round a match: the round's winner scores its points (§16) and it ends."""
SEED_BOUND = 2 ** 62


@dataclass(frozen=True)
class Settings:
    """The cross-entropy method's settings; the defaults train in about three minutes on
    two cores."""

    generations: int = 30
    population: int = 32
    elite: int = 8
    """Candidates the next Gaussian is fitted to: the best quarter."""
    deals: int = 192
    """Deals a generation, each played twice (seats swapped) by every candidate."""
    initial_spread: float = 1.0
    """The first Gaussian's standard deviation (its mean is 0: the greedy plays)."""
    extra_spread: float = 0.25
    """Added to the fitted deviation, falling linearly to 0 by the last generation, so
    that the search does not collapse onto an early elite (Szita and Lorincz, 2006)."""
    opponents: tuple[str, ...] = ("greedy", "strategist")
    """Built-in policies (``arena.bots.policies``): deal ``i`` of a generation is played
    against ``opponents[i % len(opponents)]``."""


@dataclass(frozen=True)
class Generation:
    number: int
    mean_fitness: float
    """The fitness of the Gaussian's mean before the refit, on this generation's deals."""
    best_fitness: float
    elite_fitness: float


def round_margins(policy: Policy, opponent: Policy, seeds: Sequence[int],
                  options: RuleOptions = ONE_ROUND) -> list[float]:
    """On each deal, ``policy``'s points minus ``opponent``'s, the mean of both seatings."""
    margins = []
    for seed in seeds:
        first = play_match([policy, opponent], seed, options).scores
        second = play_match([opponent, policy], seed, options).scores
        margins.append(((first[0] - first[1]) + (second[1] - second[0])) / 2)
    return margins


def fitness(weights: np.ndarray, seeds: Sequence[int], opponents: Sequence[str]) -> float:
    """The mean round margin of ``weights`` on ``seeds``, against ``opponents`` in turn."""
    policy = LinearPolicy(weights.tolist())
    players = [make_policy(name) for name in opponents]
    total = 0.0
    for index, opponent in enumerate(players):
        total += sum(round_margins(policy, opponent, seeds[index::len(players)]))
    return total / len(seeds)


def _fitness_task(task: tuple[np.ndarray, list[int], tuple[str, ...]]) -> float:
    return fitness(*task)


def train(seed: int, settings: Settings = Settings(), workers: int = 1,
          report: bool = False) -> tuple[np.ndarray, list[Generation]]:
    """The trained weights (the last Gaussian's mean) and each generation's figures."""
    rng = np.random.default_rng(seed)
    mean = np.zeros(SIZE)
    spread = np.full(SIZE, settings.initial_spread)
    history: list[Generation] = []
    pool = multiprocessing.get_context("fork").Pool(workers) if workers > 1 else None
    try:
        for number in range(settings.generations):
            seeds = [int(s) for s in rng.integers(SEED_BOUND, size=settings.deals)]
            population = mean + spread * rng.standard_normal((settings.population, SIZE))
            tasks = [(weights, seeds, settings.opponents) for weights in (mean, *population)]
            scored = (pool.map(_fitness_task, tasks) if pool is not None
                      else [_fitness_task(task) for task in tasks])
            fitnesses = np.array(scored[1:])
            elite = population[np.argsort(-fitnesses, kind="stable")[:settings.elite]]
            extra = settings.extra_spread * (1 - number / max(settings.generations - 1, 1))
            mean = elite.mean(axis=0)
            spread = elite.std(axis=0) + extra
            figures = Generation(number + 1, scored[0], float(fitnesses.max()),
                                 float(np.sort(fitnesses)[-settings.elite:].mean()))
            history.append(figures)
            if report:
                print(f"generation {figures.number:3}: mean {figures.mean_fitness:+7.2f}  "
                      f"elite {figures.elite_fitness:+7.2f}  best {figures.best_fitness:+7.2f}"
                      "  (points a round)", flush=True)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return mean, history


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.train.train",
        description="Train a linear UNO policy with the cross-entropy method (numpy only).")
    parser.add_argument("--seed", type=int, default=1, help="the same seed, the same weights")
    parser.add_argument("--generations", type=int, default=Settings.generations)
    parser.add_argument("--population", type=int, default=Settings.population)
    parser.add_argument("--deals", type=int, default=Settings.deals,
                        help="deals a generation, each played twice by every candidate")
    parser.add_argument("--opponents", default=",".join(Settings.opponents),
                        help="built-in policies to train against, by turns (comma-separated)")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--out", type=Path, help="write a bot folder here: bot.toml, bot.py, "
                        "policy.py and weights.json")
    parser.add_argument("--name", default="trained-linear", help="the exported bot's name")
    args = parser.parse_args(argv)
    opponents = tuple(name.strip() for name in args.opponents.split(","))
    unknown = [name for name in opponents if name not in POLICIES]
    if unknown:
        parser.error(f"--opponents: unknown {', '.join(unknown)}; known: {', '.join(POLICIES)}")
    if args.population < 2 or args.generations < 1 or args.deals < len(opponents):
        parser.error("--population needs at least 2, --generations at least 1, --deals at "
                     "least one an opponent")
    settings = Settings(generations=args.generations, population=args.population,
                        elite=max(1, args.population // 4), deals=args.deals,
                        opponents=opponents)
    started = time.perf_counter()
    weights, history = train(args.seed, settings, args.workers, report=True)
    print(f"trained in {time.perf_counter() - started:.0f} s", flush=True)
    if args.out is not None:
        from examples.train.export import export  # here: training alone needs no folder

        about = {"method": "cross-entropy", "seed": args.seed, **asdict(settings),
                 "last_mean_fitness": history[-1].mean_fitness}
        export(args.out, weights.tolist(), about, args.name)
        print(f"wrote {args.out}: arena check {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
