"""A short training run on the single-seat environment learns to beat the random policy.

The learner is a linear softmax policy over the observation vector, numpy only, trained
by REINFORCE (the episode's reward, less a running baseline, times the gradient of each
action's log-probability). Matches are one round of at most 400 turns (target score 1,
round limit 1; §16, §18) so that an episode is short; a stalled round is a tie, rewarded
0 and not counted as a win. Against the built-in random policy, on the same 200 deals,
the trained policy's win rate must have a 95% lower bound above the untrained policy's
upper bound (the untrained policy is uniform over the mask) and above one half.
Everything is counted in episodes and seeded: no clock.
"""

from __future__ import annotations

import math

import numpy as np

from arena.env import ACTION_SIZE, OBSERVATION_SIZE, SingleSeatEnv
from arena.env.encoding import DRAW_INDEX, OBSERVATION_HIGH, PLAY_INDEX
from arena.rules.options import RuleOptions

ONE_ROUND = RuleOptions(target_score=1, round_limit=1, turn_limit=400)
TRAINING_EPISODES = 300
EVALUATION_SEEDS = range(200)
"""The deals both policies are measured on (training uses seeds from 10,000 on)."""
LEARNING_RATE = 0.1
BASELINE_RATE = 0.05
Z_95 = 1.96


class LinearSoftmax:
    """Action logits ``weights @ [observation / its bounds, 1]``, masked to the legal ones."""

    def __init__(self, seed: int) -> None:
        self.weights = np.zeros((ACTION_SIZE, OBSERVATION_SIZE + 1))
        self.rng = np.random.default_rng(seed)

    @staticmethod
    def features(observed: dict[str, np.ndarray]) -> np.ndarray:
        return np.append(observed["observation"] / OBSERVATION_HIGH, 1.0)

    def probabilities(self, features: np.ndarray, mask: np.ndarray) -> np.ndarray:
        logits = np.where(mask == 1, self.weights @ features, -np.inf)
        exp = np.exp(logits - logits.max())
        result: np.ndarray = exp / exp.sum()
        return result

    def episode(self, env: SingleSeatEnv, seed: int, learn: bool) -> float:
        """One match; with ``learn``, its REINFORCE terms go into ``self.gradient``."""
        observed, _ = env.reset(seed=seed)
        gradient = np.zeros_like(self.weights)
        steps = 0
        while True:
            features = self.features(observed)
            probabilities = self.probabilities(features, observed["action_mask"])
            action = int(self.rng.choice(ACTION_SIZE, p=probabilities))
            if learn:
                direction = -probabilities
                direction[action] += 1
                gradient += np.outer(direction, features)
                steps += 1
            observed, reward, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                self.gradient = gradient / math.sqrt(max(steps, 1))
                return reward

    def train(self, env: SingleSeatEnv, episodes: int) -> None:
        baseline = 0.0
        for number in range(episodes):
            reward = self.episode(env, 10_000 + number, learn=True)
            self.weights += LEARNING_RATE * (reward - baseline) * self.gradient
            baseline += BASELINE_RATE * (reward - baseline)


def wilson(wins: int, games: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate."""
    rate = wins / games
    centre = rate + Z_95 ** 2 / (2 * games)
    spread = Z_95 * math.sqrt(rate * (1 - rate) / games + Z_95 ** 2 / (4 * games ** 2))
    scale = 1 + Z_95 ** 2 / games
    return (centre - spread) / scale, (centre + spread) / scale


def wins(policy: LinearSoftmax, env: SingleSeatEnv) -> int:
    return sum([policy.episode(env, seed, learn=False) > 0 for seed in EVALUATION_SEEDS])


def test_a_short_training_run_beats_the_random_policy() -> None:
    env = SingleSeatEnv(2, ONE_ROUND, opponents="random")
    untrained = LinearSoftmax(seed=1)
    untrained_low, untrained_high = wilson(wins(untrained, env), len(EVALUATION_SEEDS))
    trained = LinearSoftmax(seed=1)
    trained.train(env, TRAINING_EPISODES)
    trained_wins = wins(trained, env)
    trained_low, _ = wilson(trained_wins, len(EVALUATION_SEEDS))
    assert trained_low > untrained_high, (
        f"trained {trained_wins}/{len(EVALUATION_SEEDS)} (from {trained_low:.2f}), untrained "
        f"{untrained_low:.2f}-{untrained_high:.2f}")
    assert trained_low > 0.5  # it beats the random policy outright
    plays = trained.weights[PLAY_INDEX:DRAW_INDEX, -1]
    assert trained.weights[DRAW_INDEX, -1] < np.median(plays)  # drawing: the last resort
