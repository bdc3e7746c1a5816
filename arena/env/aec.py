"""A PettingZoo AEC environment over the official engine: one match to the target score.

Agents ``player_0`` ... ``player_{n-1}`` are the seats; the agent selected is the seat
whose decision it is (a jump-in, §25, selects the seat jumping in). Each agent observes
``{"observation": vector, "action_mask": mask}`` (``arena.env.encoding``); its mask is all
0 unless it is the agent to act.

Rewards come at the end of the match and follow its standing (§16, §17, §31): each seat
gets (seats placed below it - seats placed above it) / (players - 1), so +1 alone in first
place, -1 alone in last, 0 for two seats tied; the rewards sum to 0, and every other step
rewards 0. The engine ends every match (§18's turn and round limits), so no agent is ever
truncated.

``reset(seed=s)`` plays the match of ``Match(players, random.Random(s), options)``;
``reset()`` plays the next match of the sequence the last seed began (seed 0's when no seed
was given). No clock and no I/O: the chance is the seeded generator's alone.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from arena.env.encoding import (
    Encoder,
    action_index,
    action_mask,
    action_space,
    legal_indices,
    observation_space,
)
from arena.rules.actions import Action, action_name
from arena.rules.cards import NO_COLOUR, Colour, card_name
from arena.rules.match import MAX_PLAYERS, MIN_PLAYERS, Match
from arena.rules.options import OFFICIAL, RuleOptions

Observed = dict[str, np.ndarray]


def place_rewards(places: Sequence[int]) -> list[float]:
    """Each seat's reward for a match's places (1 first, equal places shared): the seats
    placed below it less those placed above it, over the other seats."""
    others = len(places) - 1
    return [(sum([other > place for other in places]) - sum([other < place for other in places]))
            / others for place in places]


class UnoEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """One UNO match to the target score for ``players`` seats under ``options``."""

    metadata: dict[str, Any] = {"name": "uno_arena_v0", "render_modes": ["ansi"],
                                "is_parallelizable": False}

    def __init__(self, players: int = 2, options: RuleOptions = OFFICIAL,
                 render_mode: str | None = None) -> None:
        super().__init__()
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ValueError(f"UNO is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.players = players
        self.options = options
        self.render_mode = render_mode
        self.possible_agents: list[str] = [f"player_{seat}" for seat in range(players)]
        self.observation_spaces: dict[str, spaces.Dict] = {
            agent: observation_space() for agent in self.possible_agents}
        self.action_spaces: dict[str, spaces.Discrete] = {
            agent: action_space() for agent in self.possible_agents}
        self.encoder = Encoder(players, options)
        self.match_seed = 0
        """The seed of the match's ``random.Random``: ``Match(players, random.Random(
        match_seed), options)`` replays it."""
        self._seats = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self._seeds = random.Random(0)
        self._match: Match | None = None
        self._legal: dict[int, Action] | None = None
        self.agents: list[str] = []
        self.rewards: dict[str, float] = {}
        self._cumulative_rewards: dict[str, float] = {}
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self.infos: dict[str, dict[str, Any]] = {}
        self.agent_selection = self.possible_agents[0]

    # -- the spaces ----------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # -- the match -------------------------------------------------------------------------

    @property
    def match(self) -> Match:
        """The engine's match (read it; change it only through ``step``)."""
        if self._match is None:
            raise RuntimeError("no match yet: call reset() first")
        return self._match

    def seat_of(self, agent: str) -> int:
        return self._seats[agent]

    def legal_by_index(self) -> dict[int, Action]:
        """The acting seat's legal actions by index (empty once the match is over); a
        fresh dict, as the engine's lists are."""
        return dict(self._indexed())

    def _indexed(self) -> dict[int, Action]:
        legal = self._legal
        if legal is None:
            match = self.match
            legal = {} if match.is_over else legal_indices(
                match.legal_actions(), match.current_seat, self.players)
            self._legal = legal
        return legal

    def index_of(self, action: Action) -> int:
        """The index of an engine action of the acting seat."""
        return action_index(action, self.match.current_seat, self.players)

    def penalise(self) -> bool:
        """§32: the acting seat draws 2 for an illegal action, as the referee makes it
        draw; False, and nothing drawn, unless ``mistake_penalty`` is on."""
        penalised = self.match.penalise(self.match.current_seat)
        if penalised:
            self._legal = None
        return penalised

    # -- the AEC API -----------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new match; ``options`` (PettingZoo's reset options) is unused: the rules are
        the constructor's."""
        if seed is not None:
            seed = operator.index(seed)
            self._seeds = random.Random(seed)
            self.match_seed = seed
        else:
            self.match_seed = self._seeds.getrandbits(64)
        match = self._match = Match(self.players, random.Random(self.match_seed), self.options)
        self._legal = None
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[match.current_seat]

    def observe(self, agent: str) -> Observed:
        match = self.match
        seat = self._seats[agent]
        acting = seat == match.current_seat
        return {
            "observation": self.encoder.encode(match.observation(seat)),
            "action_mask": action_mask(self._indexed() if acting else ()),
        }

    def step(self, action: int | None) -> None:
        """Play the selected agent's action index; a finished agent's only action is None
        (PettingZoo removes it then)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        legal = self._indexed()
        index = -1 if action is None else operator.index(action)
        if index not in legal:
            shown = ", ".join(f"{i} ({action_name(a)})" for i, a in sorted(legal.items()))
            raise ValueError(f"action {action} is not legal for {agent}; legal: {shown}")
        match = self.match
        self._cumulative_rewards[agent] = 0.0
        match.apply(legal[index])
        self._legal = None
        self._clear_rewards()
        if match.is_over:
            rewards = place_rewards(match.places)
            for other in self.agents:
                self.rewards[other] = rewards[self._seats[other]]
                self.terminations[other] = True
        else:
            self.agent_selection = self.possible_agents[match.current_seat]
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The table as text: every hand, the piles, the scores (``render_mode="ansi"``)."""
        if self.render_mode is None:
            return None
        return table_text(self.match)

    def close(self) -> None:
        """Nothing to release: the environment holds no resources beyond memory."""


def table_text(match: Match) -> str:
    """Every seat's hand and score, the top card, the colour and whose decision it is."""
    seen = match.observation(0)
    colour = "none" if seen.colour == NO_COLOUR else Colour(seen.colour).name.lower()
    direction = "clockwise" if seen.direction > 0 else "counter-clockwise"
    if match.is_over:
        status = f"match over after {match.rounds_played} round(s), places {match.places}"
    else:
        decision = match.decision
        kind = decision.name.lower().replace("_", " ") if decision else "none"
        status = f"seat {match.current_seat} to decide: {kind}"
    lines = [f"round {seen.round_number}, turn {seen.turn}; {status}",
             f"top {card_name(seen.top_card)}, colour {colour}, {direction}; "
             f"draw pile {seen.draw_pile_size}, discard pile {seen.discard_pile_size}"]
    for seat in range(match.players):
        hand = " ".join(card_name(card) for card in match.observation(seat).hand)
        marker = ">" if seat == match.current_seat else " "
        lines.append(f"{marker} seat {seat} ({seen.scores[seat]} points): {hand}")
    return "\n".join(lines)
