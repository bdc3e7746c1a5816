"""A bot that plays the first playable card and names the colour it holds most of."""

from arena.bots.policies import most_held_colour
from arena.bots.sdk import Turn, run
from arena.rules import ACCEPT, CHOOSE_COLOUR, DecisionKind


def decide(turn: Turn) -> int:
    if turn.kind is DecisionKind.CHOOSE_COLOUR:
        return CHOOSE_COLOUR + most_held_colour(turn.observation.hand)
    if turn.kind is DecisionKind.CHALLENGE_OR_ACCEPT:
        return ACCEPT
    return turn.legal_actions[0]  # plays are listed first; draw / keep come last


if __name__ == "__main__":
    run(decide, name="greedy", version="1.0")
