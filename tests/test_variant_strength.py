"""Sensible play under every variant (docs/rules.md §21-§32): the in-process greedy and
strategist policies beat the random one under each house rule, and the strategist beats
the greedy one over all of them together. In-process matches to 200, seats alternated."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arena.bots.policies import GreedyPolicy, Policy, RandomPolicy, StrategistPolicy
from arena.bots.runner import play_match
from arena.rules.options import VARIANTS, RuleOptions

MATCHES = 20


def options_for(variant: str) -> RuleOptions:
    if variant == "lazy_scoring":
        return RuleOptions(lazy_scoring=True, rounds=7)
    settings = {variant: True, **({"stacking": True} if variant == "stack_two_on_four" else {})}
    return RuleOptions(target_score=200, **settings)  # type: ignore[arg-type]


def win_rate(bot: Callable[[int], Policy], other: Callable[[int], Policy],
             options: RuleOptions, matches: int = MATCHES) -> float:
    wins = 0.0
    for index in range(matches):
        seat = index % 2
        seats = [bot, other] if seat == 0 else [other, bot]
        result = play_match(seats, 2100 + index, options, build=True)
        if result.places[seat] == 1:
            wins += 1 / result.places.count(1)
    return wins / matches


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_heuristic_policies_beat_random_play(variant: str) -> None:
    options = options_for(variant)
    assert win_rate(StrategistPolicy, RandomPolicy, options) >= 0.8
    assert win_rate(GreedyPolicy, RandomPolicy, options) >= 0.75


def test_the_strategist_beats_the_greedy_policy_over_all_the_variants() -> None:
    rates = [win_rate(StrategistPolicy, GreedyPolicy, options_for(v), 24) for v in VARIANTS]
    assert sum(rates) / len(rates) > 0.5, dict(zip(VARIANTS, rates, strict=True))
