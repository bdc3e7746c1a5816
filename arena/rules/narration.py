"""Plain-English lines for events, for replays in the terminal and in reports."""

from __future__ import annotations

from collections.abc import Sequence

from arena.rules import events as ev
from arena.rules.cards import Colour, card_name

_CARD_WORDS = {"S": "Skip", "R": "Reverse", "+2": "Draw Two"}
_COLOURS = ("red", "yellow", "green", "blue")


def card_words(card: int) -> str:
    """``red 7``, ``green Skip``, ``Wild``, ``Wild Draw Four``."""
    name = card_name(card)
    if name == "W":
        return "Wild"
    if name == "W+4":
        return "Wild Draw Four"
    colour = _COLOURS["RYGB".index(name[0])]
    return f"{colour} {_CARD_WORDS.get(name[1:], name[1:])}"


def _cards(cards: Sequence[int]) -> str:
    return ", ".join(card_words(c) for c in cards)


_REASONS = {
    ev.DrawReason.CHOICE: "",
    ev.DrawReason.DRAW_TWO: " (Draw Two)",
    ev.DrawReason.WILD_DRAW_FOUR: " (Wild Draw Four)",
    ev.DrawReason.CHALLENGE_GUILTY: " (caught bluffing)",
    ev.DrawReason.CHALLENGE_INNOCENT: " (lost the challenge)",
    ev.DrawReason.UNO_PENALTY: " (no UNO call)",
    ev.DrawReason.FIRST_CARD_DRAW_TWO: " (first card Draw Two)",
}


def describe(event: ev.Event, names: Sequence[str] | None = None) -> str:
    """One line for an event; ``names`` labels seats (default ``seat N``)."""

    def who(seat: int) -> str:
        return names[seat] if names and 0 <= seat < len(names) else f"seat {seat}"

    match event:
        case ev.DealerDraw(seat, card):
            return f"{who(seat)} draws {card_words(card)} for the deal"
        case ev.DealerChosen(seat):
            return f"{who(seat)} deals first"
        case ev.RoundStarted(number, dealer):
            return f"round {number}: {who(dealer)} deals"
        case ev.Dealt(seat, cards, amount):
            shown = f": {_cards(cards)}" if cards else ""
            return f"{who(seat)} is dealt {amount} cards{shown}"
        case ev.FirstCardReturned(card):
            return f"{card_words(card)} turned first goes back into the pile"
        case ev.FirstCardTurned(card):
            return f"first card: {card_words(card)}"
        case ev.Played(seat, card):
            return f"{who(seat)} plays {card_words(card)}"
        case ev.UnoCalled(seat, counted):
            return f"{who(seat)} calls UNO" + ("" if counted else " (ignored)")
        case ev.UnoCaught(seat):
            return f"{who(seat)} forgot to call UNO: draws 2"
        case ev.Drew(seat, cards, amount, reason):
            shown = f": {_cards(cards)}" if cards else ""
            return f"{who(seat)} draws {amount}{_REASONS[reason]}{shown}"
        case ev.KeptDrawnCard(seat):
            return f"{who(seat)} keeps the drawn card"
        case ev.ColourChosen(seat, colour):
            return f"{who(seat)} names {Colour(colour).name.lower()}"
        case ev.Skipped(seat):
            return f"{who(seat)} loses its turn"
        case ev.DirectionChanged(direction):
            return "play goes " + ("clockwise" if direction > 0 else "counter-clockwise")
        case ev.Reshuffled(cards):
            return f"the discards are shuffled into a new draw pile of {cards}"
        case ev.WildDrawFourAccepted(seat):
            return f"{who(seat)} accepts the Wild Draw Four"
        case ev.Challenged(challenger, offender):
            return f"{who(challenger)} challenges {who(offender)}"
        case ev.ChallengeVerdict(_, offender, guilty, hand):
            shown = f" (hand: {_cards(hand)})" if hand else ""
            verdict = "guilty" if guilty else "innocent"
            return f"the challenge finds {who(offender)} {verdict}{shown}"
        case ev.RoundEnded(number, winner, points, scores, _, stalled):
            if stalled:
                return f"round {number} stalled at the turn limit: no points; scores {[*scores]}"
            return f"round {number}: {who(winner)} goes out, scores {points}; scores {[*scores]}"
        case ev.MatchEnded(scores, places, rounds, limit):
            note = " (round limit)" if limit else ""
            return (f"match over after {rounds} rounds{note}: scores {[*scores]}, "
                    f"places {[*places]}")
    return repr(event)
