"""The single-seat Gymnasium environment (arena.env.single): the other seats played by
named policies, policy objects or functions; unmasked actions played as the referee plays
an illegal answer (§20, §32)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from arena.bots.policies import GreedyPolicy
from arena.env import SingleSeatEnv
from arena.env.encoding import DRAW_INDEX, SLICES
from arena.rules.actions import Action, DecisionKind
from arena.rules.events import DrawReason, Drew
from arena.rules.observation import Observation
from arena.rules.options import RuleOptions


def play_out(env: SingleSeatEnv, seed: int) -> tuple[float, dict[str, object], int]:
    """The seat plays its lowest masked index to the match's end: reward, last info, steps."""
    observed, _ = env.reset(seed=seed)
    steps = 0
    while True:
        action = int(np.flatnonzero(observed["action_mask"])[0])
        observed, reward, terminated, truncated, info = env.step(action)
        steps += 1
        assert not truncated
        if terminated:
            return reward, info, steps
        assert reward == 0.0


def test_the_seat_decides_only_at_its_own_decisions() -> None:
    env = SingleSeatEnv(4, seat=2, opponents="greedy")
    observed, info = env.reset(seed=1)
    assert info == {}
    for _ in range(50):
        assert env.aec.match.current_seat == 2
        assert observed["observation"][SLICES["acting"]][0] == 1  # itself, relative place 0
        observed, _, terminated, _, _ = env.step(int(np.flatnonzero(observed["action_mask"])[0]))
        if terminated:
            break


def test_an_episode_is_a_match_rewarded_by_its_standing() -> None:
    env = SingleSeatEnv(2, RuleOptions(target_score=100), opponents="strategist")
    reward, info, _ = play_out(env, 4)
    assert env.aec.match.is_over
    assert info["place"] == env.aec.match.places[0]
    assert reward == {1: 1.0, 2: -1.0}[env.aec.match.places[0]]
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(DRAW_INDEX)


def test_a_seed_fixes_the_episode_and_its_opponents() -> None:
    first = SingleSeatEnv(3, opponents="random")
    second = SingleSeatEnv(3, opponents="random")
    assert play_out(first, 9) == play_out(second, 9)
    assert first.aec.match.events == second.aec.match.events
    play_out(first, 10)
    assert first.aec.match.events != second.aec.match.events


def test_opponents_may_be_functions_policy_objects_or_names() -> None:
    seen: list[int] = []

    def always_first(observation: Observation, legal: Sequence[Action]) -> Action:
        seen.append(observation.seat)
        return legal[0]

    env = SingleSeatEnv(4, opponents=[always_first, GreedyPolicy(), "strategist"], seat=0)
    play_out(env, 2)
    assert set(seen) == {1}
    with pytest.raises(ValueError, match="2 given for 3 other seats"):
        SingleSeatEnv(4, opponents=["random", "greedy"])
    with pytest.raises(ValueError, match="unknown policy 'clever'"):
        SingleSeatEnv(2, opponents="clever")


def test_an_opponent_answering_an_illegal_action_is_named() -> None:
    env = SingleSeatEnv(2, opponents=lambda observation, legal: 999, seat=0)
    with pytest.raises(ValueError, match="the policy of seat 1 answered 999"):
        play_out(env, 0)


def unmasked_index(observed: dict[str, np.ndarray]) -> int:
    return int(np.flatnonzero(observed["action_mask"] == 0)[0])


def drawn_since(env: SingleSeatEnv, start: int) -> list[tuple[int, int, DrawReason]]:
    """(seat, amount, reason) of each draw in the match's events from ``start`` on."""
    return [(event.seat, event.amount, event.reason)
            for event in env.aec.match.events[start:] if isinstance(event, Drew)]


def test_an_unmasked_index_plays_the_default_action() -> None:
    env = SingleSeatEnv(2, opponents="greedy")
    observed, _ = env.reset(seed=3)
    while env.aec.match.decision is not DecisionKind.PLAY_OR_DRAW:
        observed, *_ = env.step(int(np.flatnonzero(observed["action_mask"])[0]))
    start = len(env.aec.match.events)
    _, _, _, _, info = env.step(unmasked_index(observed))
    assert info["illegal_action"] is True
    assert drawn_since(env, start)[0] == (0, 1, DrawReason.CHOICE)  # §20: the default draws


def test_under_the_mistake_penalty_an_unmasked_index_costs_two_cards_first() -> None:
    env = SingleSeatEnv(2, RuleOptions(mistake_penalty=True), opponents="greedy")
    observed, _ = env.reset(seed=3)
    start = len(env.aec.match.events)
    _, _, _, _, info = env.step(unmasked_index(observed))
    assert info["illegal_action"] is True
    assert drawn_since(env, start)[0] == (0, 2, DrawReason.MISTAKE)  # §32, then §20's default


def test_a_masked_index_is_no_illegal_action() -> None:
    env = SingleSeatEnv(2, opponents="greedy")
    observed, _ = env.reset(seed=3)
    _, _, _, _, info = env.step(int(np.flatnonzero(observed["action_mask"])[0]))
    assert info == {"illegal_action": False}
