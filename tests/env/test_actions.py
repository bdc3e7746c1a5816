"""The action space and the observation vector (arena.env.encoding): every legal
action of every decision kind has an index of its own, masked, that maps back to it."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest

from arena.env import UnoEnv
from arena.env.encoding import (
    ACTION_SIZE,
    FIELDS,
    OBSERVATION_HIGH,
    OBSERVATION_SIZE,
    SLICES,
    action_index,
    legal_indices,
    observation_space,
)
from arena.rules.actions import UNO_CALL, DecisionKind, is_play, parse_action
from arena.rules.options import OFFICIAL, VARIANTS, RuleOptions

# (action as the engine names it, acting seat, players, index)
INDICES = [
    ("play R0", 0, 2, 0),
    ("play R7", 1, 4, 7),
    ("play R7 uno", 1, 4, 7),
    ("play Y+2", 0, 2, 25),
    ("play B9", 0, 2, 48),
    ("play W", 0, 2, 52),
    ("play W+4 uno", 3, 5, 53),
    ("play W+10", 0, 2, 54),
    ("draw", 0, 2, 55),
    ("keep", 0, 2, 56),
    ("challenge", 0, 2, 57),
    ("accept", 0, 2, 58),
    ("colour red", 0, 2, 59),
    ("colour blue", 0, 2, 62),
    ("pass", 0, 2, 63),
    ("seat 1", 0, 2, 64),       # the next seat clockwise
    ("seat 0", 3, 4, 64),       # from the last seat, the next is seat 0
    ("seat 2", 3, 4, 66),       # three places clockwise
    ("seat 9", 0, 10, 72),      # nine places: the last index of a seat
    ("give R0", 0, 2, 73),
    ("give W+10", 0, 2, 127),
]


@pytest.mark.parametrize(("name", "seat", "players", "index"), INDICES,
                         ids=[f"{n} by seat {s} of {p}" for n, s, p, _ in INDICES])
def test_each_kind_of_action_has_its_index(name: str, seat: int, players: int, index: int
                                           ) -> None:
    assert action_index(parse_action(name), seat, players) == index


def test_a_seat_never_names_itself() -> None:
    with pytest.raises(ValueError, match="cannot choose itself"):
        action_index(parse_action("seat 2"), 2, 4)


TABLES = [
    (2, OFFICIAL), (3, OFFICIAL), (4, OFFICIAL), (7, OFFICIAL), (10, OFFICIAL),
    (2, RuleOptions(stacking=True, stack_two_on_four=True, reverse_deflects=True)),
    (4, RuleOptions(seven_o=True, exchange_on_five=True, jump_in=True, draw_ten=True)),
    (5, RuleOptions(until_the_last=True, uno_in_seven=True, colour_circle=True)),
    (3, RuleOptions(lazy_scoring=True, zero_scores_50=True, mistake_penalty=True)),
    (6, RuleOptions(stacking=True, seven_o=True, exchange_on_five=True, jump_in=True,
                    draw_ten=True, reverse_deflects=True, target_score=200)),
]


def random_decisions(env: UnoEnv, count: int, seed: int) -> Iterator[int]:
    """Stops at each of ``count`` decisions of random play, yielding the decision's number;
    a match that ends is followed by the next (``reset()``)."""
    rng = random.Random(seed)
    env.reset(seed=seed)
    for number in range(count):
        if env.match.is_over:
            assert all(env.terminations.values())
            env.reset()
        yield number
        env.step(rng.choice(sorted(env.legal_by_index())))


DECISIONS = 1500
"""Random decisions checked per table: a few matches' worth."""


@pytest.mark.parametrize(("players", "options"), TABLES,
                         ids=[f"{p} players {'+'.join(o.variants) or 'official'}"
                              for p, o in TABLES])
def test_every_legal_action_has_a_distinct_masked_index_and_maps_back(
        players: int, options: RuleOptions) -> None:
    env = UnoEnv(players, options)
    kinds: Counter[DecisionKind] = Counter()
    for _ in random_decisions(env, DECISIONS, players):
        match = env.match
        seat = match.current_seat
        legal = match.legal_actions()
        decision = match.decision
        assert decision is not None
        kinds[decision] += 1
        indices = [action_index(action, seat, players) for action in legal]
        assert len(set(indices)) == len(legal), (decision, legal, indices)
        assert all(0 <= index < ACTION_SIZE for index in indices)
        mask = env.observe(env.agent_selection)["action_mask"]
        assert np.flatnonzero(mask).tolist() == sorted(indices)
        by_index = env.legal_by_index()
        assert by_index == legal_indices(legal, seat, players)
        for action, index in zip(legal, indices, strict=True):
            assert by_index[index] == action
            if is_play(action):  # the call, made or not, is the card's index (§14)
                assert action_index(action ^ UNO_CALL, seat, players) == index
        other = env.possible_agents[(seat + 1) % players]
        assert not env.observe(other)["action_mask"].any()
    if not options.variants:
        assert set(kinds) == {DecisionKind.PLAY_OR_DRAW, DecisionKind.PLAY_DRAWN_OR_KEEP,
                              DecisionKind.CHOOSE_COLOUR, DecisionKind.CHALLENGE_OR_ACCEPT}


def test_the_house_rule_tables_reach_every_decision_kind() -> None:
    seen: set[DecisionKind] = set()
    for players, options in TABLES:
        env = UnoEnv(players, options)
        for _ in random_decisions(env, DECISIONS, players):
            decision = env.match.decision
            assert decision is not None
            seen.add(decision)
    assert seen == set(DecisionKind)


# -- the observation vector --------------------------------------------------------------------


def test_the_fields_tile_the_vector() -> None:
    assert sum([width for _, width, _ in FIELDS]) == OBSERVATION_SIZE == 212
    stops = [SLICES[name].stop for name, _, _ in FIELDS]
    starts = [SLICES[name].start for name, _, _ in FIELDS]
    assert starts == [0, *stops[:-1]]


@pytest.mark.parametrize(("players", "options"), TABLES[:1] + TABLES[6:8],
                         ids=["official", "seven-o and more", "until the last and more"])
def test_the_vector_holds_the_seats_observation(players: int, options: RuleOptions) -> None:
    env = UnoEnv(players, options)
    space = observation_space()
    for _ in random_decisions(env, 300, 21):
        match = env.match
        for agent in env.possible_agents:
            seat = env.seat_of(agent)
            seen = match.observation(seat)
            observed = env.observe(agent)
            assert space.contains(observed)
            vector = observed["observation"]
            assert vector.dtype == np.float32 and (vector <= OBSERVATION_HIGH).all()
            hand = vector[SLICES["hand"]]
            assert {face: int(hand[face]) for face in np.flatnonzero(hand)} == Counter(seen.hand)
            assert np.flatnonzero(vector[SLICES["top_card"]]).tolist() == [seen.top_card]
            assert np.flatnonzero(vector[SLICES["colour"]]).tolist() == [seen.colour]
            relative = [seen.hand_sizes[(seat + k) % players] for k in range(players)]
            assert vector[SLICES["hand_sizes"]].tolist() == relative + [0] * (10 - players)
            assert vector[SLICES["seats"]].tolist() == [1] * players + [0] * (10 - players)
            acting = np.flatnonzero(vector[SLICES["acting"]]).tolist()
            assert acting == [(seen.current_seat - seat) % players]
            decision = np.flatnonzero(vector[SLICES["decision"]]).tolist()
            assert decision == ([] if seen.decision is None else [seen.decision - 1])
            assert vector[SLICES["clockwise"]][0] == (seen.direction == 1)
            assert vector[SLICES["draw_pile"]][0] == seen.draw_pile_size
            assert vector[SLICES["discard_pile"]][0] == seen.discard_pile_size
            assert vector[SLICES["round"]][0] == pytest.approx(
                seen.round_number / options.round_limit)
            assert vector[SLICES["turn"]][0] == pytest.approx(
                min(seen.turn / options.turn_limit, 1.0))
            scores = [seen.scores[(seat + k) % players] / options.target_score
                      for k in range(players)]
            assert vector[SLICES["scores"]][:players] == pytest.approx(scores)
            assert vector[SLICES["penalty"]][0] == seen.pending_penalty
            flags = vector[SLICES["variants"]].tolist()
            assert flags == [float(name in options.variants) for name in VARIANTS]
