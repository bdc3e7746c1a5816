"""A linear policy: each legal action scored by weights over hand-made features, the best played.

Shared by the training script and the exported bot (``train.py --out`` copies this file
into the bot's folder), so both play by the same features. It needs the standard library
and the ``arena`` package alone, which a sandboxed Python bot can import.

Each decision of the official rules has its own features, so its own weights:

* play or draw, play the drawn card or keep it (§9): a play is scored by its card (points,
  kind), what it leaves in hand, whether it changes the colour, whether it is a Wild Draw
  Four bluff (§13), and the next seat's hand size; drawing and keeping by a bias each;
* choose a colour (§12): by the cards and points of that colour in hand;
* challenge or accept a Wild Draw Four (§13): by the offender's hand size.

A play that leaves one card is listed with the UNO call (§14) and played as listed, so the
call is always made. Ties go to the action listed first, so all-zero weights play as the
greedy sample bot plays cards; decisions of the house rules (§21-§32), which an official
match never asks, are answered with the first legal action.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from arena.rules.actions import (
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
    CARD_KIND,
    CARD_POINTS,
    CARD_RANK,
    COLOUR_COUNT,
    WILD_DRAW_FOUR,
    Kind,
)
from arena.rules.observation import Observation

FEATURES: Final = (
    # play or draw, play the drawn card or keep it
    "play: the card's points / 50",
    "play: a Skip",
    "play: a Reverse",
    "play: a Draw Two",
    "play: a Wild",
    "play: a Wild Draw Four",
    "play: cards of its colour left / hand (a wild: of the most-held colour)",
    "play: it changes the colour",
    "play: other cards of its rank left / hand",
    "play: a Wild Draw Four holding the colour in play (a bluff, §13)",
    "play: a bluff, times own hand size / 10",
    "play: an action card while the next seat holds 2 cards or fewer",
    "play: the card's points / 50 while the next seat holds 2 cards or fewer",
    "play: the next seat's hand size / 10, times an action card",
    "draw instead of playing",
    "draw: wilds held",
    "keep the drawn card",
    # choose a colour
    "colour: its cards / hand",
    "colour: its points / the hand's points",
    "colour: the most-held colour",
    # challenge or accept
    "challenge",
    "challenge: the offender's hand size / 10",
    "challenge: own hand size / 10",
)
"""The features' names, in the order of the weights."""
SIZE: Final = len(FEATURES)

ACTION_KINDS: Final = (Kind.SKIP, Kind.REVERSE, Kind.DRAW_TWO, Kind.WILD_DRAW_FOUR)
"""Kinds that cost the next seat a turn (a Reverse does with two players, §11)."""
THREATENED: Final = 2
"""The next seat is close to going out at this many cards or fewer."""
_KIND_FEATURE: Final = {Kind.SKIP: 1, Kind.REVERSE: 2, Kind.DRAW_TWO: 3, Kind.WILD: 4,
                        Kind.WILD_DRAW_FOUR: 5}
_PLAY_FEATURES: Final = 14
_DRAW, _WILDS_HELD, _KEEP = 14, 15, 16
_COLOUR_FEATURES: Final = 17
_CHALLENGE_FEATURES: Final = 20


def action_features(observation: Observation, legal: Sequence[Action]) -> list[list[float]]:
    """The feature vector of each legal action, in the order of ``legal``."""
    hand = observation.hand
    size = len(hand) or 1
    colours = [0] * (COLOUR_COUNT + 1)
    for card in hand:
        colours[CARD_COLOUR[card]] += 1
    decision = observation.decision
    rows: list[list[float]] = []
    if decision is DecisionKind.PLAY_OR_DRAW or decision is DecisionKind.PLAY_DRAWN_OR_KEEP:
        players = len(observation.hand_sizes)
        following = observation.hand_sizes[(observation.seat + observation.direction) % players]
        threatened = following <= THREATENED
        for action in legal:
            row = [0.0] * SIZE
            if action == DRAW:
                row[_DRAW] = 1.0
                row[_WILDS_HELD] = colours[COLOUR_COUNT]
            elif action == KEEP:
                row[_KEEP] = 1.0
            else:
                _play_features(row, action & ~UNO_CALL, observation, colours, size, following,
                               threatened)
            rows.append(row)
    elif decision is DecisionKind.CHOOSE_COLOUR:
        total_points = sum(CARD_POINTS[card] for card in hand) or 1
        most = max(colours[:COLOUR_COUNT])
        for action in legal:
            colour = action - CHOOSE_COLOUR
            row = [0.0] * SIZE
            row[_COLOUR_FEATURES] = colours[colour] / size
            row[_COLOUR_FEATURES + 1] = sum(
                CARD_POINTS[card] for card in hand if CARD_COLOUR[card] == colour) / total_points
            row[_COLOUR_FEATURES + 2] = float(colours[colour] == most)
            rows.append(row)
    elif decision is DecisionKind.CHALLENGE_OR_ACCEPT:
        players = len(observation.hand_sizes)
        offender = observation.hand_sizes[(observation.seat - observation.direction) % players]
        for action in legal:
            row = [0.0] * SIZE
            if action == CHALLENGE:
                row[_CHALLENGE_FEATURES] = 1.0
                row[_CHALLENGE_FEATURES + 1] = offender / 10
                row[_CHALLENGE_FEATURES + 2] = len(hand) / 10
            rows.append(row)
    else:
        rows = [[0.0] * SIZE for _ in legal]
    return rows


def _play_features(row: list[float], card: int, observation: Observation, colours: list[int],
                   size: int, following: int, threatened: bool) -> None:
    """Fill ``row`` with the features of playing ``card``."""
    kind = CARD_KIND[card]
    colour = CARD_COLOUR[card]
    hand = observation.hand
    points = CARD_POINTS[card] / 50
    row[0] = points
    if kind in _KIND_FEATURE:
        row[_KIND_FEATURE[kind]] = 1.0
    if colour < COLOUR_COUNT:
        row[6] = (colours[colour] - 1) / size
        row[7] = float(colour != observation.colour)
    else:
        row[6] = max(colours[:COLOUR_COUNT]) / size
        row[7] = 1.0
    rank = CARD_RANK[card]
    row[8] = (sum(1 for other in hand if CARD_RANK[other] == rank) - 1) / size
    if card == WILD_DRAW_FOUR and observation.colour < COLOUR_COUNT and colours[
            observation.colour]:
        row[9] = 1.0
        row[10] = len(hand) / 10
    action_card = kind in ACTION_KINDS
    if threatened:
        row[11] = float(action_card)
        row[12] = points
    if action_card:
        row[13] = following / 10


class LinearPolicy:
    """Plays the legal action of the highest score ``weights · features``, the first listed
    of the best on a tie; a policy object as ``arena.bots.policies`` defines one."""

    def __init__(self, weights: Sequence[float]) -> None:
        if len(weights) != SIZE:
            raise ValueError(f"{len(weights)} weights given for {SIZE} features")
        self.weights = [float(weight) for weight in weights]

    def scores(self, observation: Observation, legal: Sequence[Action]) -> list[float]:
        """Each legal action's score, in the order of ``legal``."""
        weights = self.weights
        return [sum(w * f for w, f in zip(weights, row, strict=True) if f)
                for row in action_features(observation, legal)]

    def decide(self, observation: Observation, legal: Sequence[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        scores = self.scores(observation, legal)
        return legal[max(range(len(legal)), key=scores.__getitem__)]


def save_weights(path: Path, weights: Sequence[float], about: dict[str, Any]) -> None:
    """Write the weights as JSON, each under its feature's name, with ``about`` (how they
    were trained) beside them."""
    document = {"features": dict(zip(FEATURES, map(float, weights), strict=True)),
                "about": about}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def load_weights(path: Path) -> list[float]:
    """The weights a ``save_weights`` file holds, in the order of ``FEATURES``."""
    features = json.loads(path.read_text(encoding="utf-8"))["features"]
    if list(features) != list(FEATURES):
        missing = sorted(set(FEATURES) - set(features))
        unknown = sorted(set(features) - set(FEATURES))
        raise ValueError(f"{path}: its features are not this policy's (missing {missing}, "
                         f"unknown {unknown}, or in another order): train again")
    return [float(features[name]) for name in FEATURES]
