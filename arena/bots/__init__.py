"""Bots: in-process policies (random, greedy, strategist) and the Python bot SDK."""

from arena.bots.policies import (
    POLICIES,
    GreedyPolicy,
    Policy,
    RandomPolicy,
    StrategistPolicy,
    make_policy,
)

__all__ = [
    "POLICIES", "GreedyPolicy", "Policy", "RandomPolicy", "StrategistPolicy", "make_policy",
]
