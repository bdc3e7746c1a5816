"""Decision kinds and actions.

An action is a small int so that legal-move lists are cheap and easy to send on the wire:

* a card face (0-53) plays that card; ``| UNO_CALL`` adds the UNO call (§14),
* ``DRAW``, ``KEEP``, ``CHALLENGE``, ``ACCEPT``,
* ``CHOOSE_COLOUR + colour`` names a colour after a wild (§12).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

from arena.rules.cards import CARD_FACES, Card, Colour, card_name, parse_card


class DecisionKind(IntEnum):
    PLAY_OR_DRAW = 1
    """§9: play a playable card from the hand, or draw one."""
    PLAY_DRAWN_OR_KEEP = 2
    """§9: the drawn card is playable: play that card only, or keep it."""
    CHOOSE_COLOUR = 3
    """§7/§12: name the colour after a wild."""
    CHALLENGE_OR_ACCEPT = 4
    """§13: challenge a Wild Draw Four or accept it."""


UNO_CALL: Final = 64
DRAW: Final = 128
KEEP: Final = 129
CHALLENGE: Final = 130
ACCEPT: Final = 131
CHOOSE_COLOUR: Final = 132  # + Colour

Action = int


def play(card: Card, uno: bool = False) -> Action:
    return card | UNO_CALL if uno else card


def choose(colour: Colour | int) -> Action:
    return CHOOSE_COLOUR + int(colour)


def is_play(action: Action) -> bool:
    return action < DRAW


def played_card(action: Action) -> Card:
    """The card of a play action, without the UNO flag."""
    return action & ~UNO_CALL


def calls_uno(action: Action) -> bool:
    return action < DRAW and bool(action & UNO_CALL)


def chosen_colour(action: Action) -> Colour:
    return Colour(action - CHOOSE_COLOUR)


def is_valid_action_code(action: int) -> bool:
    """Whether an int is an action at all (legality is the state's business)."""
    return (0 <= (action & ~UNO_CALL) < CARD_FACES and action < DRAW) or (
        DRAW <= action < CHOOSE_COLOUR + 4
    )


_NAMES: Final = {DRAW: "draw", KEEP: "keep", CHALLENGE: "challenge", ACCEPT: "accept"}


def action_name(action: Action) -> str:
    """``play R7``, ``play W+4 uno``, ``draw``, ``keep``, ``colour blue``..."""
    if action < DRAW:
        text = "play " + card_name(action & ~UNO_CALL)
        return text + " uno" if action & UNO_CALL else text
    if action in _NAMES:
        return _NAMES[action]
    return "colour " + chosen_colour(action).name.lower()


def parse_action(text: str) -> Action:
    """Inverse of :func:`action_name`."""
    words = text.lower().split()
    if len(words) == 1 and words[0] in _NAMES.values():
        return next(code for code, name in _NAMES.items() if name == words[0])
    if len(words) == 2 and words[0] == "colour":
        return choose(Colour[words[1].upper()])
    if words and words[0] == "play" and len(words) in (2, 3):
        uno = len(words) == 3 and words[2] == "uno"
        if len(words) == 3 and not uno:
            raise ValueError(f"bad action {text!r}")
        return play(parse_card(words[1]), uno)
    raise ValueError(f"bad action {text!r}: expected e.g. 'play R7', 'play W uno', 'draw', "
                     "'keep', 'challenge', 'accept', 'colour blue'")
