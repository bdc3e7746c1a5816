"""The trained example policy (examples/train/) against the sample policies, in-process.

    python -m benchmarks.trained [--weights DIR/weights.json] [--deals 500] [--seed 0]

Every pairing plays the same deals (public seeds ``seed`` .. ``seed + deals - 1``), each as
a duplicate deal: one match to 500 under the official rules with the first policy in seat
0, and one with the seats swapped. A deal scores the first policy's wins over its two
matches (a tie counts half); the win rate is the mean over deals, with a 95% percentile
bootstrap interval that resamples whole deals (the two matches of a deal share their cards,
so they are not independent draws). Side by side:

* trained vs greedy and trained vs strategist: what the example reaches;
* strategist vs greedy: a hand-written heuristic's figure for reference;
* greedy vs greedy, the control: two copies of one deterministic policy play the same
  match in both seatings, so every deal splits, 50% with an interval of no width; any
  other figure means the seatings leak an advantage.

Without ``--weights`` it first trains with the example's defaults (a few minutes).
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena.bots.policies import Policy, make_policy
from arena.bots.runner import play_match
from examples.train.policy import LinearPolicy, load_weights
from examples.train.train import train

RESAMPLES = 10_000
PAIRINGS = (("trained", "greedy"), ("trained", "strategist"), ("strategist", "greedy"),
            ("greedy", "greedy"))


@dataclass(frozen=True)
class Figures:
    win_rate: float
    low: float
    high: float
    margin: float
    """The first policy's mean points over the second's, a match."""


def deal_results(first: Policy, second: Policy, seeds: Sequence[int]
                 ) -> list[tuple[float, float]]:
    """Each deal's (wins of ``first`` over its two matches / 2, its mean points margin)."""
    results = []
    for seed in seeds:
        wins = margin = 0.0
        for seats, me in (((first, second), 0), ((second, first), 1)):
            outcome = play_match(seats, seed)
            places = outcome.places
            wins += 0.5 if places[0] == places[1] else float(places[me] == 1)
            margin += outcome.scores[me] - outcome.scores[1 - me]
        results.append((wins / 2, margin / 2))
    return results


def _policy(name: str, weights: Sequence[float]) -> Policy:
    return LinearPolicy(weights) if name == "trained" else make_policy(name)


def _task(task: tuple[str, str, list[float], list[int]]) -> list[tuple[float, float]]:
    first, second, weights, seeds = task
    return deal_results(_policy(first, weights), _policy(second, weights), seeds)


def figures(results: Sequence[tuple[float, float]], seed: int) -> Figures:
    scores = np.array([score for score, _ in results])
    rng = np.random.default_rng(seed)
    means = scores[rng.integers(len(scores), size=(RESAMPLES, len(scores)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Figures(float(scores.mean()), float(low), float(high),
                   float(np.mean([margin for _, margin in results])))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.trained", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", type=Path,
                        help="a weights.json of train.py --out (default: train one first)")
    parser.add_argument("--deals", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0, help="the first deal's public seed")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    if args.weights is None:
        print("no --weights: training with the example's defaults (seed 1) first", flush=True)
        started = time.perf_counter()
        trained, _ = train(1, workers=args.workers)
        weights = trained.tolist()
        print(f"trained in {time.perf_counter() - started:.0f} s", flush=True)
    else:
        weights = load_weights(args.weights)
    seeds = list(range(args.seed, args.seed + args.deals))
    chunks = [seeds[start::args.workers] for start in range(args.workers)]
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        rows = []
        for first, second in PAIRINGS:
            parts = pool.map(_task, [(first, second, weights, chunk) for chunk in chunks])
            rows.append((f"{first} vs {second}",
                         figures([result for part in parts for result in part], args.seed)))
    seconds = time.perf_counter() - started
    print(f"\n{args.deals} duplicate deals ({2 * args.deals} matches to 500 a pairing, "
          "official rules); 95% percentile bootstrap over deals")
    print(f"{'pairing':24} {'win rate':>9} {'95% interval':>16} {'points a match':>15}")
    for label, row in rows:
        print(f"{label:24} {row.win_rate:9.1%} [{row.low:6.1%}, {row.high:6.1%}] "
              f"{row.margin:+15.1f}")
    print(f"played in {seconds:.0f} s")


if __name__ == "__main__":
    main()
