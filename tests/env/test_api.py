"""PettingZoo's and Gymnasium's own checks of the training environments (arena.env), and
that a seed fixes the match: the engine's match for the same seed, action for action."""

from __future__ import annotations

import dataclasses
import random
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from arena.env import SingleSeatEnv, UnoEnv
from arena.rules.match import Match
from arena.rules.options import OFFICIAL, RuleOptions

HOUSE_RULES = RuleOptions(stacking=True, reverse_deflects=True, seven_o=True,
                          exchange_on_five=True, jump_in=True, draw_ten=True)
"""Every variant decision kind: stack or accept, choose a seat, give a card, jump in."""

TABLES = [
    pytest.param(2, OFFICIAL, id="2 players"),
    pytest.param(4, OFFICIAL, id="4 players"),
    pytest.param(2, HOUSE_RULES, id="2 players, house rules"),
    pytest.param(4, HOUSE_RULES, id="4 players, house rules"),
    pytest.param(3, RuleOptions(until_the_last=True, uno_in_seven=True, round_limit=3),
                 id="§29 §30"),
    pytest.param(10, RuleOptions(lazy_scoring=True, rounds=2), id="10 players, §31"),
]

DICT_OBSERVATION = ("Observation is not a NumPy array",
                    "Observation space for each agent probably should be")
"""PettingZoo's warnings for any dict observation (it exempts its own games by name)."""
NO_SPEC = ("Not able to test alternative render modes", "No render fps was declared")
"""Gymnasium's warnings for an environment made without ``gymnasium.make`` or frames."""


@contextmanager
def only_warnings(expected: tuple[str, ...]) -> Iterator[None]:
    """Fail on any warning but the expected ones."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    unexpected = {str(w.message) for w in caught
                  if not any(text in str(w.message) for text in expected)}
    assert not unexpected, sorted(unexpected)


@pytest.mark.parametrize(("players", "options"), TABLES)
def test_pettingzoo_api_test_passes(players: int, options: RuleOptions) -> None:
    with only_warnings(DICT_OBSERVATION):
        api_test(UnoEnv(players, options, render_mode="ansi"), num_cycles=1000)


@pytest.mark.parametrize(("players", "options"), TABLES)
def test_pettingzoo_seed_test_passes(players: int, options: RuleOptions) -> None:
    make: Callable[[], UnoEnv] = lambda: UnoEnv(players, options)  # noqa: E731
    seed_test(make, num_cycles=500)


@pytest.mark.parametrize(("players", "options", "opponents"), [
    pytest.param(2, OFFICIAL, "random", id="2 players, random"),
    pytest.param(4, OFFICIAL, ["greedy", "strategist", "random"], id="4 players, mixed"),
    pytest.param(3, HOUSE_RULES, "strategist", id="house rules, strategist"),
])
def test_gymnasium_check_env_passes(players: int, options: RuleOptions,
                                    opponents: str | list[str]) -> None:
    with only_warnings(NO_SPEC):
        check_env(SingleSeatEnv(players, options, opponents, seat=1, render_mode="ansi"))


def short(options: RuleOptions) -> RuleOptions:
    """The same rules to a target of 50 (§16): whole matches of random play stay short."""
    return dataclasses.replace(options, target_score=50)


def random_play(env: UnoEnv, seed: int) -> list[int]:
    """Every agent plays uniformly among its masked actions; the actions played."""
    rng = random.Random(seed)
    played = []
    for agent in env.agent_iter():
        observed, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = rng.choice(np.flatnonzero(observed["action_mask"]).tolist())
        played.append(env.legal_by_index()[action])
        assert env.seat_of(agent) == env.match.current_seat
        env.step(action)
    return played


@pytest.mark.parametrize(("players", "options"), TABLES)
def test_a_seed_plays_the_engines_match_for_that_seed(players: int, options: RuleOptions
                                                      ) -> None:
    options = short(options)
    env = UnoEnv(players, options)
    env.reset(seed=7)
    played = random_play(env, 1)
    match = Match(players, random.Random(7), options)
    for action in played:
        match.apply(action)
    assert match.is_over
    assert match.events == env.match.events


def test_reset_without_a_seed_goes_on_with_the_last_seeds_sequence() -> None:
    first, second = UnoEnv(3), UnoEnv(3)
    first.reset(seed=11)
    second.reset(seed=11)
    first.reset()
    second.reset()
    assert first.match_seed == second.match_seed != 11
    assert first.match.events == second.match.events
    fresh = UnoEnv(3)
    fresh.reset(seed=first.match_seed)
    assert fresh.match.events == first.match.events


@pytest.mark.parametrize(("players", "options"), TABLES)
def test_the_rewards_follow_the_standing_and_sum_to_zero(players: int, options: RuleOptions
                                                         ) -> None:
    env = UnoEnv(players, short(options))
    env.reset(seed=3)
    rewards: dict[str, float] = dict.fromkeys(env.possible_agents, 0.0)
    rng = random.Random(3)
    for agent in env.agent_iter():
        observed, reward, terminated, _, _ = env.last()
        rewards[agent] += reward
        if terminated:
            env.step(None)
            continue
        assert reward == 0.0
        env.step(rng.choice(np.flatnonzero(observed["action_mask"]).tolist()))
    places = env.match.places
    assert sum(rewards.values()) == pytest.approx(0.0)
    for agent, reward in rewards.items():
        seat = env.seat_of(agent)
        above = sum([place < places[seat] for place in places])
        below = sum([place > places[seat] for place in places])
        assert reward == pytest.approx((below - above) / (players - 1))
    winners = [agent for agent in rewards if places[env.seat_of(agent)] == 1]
    if len(winners) == 1:
        assert rewards[winners[0]] == 1.0


def test_an_illegal_index_is_refused_with_the_legal_ones() -> None:
    env = UnoEnv(2)
    env.reset(seed=0)
    legal = env.legal_by_index()
    illegal = next(index for index in range(128) if index not in legal)
    with pytest.raises(ValueError, match=r"not legal for player_.*legal: .*55 \(draw\)"):
        env.step(illegal)
    with pytest.raises(ValueError, match="not legal"):
        env.step(None)


def test_the_table_renders_as_text() -> None:
    env = UnoEnv(3, render_mode="ansi")
    env.reset(seed=5)
    text = env.render()
    assert text is not None
    assert "round 1, turn 1; seat" in text and "to decide: play or draw" in text
    assert text.count(" seat ") == 4  # the status line and one line a seat
    assert UnoEnv(3).render() is None


def test_a_table_size_outside_the_rules_is_refused() -> None:
    with pytest.raises(ValueError, match="2 to 10 players"):
        UnoEnv(11)
    with pytest.raises(ValueError, match="render_mode"):
        UnoEnv(2, render_mode="human")
