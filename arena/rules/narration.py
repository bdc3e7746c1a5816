"""Plain-English lines for events and rule sets, for replays in the terminal and reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.rules import events as ev
from arena.rules.cards import Colour, card_name
from arena.rules.options import VARIANT_SECTIONS, RuleOptions

_CARD_WORDS = {"S": "Skip", "R": "Reverse", "+2": "Draw Two"}
_COLOURS = ("red", "yellow", "green", "blue")


def card_words(card: int) -> str:
    """``red 7``, ``green Skip``, ``Wild``, ``Wild Draw Four``."""
    name = card_name(card)
    if name == "W":
        return "Wild"
    if name == "W+4":
        return "Wild Draw Four"
    if name == "W+10":
        return "+10"
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
    ev.DrawReason.PENALTY: " (the pending penalty)",
    ev.DrawReason.DRAW_TEN: " (+10)",
    ev.DrawReason.REFILL: " to play on",
    ev.DrawReason.MISTAKE: " (mistake penalty)",
}

VARIANT_SUMMARIES = {
    "stacking": "a Draw Two answers a Draw Two, a Wild Draw Four a Wild Draw Four; "
                "penalties add up",
    "stack_two_on_four": "a Draw Two of the named colour also answers a Wild Draw Four",
    "reverse_deflects": "a Reverse of the colour passes a pending penalty back",
    "seven_o": "a 7 swaps hands with a chosen seat, a 0 passes every hand on",
    "exchange_on_five": "after a 5, one card is exchanged with a chosen seat",
    "jump_in": "an identical card may be played out of turn",
    "zero_scores_50": "a lone 0 left in hand scores 50",
    "colour_circle": "a Wild or Wild Draw Four moves the colour round the circle, unnamed",
    "draw_ten": "four +10 cards in a 112-card deck",
    "until_the_last": "a round goes on until one seat still holds cards",
    "uno_in_seven": "an emptied hand draws 6, then 5, ... 1 before going out",
    "lazy_scoring": "no points: rounds won and lost",
    "mistake_penalty": "an illegal action costs 2 cards instead of a strike",
}
"""One line per variant (docs/rules.md §21-§32), for reports."""


def _options(rules: RuleOptions | Mapping[str, Any]) -> RuleOptions:
    return rules if isinstance(rules, RuleOptions) else RuleOptions.from_dict(dict(rules))


def variant_lines(rules: RuleOptions | Mapping[str, Any]) -> list[str]:
    """``stacking (§21): a Draw Two answers ...`` for each variant in force."""
    options = _options(rules)
    lines = []
    for name in options.variants:
        line = f"{name} ({VARIANT_SECTIONS[name]}): {VARIANT_SUMMARIES[name]}"
        if name == "lazy_scoring":
            line += f", {options.rounds} rounds a match"
        lines.append(line)
    return lines


def describe_rules(rules: RuleOptions | Mapping[str, Any]) -> str:
    """The rule set in one line: ``official rules, target 500`` or ``house rules: stacking
    (§21), seven_o (§23); target 500``."""
    options = _options(rules)
    if options.lazy_scoring:
        goal = f"{options.rounds} rounds, lazy scoring"
    else:
        scoring = "alternative scoring (lowest wins), " if options.alternative_scoring else ""
        goal = f"{scoring}target {options.target_score}"
    if not options.variants:
        return f"official rules, {goal}"
    named = ", ".join(f"{name} ({VARIANT_SECTIONS[name]})" for name in options.variants)
    return f"house rules: {named}; {goal}"



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
        case ev.PenaltyPending(seat, total):
            return f"{who(seat)} faces a penalty of {total} cards: stack, deflect or accept"
        case ev.PenaltyAccepted(seat, total):
            return f"{who(seat)} accepts the penalty of {total} cards"
        case ev.HandsSwapped(seat, other, cards, other_cards, amount, other_amount):
            return (f"{who(seat)} swaps hands with {who(other)} ({amount} and {other_amount}"
                    f" cards now){_shown(cards, other_cards, who(seat), who(other))}")
        case ev.HandsPassed(seat, direction, _, amounts):
            way = "clockwise" if direction > 0 else "counter-clockwise"
            return (f"{who(seat)}'s 0: every hand passes {way} "
                    f"(now {' / '.join(map(str, amounts))} cards)")
        case ev.SeatChosen(seat, other):
            return f"{who(seat)} exchanges a card with {who(other)}"
        case ev.ExchangePassed(seat):
            return f"{who(seat)} passes on the exchange"
        case ev.CardsExchanged(seat, other, cards, other_cards):
            shown = (f": {_cards(cards)} for {_cards(other_cards)}"
                     if cards and other_cards else "")
            return f"{who(seat)} and {who(other)} exchange a card{shown}"
        case ev.JumpedIn(seat):
            return f"{who(seat)} jumps in"
        case ev.ColourAdvanced(seat, colour):
            return (f"{who(seat)}'s wild moves the colour round the circle to "
                    f"{Colour(colour).name.lower()}")
        case ev.WentOut(seat, place):
            return f"{who(seat)} goes out, place {place}; the round goes on"
        case ev.HandEmptied(seat, draws):
            return f"{who(seat)} empties its hand and draws {draws} to play on"
        case ev.RoundPlaces(number, places):
            return f"round {number} places: {[*places]}"
        case ev.RoundLoser(number, seat):
            return f"round {number} is lost by {who(seat)} (most points in hand); it deals next"
    return repr(event)


def _shown(cards: Sequence[int], other_cards: Sequence[int], seat: str, other: str) -> str:
    parts = []
    if cards:
        parts.append(f"{seat} holds {_cards(cards)}")
    if other_cards:
        parts.append(f"{other} holds {_cards(other_cards)}")
    return f"; {'; '.join(parts)}" if parts else ""
