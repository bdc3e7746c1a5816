"""In-process policies: what the sample bots play, used directly by tests and benchmarks.

A policy sees only what a bot sees (the §19 observation and the legal actions) and gets
its randomness from the seed it is built with.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from arena.rules.actions import (
    ACCEPT,
    CHALLENGE,
    CHOOSE_COLOUR,
    DRAW,
    KEEP,
    UNO_CALL,
    Action,
    DecisionKind,
)
from arena.rules.cards import (
    CARD_COLOUR,
    CARD_POINTS,
    CARD_RANK,
    DRAW_TWO_RANK,
    SKIP_RANK,
    WILD,
    WILD_DRAW_FOUR,
)
from arena.rules.observation import Observation


class Policy(Protocol):
    def decide(self, observation: Observation, legal: Sequence[Action]) -> Action:
        """One of ``legal`` for the decision in ``observation``."""
        ...


def colour_counts(hand: Sequence[int]) -> list[int]:
    """How many cards of each colour the hand holds (wilds not counted)."""
    counts = [0, 0, 0, 0, 0]
    for card in hand:
        counts[CARD_COLOUR[card]] += 1
    return counts[:4]


def most_held_colour(hand: Sequence[int]) -> int:
    """The colour the hand holds most of; ties go to more points, then the lower colour."""
    counts = [0, 0, 0, 0, 0]
    weight = [0, 0, 0, 0, 0]
    for card in hand:
        counts[CARD_COLOUR[card]] += 1
        weight[CARD_COLOUR[card]] += CARD_POINTS[card]
    return max(range(4), key=lambda c: (counts[c], weight[c], -c))


class RandomPolicy:
    """Uniform over the legal actions."""

    def __init__(self, seed: int = 0) -> None:
        self._choice = random.Random(seed).choice

    def decide(self, observation: Observation, legal: Sequence[Action]) -> Action:
        return self._choice(legal)


class GreedyPolicy:
    """Plays the first playable card, names its most-held colour, never challenges."""

    def __init__(self, seed: int = 0) -> None:
        pass

    def decide(self, observation: Observation, legal: Sequence[Action]) -> Action:
        decision = observation.decision
        if decision is DecisionKind.CHOOSE_COLOUR:
            return CHOOSE_COLOUR + most_held_colour(observation.hand)
        if decision is DecisionKind.CHALLENGE_OR_ACCEPT:
            return ACCEPT
        return legal[0]  # plays come first, sorted; DRAW / KEEP last


class StrategistPolicy:
    """The known winning heuristics.

    Sheds high points first (action cards when the next seat is close to going out), holds
    wilds until nothing else plays, names its most-held colour, never bluffs a Wild Draw
    Four, and challenges one only from a seat holding many cards (a big hand almost surely
    held the colour in play).
    """

    CHALLENGE_HAND_SIZE = 6

    def __init__(self, seed: int = 0) -> None:
        pass

    def decide(self, observation: Observation, legal: Sequence[Action]) -> Action:
        decision = observation.decision
        hand = observation.hand
        if decision is DecisionKind.CHOOSE_COLOUR:
            return CHOOSE_COLOUR + most_held_colour(hand)
        if decision is DecisionKind.CHALLENGE_OR_ACCEPT:
            offender = (observation.seat - observation.direction) % len(observation.hand_sizes)
            if observation.hand_sizes[offender] >= self.CHALLENGE_HAND_SIZE:
                return CHALLENGE
            return ACCEPT
        holds_colour = any(CARD_COLOUR[c] == observation.colour for c in hand)
        if decision is DecisionKind.PLAY_DRAWN_OR_KEEP:
            card = legal[0] & ~UNO_CALL
            if card == WILD_DRAW_FOUR and holds_colour:
                return KEEP
            return legal[0]
        plays = [a for a in legal if a < DRAW]
        coloured = [a for a in plays if (a & ~UNO_CALL) < WILD]
        if coloured:
            counts = colour_counts(hand)
            players = len(observation.hand_sizes)
            following = (observation.seat + observation.direction) % players
            threatened = observation.hand_sizes[following] <= 2

            def value(action: Action) -> tuple[int, int, int]:
                card = action & ~UNO_CALL
                attack = threatened and CARD_RANK[card] in (SKIP_RANK, DRAW_TWO_RANK)
                return (attack, CARD_POINTS[card], counts[CARD_COLOUR[card]])

            return max(coloured, key=value)
        wild_draw_four = WILD_DRAW_FOUR | (plays[0] & UNO_CALL) if plays else -1
        if wild_draw_four in plays and not holds_colour:
            return wild_draw_four
        wild = WILD | (plays[0] & UNO_CALL) if plays else -1
        if wild in plays:
            return wild
        return DRAW


POLICIES: dict[str, Callable[[int], Policy]] = {
    "random": RandomPolicy,
    "greedy": GreedyPolicy,
    "strategist": StrategistPolicy,
}


def make_policy(name: str, seed: int = 0) -> Policy:
    try:
        return POLICIES[name](seed)
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}") from None
