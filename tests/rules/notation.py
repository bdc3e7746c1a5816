"""A compact notation for rule cases: a position in one line, a log in short sentences.

A position lists fields separated by ``|``::

    position("0: R7 G3 | 1: B2 Y+2 | draw: R1 W | discard: R5 | colour: red | turn: 0")

``N: cards``
    seat N's hand; ``N:`` alone is an empty hand. Seats must be listed 0..n-1.
``draw: cards`` / ``discard: cards``
    a pile written **bottom to top**, like the engine's lists: the last card of ``draw`` is
    the next card drawn, the last card of ``discard`` is the top card.
``colour: red``
    the colour in play (default: the top card's colour; required after a wild).
``turn: N``
    the seat to act (``turn: -`` once the round is over).
``direction: cw`` / ``ccw``, ``dealer: N``, ``decision: play_or_draw`` (a DecisionKind
name, or ``none``), ``turns: N`` (turns started, §18).

With a variant on (§21-§32): ``out: 2 0`` (the seats already out, in order, §29) and
``refills: 6 6 5`` (what each seat draws when it next empties its hand, §30); for checking
also ``pending: N`` (the pending draw penalty, §21/§22) and ``partner: N`` (the other seat
of an exchange under way, §24, as the seat to act sees it).

Only for checking: ``over: no`` / ``yes`` / ``stalled`` (§18), ``winner: N`` (``-`` for
none), ``points: N`` (what the winner scores, §16), ``sizes: 7 7 9`` (hand sizes),
``draw_size: N``, ``discard_size: N``.

:func:`check` compares only the fields an expected position names, so a case states just
what the rule decides. Hands are compared as multisets, piles in order.

A log is the events as short sentences (:func:`log`): ``"0 plays RS"``, ``"1 skipped"``,
``"1 draws R1 Y2 (draw_two)"``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Protocol

import pytest

from arena.rules import events as ev
from arena.rules.actions import DecisionKind, action_name, parse_action
from arena.rules.cards import NO_COLOUR, Card, Colour, card_name, full_deck, parse_cards
from arena.rules.match import Match, arrange_round
from arena.rules.options import OFFICIAL, RuleOptions
from arena.rules.state import Round
from arena.rules.variants import VariantRound

_COLOURS = {colour.name.lower(): int(colour) for colour in Colour} | {"none": NO_COLOUR}
_DIRECTIONS = {"cw": 1, "ccw": -1}


def cards(text: str) -> list[Card]:
    return parse_cards(text)


def names(hand: Iterable[Card]) -> str:
    return " ".join(card_name(c) for c in hand)


def colour_name(colour: int) -> str:
    return "none" if colour == NO_COLOUR else Colour(colour).name.lower()


def _seat(text: str) -> int:
    return -1 if text.strip() == "-" else int(text)


def parse(text: str) -> dict[str, str]:
    """Split a position into its fields (``{"0": "R7 G3", "draw": "R1 W", ...}``)."""
    fields: dict[str, str] = {}
    for part in text.split("|"):
        if not part.strip():
            continue
        key, sep, value = part.partition(":")
        if not sep:
            raise ValueError(f"field {part.strip()!r} in {text!r} needs 'name: value'")
        key = key.strip().lower()
        if key in fields:
            raise ValueError(f"field {key!r} given twice in {text!r}")
        fields[key] = value.strip()
    return fields


def _hands(fields: dict[str, str]) -> list[list[Card]]:
    seats = sorted(int(k) for k in fields if k.isdigit())
    if seats != list(range(len(seats))) or len(seats) < 2:
        raise ValueError(f"seats must be listed 0..n-1 with n >= 2, got {seats}")
    return [parse_cards(fields[str(s)]) for s in seats]


def position(
    text: str,
    *,
    options: RuleOptions = OFFICIAL,
    rng: random.Random | None = None,
    scores: list[int] | None = None,
    events: list[ev.Event] | None = None,
) -> Round:
    """A round arranged in the written position (see the module docstring)."""
    fields = parse(text)
    known = {"draw", "discard", "colour", "turn", "direction", "dealer", "decision", "turns",
             "out", "refills"}
    unknown = sorted(k for k in fields if not k.isdigit() and k not in known)
    if unknown:
        raise ValueError(f"unknown field(s) {unknown} in {text!r}")
    discard = parse_cards(fields["discard"])
    if "colour" in fields:
        colour = _COLOURS[fields["colour"].lower()]
    else:
        colour = discard[-1] // 13
        if colour >= NO_COLOUR:
            raise ValueError(f"{text!r}: name the colour in play after a wild")
    return arrange_round(
        _hands(fields),
        parse_cards(fields.get("draw", "")),
        discard,
        colour,
        int(fields.get("turn", "0")),
        direction=_DIRECTIONS[fields.get("direction", "cw")],
        dealer=int(fields.get("dealer", "0")),
        decision=DecisionKind[fields.get("decision", "play_or_draw").upper()],
        options=options,
        rng=rng,
        scores=scores,
        events=events,
        turns=int(fields.get("turns", "1")),
        out=[int(seat) for seat in fields.get("out", "").split()],
        refills=[int(n) for n in fields["refills"].split()] if "refills" in fields else None,
    )


def describe(round_: Round) -> str:
    """The full position of a round in the notation."""
    parts = [f"{seat}: {names(hand)}".rstrip() for seat, hand in enumerate(round_.hands)]
    decision = round_.decision.name.lower() if round_.decision is not None else "none"
    parts += [
        f"draw: {names(round_.draw_pile)}".rstrip(),
        f"discard: {names(round_.discard)}".rstrip(),
        f"colour: {colour_name(round_.colour)}",
        f"turn: {round_.current if round_.current >= 0 else '-'}",
        f"direction: {'cw' if round_.direction == 1 else 'ccw'}",
        f"dealer: {round_.dealer}",
        f"decision: {decision}",
        f"over: {'stalled' if round_.stalled else 'yes' if round_.over else 'no'}",
        f"winner: {round_.winner if round_.winner >= 0 else '-'}",
        f"points: {round_.round_points() if round_.winner >= 0 else '-'}",
        f"turns: {round_.turns}",
        f"sizes: {' '.join(str(len(hand)) for hand in round_.hands)}",
        f"draw_size: {len(round_.draw_pile)}",
        f"discard_size: {len(round_.discard)}",
    ]
    if isinstance(round_, VariantRound):
        acting = round_.observation(round_.current) if round_.current >= 0 else None
        parts += [
            f"pending: {round_.penalty}",
            f"out: {' '.join(map(str, round_.out))}".rstrip(),
            f"refills: {' '.join(map(str, round_.refills))}".rstrip(),
            f"partner: {acting.partner if acting else -1}",
        ]
    return " | ".join(parts)


def check(round_: Round, expected: str) -> None:
    """Assert every field named in ``expected`` (hands as multisets, piles in order)."""
    actual = parse(describe(round_))
    wrong = []
    for key, want in parse(expected).items():
        if key not in actual:
            raise ValueError(f"unknown field {key!r} in {expected!r}")
        have = actual[key]
        if key.isdigit():
            same = sorted(parse_cards(want)) == sorted(parse_cards(have))
        elif key in ("draw", "discard"):
            same = parse_cards(want) == parse_cards(have)
        else:
            same = want.lower() == have.lower()
        if not same:
            wrong.append(f"{key}: expected {want!r}, got {have!r}")
    assert not wrong, "; ".join(wrong) + f"\n  position: {describe(round_)}"


def line(event: ev.Event) -> str:
    """One event as a short sentence (hidden cards, as :func:`seen_by` leaves them, show
    as a count)."""
    match event:
        case ev.DealerDraw(seat, card):
            return f"{seat} draws {card_name(card)} for dealer"
        case ev.DealerChosen(seat):
            return f"{seat} deals"
        case ev.RoundStarted(number, dealer):
            return f"round {number}, {dealer} deals"
        case ev.Dealt(seat, dealt, amount):
            return f"{seat} dealt {names(dealt) if dealt else f'{amount} cards'}"
        case ev.FirstCardReturned(card):
            return f"{card_name(card)} returned to the pile"
        case ev.FirstCardTurned(card):
            return f"turned {card_name(card)}"
        case ev.Played(seat, card):
            return f"{seat} plays {card_name(card)}"
        case ev.UnoCalled(seat, counted):
            return f"{seat} calls UNO" + ("" if counted else ", ignored")
        case ev.UnoCaught(seat):
            return f"{seat} caught without UNO"
        case ev.Drew(seat, drawn, amount, reason):
            what = names(drawn) if drawn else ("nothing" if amount == 0 else f"{amount} cards")
            return f"{seat} draws {what} ({reason.name.lower()})"
        case ev.KeptDrawnCard(seat):
            return f"{seat} keeps"
        case ev.ColourChosen(seat, colour):
            return f"{seat} names {colour_name(colour)}"
        case ev.Skipped(seat):
            return f"{seat} skipped"
        case ev.DirectionChanged(direction):
            return f"direction {'cw' if direction == 1 else 'ccw'}"
        case ev.Reshuffled(count):
            return f"reshuffled {count} cards"
        case ev.WildDrawFourAccepted(seat):
            return f"{seat} accepts"
        case ev.Challenged(challenger, offender):
            return f"{challenger} challenges {offender}"
        case ev.ChallengeVerdict(challenger, offender, guilty, hand):
            shown = f": {names(hand)}" if hand else ""
            verdict = "guilty" if guilty else "innocent"
            return f"{offender} {verdict}, hand shown to {challenger}{shown}"
        case ev.RoundEnded(number, winner, points, scores, _hands, stalled):
            outcome = "stalled" if stalled else f"won by {winner} for {points} points"
            return f"round {number} {outcome}, scores {' '.join(map(str, scores))}"
        case ev.MatchEnded(scores, places, rounds, limit):
            end = " (round limit)" if limit else ""
            return f"match over after {rounds} rounds, places {' '.join(map(str, places))}{end}"
        case ev.PenaltyPending(seat, total):
            return f"{seat} faces {total}"
        case ev.PenaltyAccepted(seat, total):
            return f"{seat} accepts {total}"
        case ev.HandsSwapped(seat, other, mine, theirs, amount, other_amount):
            got = f": {names(mine)} / {names(theirs)}" if mine or theirs else ""
            return f"{seat} swaps hands with {other} ({amount} / {other_amount} cards){got}"
        case ev.HandsPassed(seat, direction, hands, amounts):
            shown = [names(h) if h else str(a) for h, a in zip(hands, amounts, strict=True)]
            return f"{seat}'s 0 passes hands {'cw' if direction == 1 else 'ccw'}: " + (
                " / ".join(shown))
        case ev.SeatChosen(seat, other):
            return f"{seat} exchanges with {other}"
        case ev.ExchangePassed(seat):
            return f"{seat} passes the exchange"
        case ev.CardsExchanged(seat, other, given, taken):
            shown = f": {names(given)} for {names(taken)}" if given else ""
            return f"{seat} and {other} exchange a card{shown}"
        case ev.JumpedIn(seat):
            return f"{seat} jumps in"
        case ev.ColourAdvanced(seat, colour):
            return f"{seat}'s wild moves the colour to {colour_name(colour)}"
        case ev.WentOut(seat, place):
            return f"{seat} out, place {place}"
        case ev.HandEmptied(seat, draws):
            return f"{seat} empties its hand, draws {draws}"
        case ev.RoundPlaces(number, places):
            return f"round {number} places {' '.join(map(str, places))}"
        case ev.RoundLoser(number, seat):
            return f"round {number} lost by {seat}"
    raise TypeError(f"not an event: {event!r}")


def log(events: Iterable[ev.Event]) -> list[str]:
    return [line(e) for e in events]


def run(round_: Round, actions: Sequence[str]) -> list[str]:
    """Apply the actions (``"play R7"``, ``"draw"``...) and return the log they produced."""
    start = len(round_.events)
    for action in actions:
        round_.apply(parse_action(action))
    return log(round_.events[start:])


def same_log(produced: Sequence[str], expected: Sequence[str]) -> bool:
    """Whether a log matches the expected lines, where ``*`` matches any text."""
    return len(produced) == len(expected) and all(
        fnmatchcase(have, want) if "*" in want else have == want
        for have, want in zip(produced, expected, strict=True)
    )


def legal(round_: Round) -> list[str]:
    return [action_name(a) for a in round_.legal_actions()]


@dataclass(frozen=True)
class Case:
    """One row of a rule table: a position, actions, and what must hold afterwards."""

    name: str
    before: str
    actions: Sequence[str] = ()
    after: str = ""
    log: Sequence[str] | None = None
    """The events the actions produce, in order (None: not checked); ``*`` in a line matches
    anything (for cards that come out of a reshuffle)."""
    legal: Sequence[str] | None = None
    """The legal actions afterwards (None: not checked)."""
    options: RuleOptions = field(default=OFFICIAL)

    def __post_init__(self) -> None:
        if not self.after and self.log is None and self.legal is None:
            raise ValueError(f"case {self.name!r} checks nothing")

    def check(self) -> Round:
        round_ = position(self.before, options=self.options)
        produced = run(round_, self.actions)
        if self.log is not None:
            assert same_log(produced, self.log), f"log {produced} != expected {list(self.log)}"
        if self.after:
            check(round_, self.after)
        if self.legal is not None:
            assert legal(round_) == list(self.legal), f"legal: {legal(round_)}"
        return round_


class Named(Protocol):
    @property
    def name(self) -> str: ...


def table(cases: Sequence[Named]) -> list[Any]:
    """Cases as ``pytest.param``s named after their rule: ``parametrize("case", table(CASES))``."""
    return [pytest.param(case, id=case.name) for case in cases]


def stacked_deck(top: Sequence[Card]) -> list[Card]:
    """A full 108-card deck whose first cards off the top are ``top``, in that order."""
    rest = full_deck()
    for card in top:
        rest.remove(card)
    return rest + list(reversed(top))


class StackedRandom(random.Random):
    """A generator whose first shuffles put the given decks in place (for §4 dealer draws);
    later shuffles are ordinary seeded shuffles."""

    def __init__(self, seed: int, *decks: list[Card]) -> None:
        super().__init__(seed)
        self.decks = list(decks)

    def shuffle(self, x: list[Card]) -> None:  # type: ignore[override]
        if self.decks:
            x[:] = self.decks.pop(0)
        else:
            super().shuffle(x)


# -- match-level cases (scoring and standing under the variants, §26 §29 §31 §32) ---------


def match_in(text: str, options: RuleOptions, scores: Sequence[int] = (),
             won: Sequence[int] = (), lost: Sequence[int] = (), rounds_played: int = 0
             ) -> Match:
    """A match whose current round is arranged as ``text`` (scores and §31 tallies as
    given), so that playing the round out runs the match's own scoring."""
    seats = len(_hands(parse(text)))
    match = Match(seats, random.Random(0), options)
    for tally, given in ((match.scores, scores), (match.rounds_won, won),
                         (match.rounds_lost, lost)):
        if given:
            tally[:] = given
    match.rounds_played = rounds_played
    match.events.clear()
    match.round = position(text, options=options, scores=match.scores, events=match.events)
    match.dealer = match.round.dealer
    return match


def describe_match(match: Match) -> str:
    """The match-level facts in the position notation (``scores: 0 18 | over: no``...)."""
    round_ = match.round
    parts = [
        f"scores: {' '.join(map(str, match.scores))}",
        f"won: {' '.join(map(str, match.rounds_won))}",
        f"lost: {' '.join(map(str, match.rounds_lost))}",
        f"rounds: {match.rounds_played}",
        f"over: {'yes' if match.is_over else 'no'}",
        f"places: {' '.join(map(str, match.places))}".rstrip(),
        f"dealer: {match.dealer}",
        f"starter: {getattr(round_, 'starter', (round_.dealer + 1) % match.players)}",
    ]
    return " | ".join(parts)


@dataclass(frozen=True)
class MatchCase:
    """A rule row at match level: a round position, the actions that finish it, and what
    the match then holds (``after``, in :func:`describe_match`'s fields)."""

    name: str
    before: str
    actions: Sequence[str]
    after: str
    options: RuleOptions
    scores: Sequence[int] = ()
    log: Sequence[str] | None = None
    """The events the actions produce up to the end of the round (None: not checked)."""

    def check(self) -> Match:
        match = match_in(self.before, self.options, self.scores)
        for action in self.actions:
            match.apply(parse_action(action))
        if self.log is not None:
            produced = log(match.events)
            end = next(i for i, e in enumerate(match.events) if isinstance(e, ev.RoundEnded))
            produced = produced[:end + 1]
            assert same_log(produced, self.log), f"log {produced} != {list(self.log)}"
        actual = parse(describe_match(match))
        wrong = [f"{key}: expected {want!r}, got {actual[key]!r}"
                 for key, want in parse(self.after).items() if actual[key] != want]
        assert not wrong, "; ".join(wrong) + f"\n  match: {describe_match(match)}"
        return match
