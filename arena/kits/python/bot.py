"""@BOT_NAME@: an UNO Arena bot in Python, on the arena's SDK (``arena.bots.sdk``).

It plays the first playable card, names the colour it holds most, and challenges a Wild
Draw Four only from a seat holding a big hand. Change ``decide`` to make it yours: it gets
a ``Turn`` (the observation, the legal actions, your seeded ``rng``) and returns one of
``turn.legal_actions``.
"""

from arena.bots.policies import most_held_colour
from arena.bots.sdk import Turn, run
from arena.rules import ACCEPT, CHALLENGE, CHOOSE_COLOUR, DecisionKind

NAME = "@BOT_NAME@"
VERSION = "0.1"
CHALLENGE_HAND_SIZE = 6
"""Challenge a Wild Draw Four only from a seat holding this many cards or more: a big hand
almost surely held the colour in play, so the play was a bluff (docs/rules.md §13)."""


def decide(turn: Turn) -> int:
    observation = turn.observation
    if turn.kind is DecisionKind.CHOOSE_COLOUR:
        return CHOOSE_COLOUR + most_held_colour(observation.hand)
    if turn.kind is DecisionKind.CHALLENGE_OR_ACCEPT:
        offender = (observation.seat - observation.direction) % len(observation.hand_sizes)
        return CHALLENGE if observation.hand_sizes[offender] >= CHALLENGE_HAND_SIZE else ACCEPT
    # Plays come first (one that leaves a single card calls UNO for you), then DRAW or KEEP.
    return turn.legal_actions[0]


if __name__ == "__main__":
    run(decide, name=NAME, version=VERSION)
