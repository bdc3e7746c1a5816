"""A match to the target score (docs/rules.md §4, §5, §16-§18), shaped like an OpenSpiel game.

Drive a :class:`Match` with ``current_seat`` / ``decision`` / ``legal_actions()`` /
``apply(action)`` until ``is_over``; read ``events`` for everything that happened and
``observation(seat)`` for what a seat may see. Chance (shuffles, the dealer draw) happens
inside, from the ``random.Random`` passed in and nothing else, so a seed fixes the match.
Its rounds are official :class:`~arena.rules.state.Round` s, or
:class:`~arena.rules.variants.VariantRound` s when a house rule (§21-§32) is in force.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Final, cast

from arena.rules import events as ev
from arena.rules.actions import Action, DecisionKind
from arena.rules.cards import CARD_POINTS, DEALER_DRAW_VALUE, Card, full_deck
from arena.rules.observation import Observation
from arena.rules.options import OFFICIAL, RuleOptions
from arena.rules.scoring import hand_points, lazy_places, places
from arena.rules.state import IllegalActionError, Round
from arena.rules.variants import VariantRound

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 10


class Match:
    """A match to the target score (§16-§18): the dealer draw, rounds, scoring, standing.

    With a variant on (§21-§32) its rounds are :class:`VariantRound` s and
    :meth:`_finish_variant_round` scores them; official play never goes there.
    """

    __slots__ = ("players", "options", "rng", "events", "scores", "dealer", "round",
                 "rounds_played", "is_over", "places", "round_limit_reached", "rounds_won",
                 "rounds_lost", "_variant")

    def __init__(
        self, players: int, rng: random.Random, options: RuleOptions = OFFICIAL
    ) -> None:
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ValueError(f"UNO is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
        self.players = players
        self.options = options
        self.rng = rng
        self.events: list[ev.Event] = []
        self.scores = [0] * players
        self.rounds_played = 0
        self.is_over = False
        self.places: tuple[int, ...] = ()
        self.round_limit_reached = False
        self.rounds_won = [0] * players
        """Rounds each seat went out first in (§31 ranks by them)."""
        self.rounds_lost = [0] * players
        """§31: rounds each seat ended with the most points in hand."""
        self._variant = bool(options.variants)
        self.dealer = self._draw_for_dealer()
        self.round: Round
        if self._variant:
            self.round = self._variant_round(1, None)
        else:
            self.round = Round(players, self.dealer, 1, options, rng, self.events, self.scores)

    def _variant_round(self, number: int, starter: int | None) -> VariantRound:
        return VariantRound(self.players, self.dealer, number, self.options, self.rng,
                            self.events, self.scores, starter=starter)

    def _draw_for_dealer(self) -> int:
        """§4: highest card deals; ties draw again among themselves (§28: from the deck of
        the match, +10 cards counting zero)."""
        deck = full_deck(self.options.draw_ten)
        self.rng.shuffle(deck)
        drawing = list(range(self.players))
        while True:
            if len(deck) < len(drawing):
                deck = full_deck(self.options.draw_ten)
                self.rng.shuffle(deck)
            values = {}
            for seat in drawing:
                card = deck.pop()
                self.events.append(ev.DealerDraw(seat, card))
                values[seat] = DEALER_DRAW_VALUE[card]
            best = max(values.values())
            drawing = [seat for seat in drawing if values[seat] == best]
            if len(drawing) == 1:
                self.events.append(ev.DealerChosen(drawing[0]))
                return drawing[0]

    # -- OpenSpiel-style API -----------------------------------------------------------

    @property
    def current_seat(self) -> int:
        """The seat whose decision it is; -1 when the match is over."""
        return self.round.current

    @property
    def decision(self) -> DecisionKind | None:
        return self.round.decision

    def legal_actions(self) -> list[Action]:
        return self.round.legal_actions()

    def is_legal(self, action: Action) -> bool:
        return self.round.is_legal(action)

    def apply(self, action: Action) -> None:
        """Apply the current seat's action; rounds are scored and dealt as they end."""
        if self.is_over:
            raise IllegalActionError("the match is over")
        round_ = self.round
        round_.apply(action)
        if round_.over:
            self._finish_round()

    def observation(self, seat: int) -> Observation:
        return self.round.observation(seat)

    def standing(self, disqualified: Iterable[int] = ()) -> tuple[int, ...]:
        """Each seat's place by the rules in force (§16, §17, §31), disqualified seats
        last (§20)."""
        if self.options.lazy_scoring:
            return lazy_places(self.rounds_won, self.rounds_lost, disqualified)
        return places(self.scores, self.options.alternative_scoring, disqualified)

    def penalise(self, seat: int) -> bool:
        """§32 ``mistake_penalty``: the seat draws 2 for an illegal action (the referee then
        plays its default action). False, and nothing drawn, when the variant is off, the
        match is over or the seat has gone out of the round (§29)."""
        round_ = self.round
        if self.is_over or not self.options.mistake_penalty or round_.is_out(seat):
            return False
        round_.draw_out_of_turn(seat, 2, ev.DrawReason.MISTAKE)
        return True

    # -- rounds and the end ------------------------------------------------------------

    def _finish_round(self) -> None:
        if self._variant:
            self._finish_variant_round()
            return
        round_ = self.round
        options = self.options
        scores = self.scores
        self.rounds_played += 1
        points = 0
        if not round_.stalled:
            if options.alternative_scoring:  # §17: each seat adds its own leftovers
                for seat, hand in enumerate(round_.hands):
                    scores[seat] += sum([CARD_POINTS[c] for c in hand])
            else:  # §16
                points = round_.round_points()
                scores[round_.winner] += points
        self.events.append(ev.RoundEnded(
            round_.number, round_.winner, points, tuple(scores),
            tuple(tuple(sorted(h)) for h in round_.hands), round_.stalled,
        ))
        reached = max(scores) >= options.target_score
        if reached or self.rounds_played >= options.round_limit:
            self.is_over = True
            self.round_limit_reached = not reached
            self.places = places(scores, lowest_wins=options.alternative_scoring)
            self.events.append(ev.MatchEnded(
                tuple(scores), self.places, self.rounds_played, self.round_limit_reached))
            return
        self.dealer = (self.dealer + 1) % self.players  # §5
        self.round = Round(self.players, self.dealer, self.rounds_played + 1, options,
                           self.rng, self.events, scores)

    def _finish_variant_round(self) -> None:
        """§16-§18 with the variants: §26 zero scores 50, §29 scoring from the hands when the
        first seat went out and round places, §31 winner, loser and rounds won."""
        round_ = cast(VariantRound, self.round)  # a variant match deals only these
        options = self.options
        scores = self.scores
        zero_50 = options.zero_scores_50
        self.rounds_played += 1
        number = round_.number
        stalled = round_.stalled
        winner = -1 if stalled else round_.winner
        out = round_.out
        if options.until_the_last:
            last = len(out) + 1  # the seats still holding cards share the last place
            order = {seat: place for place, seat in enumerate(out, start=1)}
            self.events.append(ev.RoundPlaces(
                number, tuple(order.get(seat, last) for seat in range(self.players))))
        points = 0
        loser = -1
        if not stalled:
            counted = round_.counted_hands or round_.hands
            if options.lazy_scoring:  # §31: no points; the most points left in hand loses
                loser = self._round_loser(round_.hands, winner)
                self.rounds_won[winner] += 1
                self.rounds_lost[loser] += 1
                scores[:] = self.rounds_won
                self.events.append(ev.RoundLoser(number, loser))
            elif options.alternative_scoring:
                for seat, hand in enumerate(counted):
                    scores[seat] += hand_points(hand, zero_50)
            else:
                points = round_.round_points()
                scores[winner] += points
        self.events.append(ev.RoundEnded(
            number, winner, points, tuple(scores),
            tuple(tuple(sorted(h)) for h in round_.hands), stalled,
        ))
        if options.lazy_scoring:  # §31: a match is `rounds` rounds
            over = self.rounds_played >= min(options.rounds, options.round_limit)
            self.round_limit_reached = over and self.rounds_played < options.rounds
        else:
            reached = max(scores) >= options.target_score
            over = reached or self.rounds_played >= options.round_limit
            self.round_limit_reached = over and not reached
        if over:
            self.is_over = True
            self.places = self.standing()
            self.events.append(ev.MatchEnded(
                tuple(scores), self.places, self.rounds_played, self.round_limit_reached))
            return
        starter = None
        if loser >= 0:  # §31: the loser deals, the winner starts
            self.dealer, starter = loser, winner
        else:
            self.dealer = (self.dealer + 1) % self.players  # §5
        self.round = self._variant_round(self.rounds_played + 1, starter)

    def _round_loser(self, hands: list[list[Card]], winner: int) -> int:
        """§31: the seat with the most points left in hand; among tied seats one still
        holding cards (§29: a seat out holds none, and "the last player loses"), then the
        first clockwise from the winner."""
        zero_50 = self.options.zero_scores_50
        n = self.players
        others = [(winner + offset) % n for offset in range(1, n)]
        return max(others, key=lambda seat: (hand_points(hands[seat], zero_50),
                                             bool(hands[seat]), -others.index(seat)))


def arrange_round(
    hands: list[list[Card]],
    draw_pile: list[Card],
    discard: list[Card],
    colour: int,
    current: int,
    *,
    direction: int = 1,
    dealer: int = 0,
    decision: DecisionKind = DecisionKind.PLAY_OR_DRAW,
    options: RuleOptions = OFFICIAL,
    rng: random.Random | None = None,
    scores: list[int] | None = None,
    events: list[ev.Event] | None = None,
    turns: int = 1,
    out: Sequence[int] = (),
    refills: Sequence[int] | None = None,
) -> Round:
    """A round in a given position, for rule tests and puzzles (the draw pile's top is last).

    Only PLAY_OR_DRAW and CHOOSE_COLOUR (after a Wild) positions can be arranged directly;
    reach the others by applying actions. With a variant on in ``options`` the round is a
    ``VariantRound``; ``out`` lists the seats already out (§29), in order, and ``refills``
    what each seat draws when it next empties its hand (§30).
    """
    if decision not in (DecisionKind.PLAY_OR_DRAW, DecisionKind.CHOOSE_COLOUR):
        raise ValueError("arrange a PLAY_OR_DRAW or CHOOSE_COLOUR position and play into others")
    if (out or refills is not None) and not options.variants:
        raise ValueError("out and refills belong to the variants (§29, §30): set the options")
    kind = VariantRound if options.variants else Round
    round_ = kind.arranged(
        hands, draw_pile, discard, colour, current, direction, dealer, decision, options,
        rng or random.Random(0), [0] * len(hands) if scores is None else scores,
        [] if events is None else events, turns,
    )
    if isinstance(round_, VariantRound):
        round_.arrange_variants(out, refills)
    return round_
