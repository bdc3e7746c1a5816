"""A Gymnasium environment for one seat of a match, the other seats played by policies.

The seat's observations, action space and rewards are those of the AEC environment
(``arena.env.aec``): the episode is one match, rewarded at its end by its standing. The other
seats are played in between by their policies: a built-in one by name (``"random"``,
``"greedy"``, ``"strategist"``, from ``arena.bots.policies``), a policy object with
``decide(observation, legal)``, or any callable taking the seat's §19 observation and its
legal engine actions and returning one of those actions.

An index outside the action mask plays what the referee plays for an illegal answer: the
seat's default action (§20), after the 2 cards of §32 when ``mistake_penalty`` is on; the
step's info says ``illegal_action``. Gymnasium's tools sample actions without the mask, so
an unmasked action is a move, not an error.

The environment's generator (``reset(seed=...)``, Gymnasium's ``np_random``) draws each
match's seed and each named policy's seed, so a seed fixes the episode. Unseeded, the
generator starts from seed 0: seed each copy of a vectorised environment apart.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeAlias

import gymnasium
import numpy as np

from arena.bots.policies import Policy, make_policy
from arena.env.aec import UnoEnv, table_text
from arena.referee.faults import default_action
from arena.rules.actions import Action, action_name
from arena.rules.observation import Observation
from arena.rules.options import OFFICIAL, RuleOptions

Decide: TypeAlias = Callable[[Observation, Sequence[Action]], Action]
"""What plays a seat: its observation and legal actions in, one of those actions out."""
PolicyLike: TypeAlias = str | Policy | Decide
"""A built-in policy's name, a policy object, or a function."""

SEED_BOUND: Final = 2 ** 63
"""Seeds drawn for matches and named policies are below this."""


class SingleSeatEnv(gymnasium.Env[dict[str, Any], np.int64]):
    """Seat ``seat`` of a ``players``-seat match under ``options``; ``opponents`` plays the
    other seats: one policy for all, or one per other seat in seat order."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"]}

    def __init__(self, players: int = 2, options: RuleOptions = OFFICIAL,
                 opponents: PolicyLike | Sequence[PolicyLike] = "random", seat: int = 0,
                 render_mode: str | None = None) -> None:
        self.aec = UnoEnv(players, options, render_mode)
        if not 0 <= seat < players:
            raise ValueError(f"seat must be 0..{players - 1}, not {seat}")
        self.seat = seat
        self.agent = self.aec.possible_agents[seat]
        others = [other for other in range(players) if other != seat]
        if isinstance(opponents, str) or callable(opponents) or hasattr(opponents, "decide"):
            specs: list[PolicyLike] = [opponents] * len(others)
        else:
            specs = list(opponents)
            if len(specs) != len(others):
                raise ValueError(f"opponents: {len(specs)} given for {len(others)} other "
                                 "seats; give one for all, or one per other seat")
        for spec in specs:
            if isinstance(spec, str):
                make_policy(spec)  # an unknown name fails here, not at the first reset
        self._specs = dict(zip(others, specs, strict=True))
        self._deciders: dict[int, Decide] = {}
        self.render_mode = render_mode
        self.observation_space = self.aec.observation_space(self.agent)
        self.action_space = self.aec.action_space(self.agent)
        self.np_random = np.random.default_rng(0)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new match, played up to the seat's first decision; ``options`` is unused."""
        super().reset(seed=seed)
        while True:  # a match the others end before the seat decides (one-card hands)
            rng = self.np_random
            match_seed = int(rng.integers(SEED_BOUND))
            self._deciders = {other: self._decider(spec, int(rng.integers(SEED_BOUND)))
                              for other, spec in self._specs.items()}
            self.aec.reset(seed=match_seed)
            self._play_others()
            if not self.aec.match.is_over:
                return self.aec.observe(self.agent), {}

    def step(self, action: np.int64 | int
             ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        aec = self.aec
        match = aec.match
        if match.is_over:
            raise RuntimeError("the match is over: call reset() for the next one")
        index = operator.index(action)
        illegal = index not in aec.legal_by_index()
        if illegal:
            aec.penalise()
            index = aec.index_of(default_action(match.observation(self.seat)))
        aec.step(index)
        reward = aec.rewards[self.agent] + self._play_others()
        info: dict[str, Any] = {"illegal_action": illegal}
        if match.is_over:
            info["place"] = match.places[self.seat]
        return aec.observe(self.agent), float(reward), match.is_over, False, info

    def render(self) -> str | None:
        """The table as text (``render_mode="ansi"``)."""
        return table_text(self.aec.match) if self.render_mode == "ansi" else None

    def close(self) -> None:
        self.aec.close()

    # -- the other seats -------------------------------------------------------------------

    @staticmethod
    def _decider(spec: PolicyLike, seed: int) -> Decide:
        if isinstance(spec, str):
            return make_policy(spec, seed).decide
        decide = getattr(spec, "decide", None)
        if callable(decide):
            return decide  # type: ignore[no-any-return]
        return spec  # type: ignore[return-value]

    def _play_others(self) -> float:
        """Play the other seats until the seat decides or the match ends; its reward."""
        aec = self.aec
        match = aec.match
        reward = 0.0
        while not match.is_over and match.current_seat != self.seat:
            seat = match.current_seat
            legal = match.legal_actions()
            action = self._deciders[seat](match.observation(seat), legal)
            if action not in legal:
                raise ValueError(
                    f"the policy of seat {seat} answered {action}, not one of its legal "
                    f"actions: {', '.join(action_name(a) for a in legal)}")
            aec.step(aec.index_of(action))
            reward += aec.rewards[self.agent]
        return reward
