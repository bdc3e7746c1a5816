"""In-process policies: what the sample bots play, used directly by tests and benchmarks.

A policy sees only what a bot sees (the §19 observation and the legal actions) and gets
its randomness from the seed it is built with. Every policy plays every variant of
docs/rules.md §21-§32 (their decisions: choose a seat, give a card, jump in, stack or accept).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from typing import Protocol

from arena.rules.actions import (
    ACCEPT,
    CHALLENGE,
    CHOOSE_COLOUR,
    CHOOSE_SEAT,
    DRAW,
    GIVE_CARD,
    KEEP,
    PASS,
    UNO_CALL,
    Action,
    DecisionKind,
)
from arena.rules.cards import (
    CARD_COLOUR,
    CARD_POINTS,
    CARD_RANK,
    DRAW_TEN,
    DRAW_TWO_RANK,
    REVERSE_RANK,
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


def fewest_cards_seat(observation: Observation, legal: Sequence[Action]) -> Action:
    """§23: the seat to swap hands with: the one holding the fewest cards (then the lowest)."""
    seats = [a for a in legal if a >= CHOOSE_SEAT and a < GIVE_CARD]
    return min(seats, key=lambda a: (observation.hand_sizes[a - CHOOSE_SEAT], a))


def card_to_give(observation: Observation, legal: Sequence[Action]) -> Action:
    """§24: the card to give away: the most points that is not a black card (those are
    worth keeping), from the colour held least."""
    counts = colour_counts(observation.hand)
    return max(legal, key=lambda a: (
        (a - GIVE_CARD) < WILD, CARD_POINTS[a - GIVE_CARD],
        -counts[CARD_COLOUR[a - GIVE_CARD]] if (a - GIVE_CARD) < WILD else 0, -a))


def answer_penalty(legal: Sequence[Action]) -> Action:
    """§21/§22: pass the penalty on when possible (a Reverse first, it costs least to lose,
    then a Draw Two, then a black card), else accept."""
    plays = [a for a in legal if a < DRAW]
    if not plays:
        return ACCEPT
    return min(plays, key=lambda a: (CARD_RANK[a & ~UNO_CALL] != REVERSE_RANK,
                                     (a & ~UNO_CALL) >= WILD, a))


def decision_rng(seed: int, observation: bytes) -> random.Random:
    """A generator for one decision, seeded from the seat's match seed and the decision's
    observation as sent on the wire: the same seat in the same situation draws the same
    numbers, so a match replays and one decision re-fed alone (``arena refeed``) is
    answered as in the match. The Python SDK's ``turn.rng``."""
    digest = hashlib.blake2b(observation, digest_size=16,
                             key=(seed % 2**64).to_bytes(8, "little")).digest()
    return random.Random(int.from_bytes(digest, "little"))


class RandomPolicy:
    """Uniform over the legal actions, drawn as the sample random bot draws them (the SDK's
    ``turn.rng``)."""

    def __init__(self, seed: int = 0) -> None:
        self._seed = seed

    def decide(self, observation: Observation, legal: Sequence[Action]) -> Action:
        from arena.protocol.wire import observation_bytes  # here: it loads gRPC's stubs

        return decision_rng(self._seed, observation_bytes(observation)).choice(legal)


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
        if decision is DecisionKind.STACK_OR_ACCEPT:
            return legal[0] if legal[0] < DRAW else ACCEPT  # stack or deflect when it can
        if decision is DecisionKind.CHOOSE_SEAT:
            return PASS if PASS in legal else fewest_cards_seat(observation, legal)
        if decision is DecisionKind.GIVE_CARD:
            return card_to_give(observation, legal)
        return legal[0]  # plays come first, sorted; DRAW / KEEP / PASS last


class StrategistPolicy:
    """The known winning heuristics.

    Sheds high points first (action cards when the next seat is close to going out), holds
    wilds until nothing else plays, names its most-held colour, never bluffs a Wild Draw
    Four, and challenges one only from a seat holding many cards (a big hand almost surely
    held the colour in play). Under the variants: passes a pending penalty on whenever it
    can (§21, §22), jumps in whenever asked (§25: a card shed and the turn taken), swaps
    hands with the seat holding the fewest cards (§23), skips exchanges (§24: a blind swap
    of one card gains nothing on average) and, when it must give, gives its costliest
    coloured card; a +10 (§28) goes before a Wild.
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
        if decision is not DecisionKind.PLAY_OR_DRAW and (
            decision is not DecisionKind.PLAY_DRAWN_OR_KEEP
        ):
            return self._decide_variant(observation, legal)
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
        draw_ten = DRAW_TEN | (plays[0] & UNO_CALL) if plays else -1
        if draw_ten in plays:
            return draw_ten
        wild = WILD | (plays[0] & UNO_CALL) if plays else -1
        if wild in plays:
            return wild
        return DRAW

    def _decide_variant(self, observation: Observation, legal: Sequence[Action]) -> Action:
        decision = observation.decision
        if decision is DecisionKind.STACK_OR_ACCEPT:
            if legal[0] < DRAW:
                return answer_penalty(legal)
            if CHALLENGE in legal:  # the Wild Draw Four's player is the seat before
                players = len(observation.hand_sizes)
                offender = (observation.seat - observation.direction) % players
                if observation.hand_sizes[offender] >= self.CHALLENGE_HAND_SIZE:
                    return CHALLENGE
            return ACCEPT
        if decision is DecisionKind.CHOOSE_SEAT:
            return PASS if PASS in legal else fewest_cards_seat(observation, legal)
        if decision is DecisionKind.GIVE_CARD:
            return card_to_give(observation, legal)
        return legal[0]  # JUMP_IN_OR_PASS: jump in


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
