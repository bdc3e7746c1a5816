"""The official rules stay exactly as they were (docs/rules.md, "Variants": "Official play (§1-§19)
is untouched when all are off").

These digests come from an engine with no variant in it, so they are independent of the
variants' code. Each pins, for seeded matches at 2, 4 and 7 players, the SHA-256 of the
serialized event stream and of the decision sequence (seat, decision kind, legal actions,
action, and the §19 observation's official fields). With every variant off they must never
change; if one does, the official rules changed.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from arena.bots.policies import GreedyPolicy, StrategistPolicy
from arena.rules import events as ev
from arena.rules.actions import DRAW, KEEP, DecisionKind
from arena.rules.events import to_record
from arena.rules.match import Match
from arena.rules.options import OFFICIAL, RuleOptions
from arena.rules.seeds import seat_seed

# The observation fields of official play (§19); variant fields come after these.
OFFICIAL_OBSERVATION = (
    "seat", "hand", "decision", "current_seat", "top_card", "colour", "direction",
    "hand_sizes", "draw_pile_size", "discard_pile_size", "dealer", "scores", "round_number",
    "turn",
)


class UniformPolicy:
    """Uniform over the legal actions from one generator a match: the random policy the
    digests were taken with (the sample random bot draws at each decision from a
    generator seeded by its observation, so that a decision re-fed alone is answered the
    same; these pins are of the rules, not of that policy)."""

    def __init__(self, seed: int) -> None:
        self._choice = random.Random(seed).choice

    def decide(self, observation: object, legal: list[int]) -> int:
        return self._choice(legal)


def digests(players: int, seed: int, options: RuleOptions, chooser: str) -> tuple[str, str]:
    """SHA-256 of the event stream and of the decision sequence of one seeded match.

    A seat that draws a card it cannot play keeps it with the same public ``KeptDrawnCard``
    as one that could (§19: a keep seen only after a playable draw would tell the other
    seats that the drawn card matched). The pinned streams hold no such keep, so those
    appended with their draw are left out of the stream digested here: the rest and the
    decisions must match the pins, and the keeps are checked by
    ``test_a_draw_not_played_is_always_kept_in_public``."""
    match = Match(players, random.Random(seed), options)
    if chooser == "uniform":
        choosers = [random.Random(seat_seed(seed, seat)).choice for seat in range(players)]
        decide = [lambda observation, legal, c=c: c(legal) for c in choosers]
    else:
        kinds = (UniformPolicy, GreedyPolicy, StrategistPolicy)
        policies = [kinds[seat % 3](seat_seed(seed, seat)) for seat in range(players)]
        decide = [p.decide for p in policies]
    decisions = hashlib.sha256()
    kept: set[int] = set()
    while not match.is_over:
        seat = match.current_seat
        observation = match.observation(seat)
        legal = match.legal_actions()
        action = decide[seat](observation, legal)
        view = [getattr(observation, name) for name in OFFICIAL_OBSERVATION]
        view[2] = int(view[2])
        decisions.update(json.dumps([seat, view, legal, action]).encode())
        before = len(match.events)
        match.apply(action)
        kept.update(_keeps_with_their_draw(match.events, before))
    events = json.dumps([to_record(e) for index, e in enumerate(match.events)
                         if index not in kept]).encode()
    return hashlib.sha256(events).hexdigest(), decisions.hexdigest()


def _keeps_with_their_draw(events: list[ev.Event], since: int) -> set[int]:
    """The indexes of the ``KeptDrawnCard`` events that one action appended after its own
    draw by choice (a card it could not play: the seat was not asked)."""
    drew = False
    found = set()
    for index in range(since, len(events)):
        event = events[index]
        if type(event) is ev.Drew and event.reason is ev.DrawReason.CHOICE:
            drew = True
        elif type(event) is ev.KeptDrawnCard and drew:
            found.add(index)
    return found


SHORT = RuleOptions(target_score=200)

PINS = [
    # players, seed, options, chooser, events digest, decisions digest
    (2, 1, OFFICIAL, "uniform",
     "8dec4c33edd411880d1bb1820848ebb8fe0ee20372024b1c4c31d2a3dceb20a5",
     "b085121da295006cffef54f19d01538480e502cdd27488b98db9167753812757"),
    (2, 2, OFFICIAL, "policies",
     "88ee1ab0ae04da2ec37e3db352743c96b87b6bebf2ff6e55068892146b84c898",
     "57facb4fe985a2255f05334eb22d06969558ed978b5cf6401ece8f6c213041c6"),
    (4, 3, OFFICIAL, "uniform",
     "e7ba08827af8fc3067b377204adaecba1d80aa9f7bf708fe39e3f6306ec4edc9",
     "807f7c654dccb06e824327275d160c2311abec1dd4ea778b2e06d24d7f193f38"),
    (4, 4, OFFICIAL, "policies",
     "a7c8220d214c0237c70a85f188be37c797adf8452b1e7461d5b42cfae28ccc24",
     "a937131e5ee1a65e74c262a024284333070eda9cef423518e1fe8aa6b7a9884b"),
    (7, 5, SHORT, "uniform",
     "be6c072c08314da7e23196be5c1c5893a8372ddb1c5490b1b33689d4c7b1bcea",
     "c0aed8853073966af70abdf5a90c9e1642f2e404313c9ed75cf6a532de0c3853"),
    (7, 6, SHORT, "policies",
     "2ed8b26077fd9963b0b98bc2726fd3bb92f6ab70816a3fd538d72795458ead39",
     "b5aae675cbd41dbcea16669621b260894fe3b99af26cabdb0ccf0d2a1a3e65a0"),
]


@pytest.mark.parametrize(
    ("players", "seed", "options", "chooser", "events", "decisions"),
    [pytest.param(*pin, id=f"{pin[0]} players, seed {pin[1]}, {pin[3]}") for pin in PINS],
)
def test_official_streams_are_pinned(players: int, seed: int, options: RuleOptions,
                                     chooser: str, events: str, decisions: str) -> None:
    assert digests(players, seed, options, chooser) == (events, decisions)


@pytest.mark.parametrize("players", [2, 4, 7])
def test_a_draw_not_played_is_always_kept_in_public(players: int) -> None:
    """§9/§19: after a draw by choice that is not played, every other seat sees the same
    events whether the card could have been played (and was kept) or not: the draw (its
    card hidden) and a keep."""
    seen = {"playable": 0, "unplayable": 0}
    for seed in range(30):
        match = Match(players, random.Random(seed), SHORT)
        choosers = [random.Random(seat_seed(seed, seat)).choice for seat in range(players)]
        while not match.is_over:
            seat = match.current_seat
            legal = match.legal_actions()
            action = DRAW if DRAW in legal and seed % 2 else choosers[seat](legal)
            before = len(match.events)
            match.apply(action)
            if action != DRAW:
                continue
            asked = match.current_seat == seat and not match.is_over and \
                match.observation(seat).decision is DecisionKind.PLAY_DRAWN_OR_KEEP
            if asked:  # a playable card: keep it, as a seat may
                match.apply(KEEP)
            other = (seat + 1) % players
            public = [ev.seen_by(e, other) for e in match.events[before:]
                      if type(e) is not ev.Reshuffled]  # a §10 reshuffle on the way
            drawn = [e for e in public if type(e) is ev.Drew]
            if not drawn or drawn[0].amount == 0:
                continue  # nothing was left to draw: nothing to keep
            assert public[:2] == [ev.Drew(seat, (), 1, ev.DrawReason.CHOICE),
                                  ev.KeptDrawnCard(seat)], public
            seen["playable" if asked else "unplayable"] += 1
    assert seen["playable"] > 10 and seen["unplayable"] > 10, seen
