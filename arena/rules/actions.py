"""Decision kinds and actions.

An action is a small int so that legal-move lists are cheap and easy to send on the wire:

* a card face (0-54) plays that card; ``| UNO_CALL`` adds the UNO call (§14),
* ``DRAW``, ``KEEP``, ``CHALLENGE``, ``ACCEPT``, ``PASS``,
* ``CHOOSE_COLOUR + colour`` names a colour after a wild (§12),
* ``CHOOSE_SEAT + seat`` names a seat (§23 the seven's swap, §24 the exchange),
* ``GIVE_CARD + face`` gives that card in an exchange (§24).

The last three and the decision kinds from ``CHOOSE_SEAT`` on exist only under the
variants of docs/rules.md §21-§32.
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
    CHOOSE_SEAT = 5
    """§23: after a 7, the seat to swap hands with; §24: after a 5, the seat to exchange a
    card with, or pass."""
    GIVE_CARD = 6
    """§24: the card to give in an exchange (neither side sees the other's choice)."""
    JUMP_IN_OR_PASS = 7
    """§25: play the card identical to the one just played, out of turn, or pass."""
    STACK_OR_ACCEPT = 8
    """§21/§22: a draw penalty is pending on this seat: stack a draw card on it, deflect it
    with a Reverse, challenge the Wild Draw Four it ends with, or accept it."""


UNO_CALL: Final = 64
DRAW: Final = 128
KEEP: Final = 129
CHALLENGE: Final = 130
ACCEPT: Final = 131
CHOOSE_COLOUR: Final = 132  # + Colour
PASS: Final = 136
CHOOSE_SEAT: Final = 137  # + seat
GIVE_CARD: Final = 160  # + card face

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


def choose_seat(seat: int) -> Action:
    return CHOOSE_SEAT + seat


def chosen_seat(action: Action) -> int:
    return action - CHOOSE_SEAT


def give(card: Card) -> Action:
    return GIVE_CARD + card


def given_card(action: Action) -> Card:
    return action - GIVE_CARD


SEATS: Final = 10  # MAX_PLAYERS; the seat codes of CHOOSE_SEAT


def is_valid_action_code(action: int) -> bool:
    """Whether an int is an action at all (legality is the state's business)."""
    return (0 <= (action & ~UNO_CALL) < CARD_FACES and action < DRAW) or (
        DRAW <= action <= PASS
    ) or CHOOSE_SEAT <= action < CHOOSE_SEAT + SEATS or (
        GIVE_CARD <= action < GIVE_CARD + CARD_FACES
    )


_NAMES: Final = {DRAW: "draw", KEEP: "keep", CHALLENGE: "challenge", ACCEPT: "accept",
                 PASS: "pass"}


def action_name(action: Action) -> str:
    """``play R7``, ``play W+4 uno``, ``draw``, ``keep``, ``colour blue``, ``seat 2``,
    ``give R7``, ``pass``..."""
    if action < DRAW:
        text = "play " + card_name(action & ~UNO_CALL)
        return text + " uno" if action & UNO_CALL else text
    if action in _NAMES:
        return _NAMES[action]
    if action >= GIVE_CARD:
        return "give " + card_name(action - GIVE_CARD)
    if action >= CHOOSE_SEAT:
        return f"seat {action - CHOOSE_SEAT}"
    return "colour " + chosen_colour(action).name.lower()


def parse_action(text: str) -> Action:
    """Inverse of :func:`action_name`."""
    words = text.lower().split()
    if len(words) == 1 and words[0] in _NAMES.values():
        return next(code for code, name in _NAMES.items() if name == words[0])
    if len(words) == 2 and words[0] == "colour":
        return choose(Colour[words[1].upper()])
    if len(words) == 2 and words[0] == "seat" and words[1].isdigit() and int(words[1]) < SEATS:
        return choose_seat(int(words[1]))
    if len(words) == 2 and words[0] == "give":
        return give(parse_card(words[1]))
    if words and words[0] == "play" and len(words) in (2, 3):
        uno = len(words) == 3 and words[2] == "uno"
        if len(words) == 3 and not uno:
            raise ValueError(f"bad action {text!r}")
        return play(parse_card(words[1]), uno)
    raise ValueError(f"bad action {text!r}: expected e.g. 'play R7', 'play W uno', 'draw', "
                     "'keep', 'challenge', 'accept', 'colour blue', 'seat 2', 'give R7', "
                     "'pass'")
