"""Statistical strength tests: the strategist policy against random and greedy play.

Two-player matches to 500 under the official rules, seats alternated: match ``g`` uses
seed ``g`` with the strategist in seat ``g % 2`` (the runner seeds the deck and each bot
from the match seed, so every figure here is fixed). A match counts as a strategist win
when it finishes first and the opponent second; a shared place counts as no win.

Run with ``pytest -s`` to see the win rates and their 95% Wilson confidence intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from arena.bots.policies import GreedyPolicy, Policy, RandomPolicy, StrategistPolicy
from arena.bots.runner import play_match
from arena.rules import OFFICIAL

MATCHES = 2000
Z_95 = 1.959963984540054


def wilson_interval(wins: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion."""
    p = wins / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def test_wilson_interval_known_values() -> None:
    assert wilson_interval(50, 100) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)


def strategist_record(opponent: Callable[[int], Policy], matches: int) -> dict[str, int]:
    record = {"wins": 0, "losses": 0, "shared": 0, "round_limit": 0}
    for game in range(matches):
        seat = game % 2
        factories: list[Callable[[int], Policy]] = [opponent, opponent]
        factories[seat] = StrategistPolicy
        result = play_match(factories, game, OFFICIAL, build=True)
        mine, theirs = result.places[seat], result.places[1 - seat]
        if mine < theirs:
            record["wins"] += 1
        elif mine > theirs:
            record["losses"] += 1
        else:
            record["shared"] += 1
        record["round_limit"] += result.round_limit_reached
    return record


def report(opponent: Callable[[int], Policy]) -> tuple[float, float, float]:
    """Play the matches, print the figures, return the win rate and its 95% interval."""
    record = strategist_record(opponent, MATCHES)
    wins = record["wins"]
    rate = wins / MATCHES
    low, high = wilson_interval(wins, MATCHES)
    print(
        f"\nstrategist vs {opponent.__name__}: {wins}/{MATCHES} wins = {rate:.4f}, "
        f"95% Wilson CI [{low:.4f}, {high:.4f}] (losses {record['losses']}, "
        f"shared {record['shared']}, round limit reached {record['round_limit']})"
    )
    return rate, low, high


@pytest.mark.slow
def test_strategist_beats_random_at_least_95_percent() -> None:
    rate, low, _ = report(RandomPolicy)
    assert rate >= 0.95, f"win rate {rate:.4f} below 0.95 (Wilson lower bound {low:.4f})"


@pytest.mark.slow
def test_strategist_beats_greedy_more_than_55_percent() -> None:
    rate, low, _ = report(GreedyPolicy)
    assert rate > 0.55, f"win rate {rate:.4f} not above 0.55 (Wilson lower bound {low:.4f})"
    assert low > 0.5, f"Wilson lower bound {low:.4f} not above 0.5"
