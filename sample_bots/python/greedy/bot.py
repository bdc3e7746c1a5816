"""A bot that plays the first playable card and names the colour it holds most of.

Under the house rules (docs/rules.md §21-§32) it stacks or deflects a pending penalty when it
can, jumps in whenever asked, swaps hands with the seat holding the fewest cards, passes
on exchanges and, when it must give a card, gives its costliest coloured one.
"""

from arena.bots.policies import card_to_give, fewest_cards_seat, most_held_colour
from arena.bots.sdk import Turn, run
from arena.rules import ACCEPT, CHOOSE_COLOUR, DRAW, DecisionKind
from arena.rules.actions import PASS
from arena.rules.options import VARIANTS


def decide(turn: Turn) -> int:
    legal = turn.legal_actions
    if turn.kind is DecisionKind.CHOOSE_COLOUR:
        return CHOOSE_COLOUR + most_held_colour(turn.observation.hand)
    if turn.kind is DecisionKind.CHALLENGE_OR_ACCEPT:
        return ACCEPT
    if turn.kind is DecisionKind.STACK_OR_ACCEPT:
        return legal[0] if legal[0] < DRAW else ACCEPT  # a card passes the penalty on
    if turn.kind is DecisionKind.CHOOSE_SEAT:
        return PASS if PASS in legal else fewest_cards_seat(turn.observation, legal)
    if turn.kind is DecisionKind.GIVE_CARD:
        return card_to_give(turn.observation, legal)
    return legal[0]  # plays are listed first; draw / keep / pass come last


if __name__ == "__main__":
    run(decide, name="greedy", version="1.0", variants=VARIANTS)
