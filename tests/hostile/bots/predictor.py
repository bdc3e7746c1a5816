"""A bot that tries to work out the deals from the seed it is given.

The attack: were match seeds small public integers (a season's base seed plus the match's
index), with a seat's seed derived from the match seed, a bot could search the small seed
space for the match seed that gives its own seat seed, then deal the match itself and know
every hand and the order of the deck. This bot tries exactly that at its
first decision, reports on stderr whether it could predict its own hand, then plays greedily.
"""

from __future__ import annotations

import random
import sys
from collections import Counter

from arena.bots.policies import GreedyPolicy
from arena.bots.sdk import Turn, run
from arena.protocol.convert import rules_from_message
from arena.rules.match import Match
from arena.rules.seeds import deck_seed, seat_seed

SEARCH = 20_000
"""Match seeds tried: a season's base seed plus its index, from 0."""

state: dict[str, object] = {}


def predict(turn: Turn) -> str:
    seat, players = turn.match.seat, len(turn.match.players)
    for candidate in range(SEARCH):
        if seat_seed(candidate, seat) != turn.match.seed:
            continue
        rules = rules_from_message(turn.match.rules)
        dealt = Match(players, random.Random(deck_seed(candidate)), rules)
        hand = sorted(dealt.observation(seat).hand)
        # Before its first decision a seat may have drawn (a turned Draw Two), never played.
        if Counter(hand) <= Counter(turn.observation.hand):
            return f"prediction: match seed {candidate}, hand {hand}"
        return f"prediction: seed {candidate} matched the seat seed but not the hand"
    return f"prediction: none of {SEARCH} match seeds gives seat seed {turn.match.seed}"


def decide(turn: Turn) -> int:
    if "greedy" not in state:
        print(predict(turn), file=sys.stderr, flush=True)
        state["greedy"] = GreedyPolicy(turn.match.seed)
    policy = state["greedy"]
    assert isinstance(policy, GreedyPolicy)
    return policy.decide(turn.observation, turn.legal_actions)


if __name__ == "__main__":
    run(decide, name="predictor", version="1.0")
