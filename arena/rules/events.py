"""The event stream of a match: everything that happens, in order, becomes the match log.

Events are small immutable tuples. Some carry private cards (a deal, a draw, a hand shown
to a challenger); :func:`seen_by` gives the copy a given seat is allowed to see (§19).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, NamedTuple


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
    PENALTY = 8
    """§21/§22: accepted a pending draw penalty (stacked, deflected or not)."""
    DRAW_TEN = 9
    """§28: hit by a +10 (or by one played as a last card)."""
    REFILL = 10
    """§30: emptied its hand before its last one: draws 6, then 5, ... and plays on."""
    MISTAKE = 11
    """§32: an illegal action costs 2 cards instead of a strike."""


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


# -- the variants' events (docs/rules.md §21-§32); never produced in official play ----------


class PenaltyPending(NamedTuple):
    """§21/§22: a draw penalty of ``total`` cards now faces ``seat`` (stack, deflect or
    accept it)."""

    seat: int
    total: int


class PenaltyAccepted(NamedTuple):
    """§21/§22: the seat draws the pending total and loses its turn."""

    seat: int
    total: int


class HandsSwapped(NamedTuple):
    """§23: a played 7 swapped ``seat``'s hand with ``other``'s. ``cards`` is the hand
    ``seat`` now holds (shown to it alone), ``other_cards`` the one ``other`` now holds
    (shown to it alone); the sizes are public."""

    seat: int
    other: int
    cards: tuple[int, ...]
    other_cards: tuple[int, ...]
    amount: int
    other_amount: int


class HandsPassed(NamedTuple):
    """§23: a played 0 passed every hand to the next seat in ``direction``. ``hands`` are
    the hands each seat now holds, each shown to its holder alone; the sizes are public."""

    seat: int
    direction: int
    hands: tuple[tuple[int, ...], ...]
    amounts: tuple[int, ...]


class SeatChosen(NamedTuple):
    """§24: after a 5, ``seat`` exchanges a card with ``other`` (each picks one, hidden)."""

    seat: int
    other: int


class ExchangePassed(NamedTuple):
    """§24: after a 5, the player chose not to exchange."""

    seat: int


class CardsExchanged(NamedTuple):
    """§24: ``seat`` gave ``cards`` to ``other`` and got ``other_cards`` back; the two see
    both cards, the others neither."""

    seat: int
    other: int
    cards: tuple[int, ...]
    other_cards: tuple[int, ...]


class JumpedIn(NamedTuple):
    """§25: the seat plays a card identical to the one just played, out of turn (its Played
    event follows)."""

    seat: int


class ColourAdvanced(NamedTuple):
    """§27: a wild card moved the colour on round the circle (no colour is named)."""

    seat: int
    colour: int


class WentOut(NamedTuple):
    """§29: the seat played its last card and is out; the round goes on without it."""

    seat: int
    place: int


class HandEmptied(NamedTuple):
    """§30: the seat emptied its hand and draws ``draws`` cards to play on (6, 5, ... 1)."""

    seat: int
    draws: int


class RoundPlaces(NamedTuple):
    """§29: the round's places, by the order of going out (1 = first out)."""

    round: int
    places: tuple[int, ...]


class RoundLoser(NamedTuple):
    """§31: the seat left with the most points in hand; it deals the next round."""

    round: int
    seat: int


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
    | RoundEnded | MatchEnded | PenaltyPending | PenaltyAccepted | HandsSwapped
    | HandsPassed | SeatChosen | ExchangePassed | CardsExchanged | JumpedIn | ColourAdvanced
    | WentOut | HandEmptied | RoundPlaces | RoundLoser
)

EVENT_TYPES: dict[str, type] = {cls.__name__: cls for cls in Event.__args__}


def seen_by(event: Event, seat: int) -> Event:
    """The event as ``seat`` may see it (§19, and §23/§24 for the variants' hands and
    cards): other seats' cards are hidden."""
    if type(event) is Dealt or type(event) is Drew:
        if event.seat != seat:
            return event._replace(cards=())
    elif type(event) is ChallengeVerdict:
        if event.challenger != seat:
            return event._replace(hand=())
    elif type(event) in _VARIANT_PRIVATE:
        hidden: Event = _VARIANT_PRIVATE[type(event)](event, seat)
        return hidden
    return event


def _swap_seen_by(event: HandsSwapped, seat: int) -> HandsSwapped:
    if seat == event.seat:
        return event._replace(other_cards=())
    if seat == event.other:
        return event._replace(cards=())
    return event._replace(cards=(), other_cards=())


def _pass_seen_by(event: HandsPassed, seat: int) -> HandsPassed:
    return event._replace(hands=tuple(hand if index == seat else ()
                                      for index, hand in enumerate(event.hands)))


def _exchange_seen_by(event: CardsExchanged, seat: int) -> CardsExchanged:
    if seat == event.seat or seat == event.other:
        return event
    return event._replace(cards=(), other_cards=())


_VARIANT_PRIVATE: dict[type, Any] = {
    HandsSwapped: _swap_seen_by, HandsPassed: _pass_seen_by, CardsExchanged: _exchange_seen_by,
}


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
