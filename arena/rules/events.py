"""The event stream of a match: everything that happens, in order, becomes the match log.

Events are small immutable tuples. Some carry private cards (a deal, a draw, a hand shown
to a challenger); :func:`seen_by` gives the copy a given seat is allowed to see (§19).
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple


class DrawReason(IntEnum):
    CHOICE = 1
    """§9: drew instead of playing (by choice or by need)."""
    DRAW_TWO = 2
    """§11/§15: hit by a Draw Two."""
    WILD_DRAW_FOUR = 3
    """§12/§15: accepted a Wild Draw Four (or hit by one played as a last card)."""
    CHALLENGE_GUILTY = 4
    """§13: caught bluffing a Wild Draw Four."""
    CHALLENGE_INNOCENT = 5
    """§13: challenged an honest Wild Draw Four."""
    UNO_PENALTY = 6
    """§14: caught without calling UNO."""
    FIRST_CARD_DRAW_TWO = 7
    """§7: the turned card was a Draw Two."""


class DealerDraw(NamedTuple):
    """§4: a seat draws a card to decide the first dealer (public)."""

    seat: int
    card: int


class DealerChosen(NamedTuple):
    seat: int


class RoundStarted(NamedTuple):
    round: int
    dealer: int


class Dealt(NamedTuple):
    """§6: the seat's seven cards (private; others see ``amount``)."""

    seat: int
    cards: tuple[int, ...]
    amount: int


class FirstCardReturned(NamedTuple):
    """§7: a Wild Draw Four turned first goes back into the draw pile."""

    card: int


class FirstCardTurned(NamedTuple):
    card: int


class Played(NamedTuple):
    seat: int
    card: int


class UnoCalled(NamedTuple):
    """§14: ``counted`` is False for a call on a play that did not leave one card."""

    seat: int
    counted: bool


class UnoCaught(NamedTuple):
    """§14: played its next-to-last card without the call; draws 2."""

    seat: int


class Drew(NamedTuple):
    """Cards drawn (private; others see ``amount``, which may be short of what was owed, §10)."""

    seat: int
    cards: tuple[int, ...]
    amount: int
    reason: DrawReason


class KeptDrawnCard(NamedTuple):
    seat: int


class ColourChosen(NamedTuple):
    seat: int
    colour: int


class Skipped(NamedTuple):
    """The seat loses its turn (Skip, Draw Two, Wild Draw Four, two-player Reverse)."""

    seat: int


class DirectionChanged(NamedTuple):
    direction: int


class Reshuffled(NamedTuple):
    """§10: the discard pile but its top card became the new draw pile."""

    cards: int


class WildDrawFourAccepted(NamedTuple):
    seat: int


class Challenged(NamedTuple):
    challenger: int
    offender: int


class ChallengeVerdict(NamedTuple):
    """§13: the offender's hand is shown to the challenger alone."""

    challenger: int
    offender: int
    guilty: bool
    hand: tuple[int, ...]


class RoundEnded(NamedTuple):
    """§15-§18: ``winner`` is -1 for a stalled round; hands are shown for the count."""

    round: int
    winner: int
    points: int
    scores: tuple[int, ...]
    hands: tuple[tuple[int, ...], ...]
    stalled: bool


class MatchEnded(NamedTuple):
    """§16-§18: ``places`` gives each seat's final place (1 = first; ties share)."""

    scores: tuple[int, ...]
    places: tuple[int, ...]
    rounds: int
    round_limit_reached: bool


Event = (
    DealerDraw | DealerChosen | RoundStarted | Dealt | FirstCardReturned | FirstCardTurned
    | Played | UnoCalled | UnoCaught | Drew | KeptDrawnCard | ColourChosen | Skipped
    | DirectionChanged | Reshuffled | WildDrawFourAccepted | Challenged | ChallengeVerdict
    | RoundEnded | MatchEnded
)

EVENT_TYPES: dict[str, type] = {cls.__name__: cls for cls in Event.__args__}


def seen_by(event: Event, seat: int) -> Event:
    """The event as ``seat`` may see it (§19): other seats' cards are hidden."""
    if type(event) is Dealt or type(event) is Drew:
        if event.seat != seat:
            return event._replace(cards=())
    elif type(event) is ChallengeVerdict and event.challenger != seat:
        return event._replace(hand=())
    return event


def to_record(event: Event) -> dict[str, object]:
    """A JSON-ready dict: ``{"event": "Played", "seat": 1, "card": 7}``."""
    record: dict[str, object] = {"event": type(event).__name__}
    for key, value in zip(event._fields, event, strict=True):
        if key == "hands":
            record[key] = [list(hand) for hand in value]  # type: ignore[attr-defined]
        elif isinstance(value, tuple):
            record[key] = list(value)
        elif isinstance(value, IntEnum):
            record[key] = int(value)
        else:
            record[key] = value
    return record


def from_record(record: dict[str, object]) -> Event:
    """Inverse of :func:`to_record`."""
    data = dict(record)
    cls = EVENT_TYPES[str(data.pop("event"))]
    values = []
    for key in cls._fields:  # type: ignore[attr-defined]
        value = data[key]
        if key == "hands":
            value = tuple(tuple(h) for h in value)  # type: ignore[attr-defined]
        elif isinstance(value, list):
            value = tuple(value)
        elif key == "reason":
            value = DrawReason(value)  # type: ignore[arg-type]
        values.append(value)
    return cls(*values)  # type: ignore[no-any-return]
