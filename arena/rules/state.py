"""The round and match state machines (RULES.md §4-§18), shaped like an OpenSpiel game.

Drive a :class:`Match` with ``current_seat`` / ``decision`` / ``legal_actions()`` /
``apply(action)`` until ``is_over``; read ``events`` for everything that happened and
``observation(seat)`` for what a seat may see. Chance (shuffles, the dealer draw) happens
inside, from the ``random.Random`` passed in and nothing else, so a seed fixes the match.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Final

from arena.rules import events as ev
from arena.rules.actions import (
    ACCEPT,
    CHALLENGE,
    CHOOSE_COLOUR,
    DRAW,
    KEEP,
    UNO_CALL,
    Action,
    DecisionKind,
    action_name,
    is_valid_action_code,
)
from arena.rules.cards import (
    CARD_COLOUR,
    CARD_FACES,
    CARD_POINTS,
    CARD_RANK,
    DEALER_DRAW_VALUE,
    DRAW_TWO_RANK,
    NO_COLOUR,
    PLAYABLE,
    REVERSE_RANK,
    SKIP_RANK,
    WILD,
    WILD_DRAW_FOUR,
    Card,
    full_deck,
)
from arena.rules.observation import Observation
from arena.rules.options import OFFICIAL, RuleOptions
from arena.rules.scoring import hand_points, lazy_places, places

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 10

PLAY_OR_DRAW: Final = DecisionKind.PLAY_OR_DRAW
PLAY_DRAWN_OR_KEEP: Final = DecisionKind.PLAY_DRAWN_OR_KEEP
CHOOSE: Final = DecisionKind.CHOOSE_COLOUR
CHALLENGE_OR_ACCEPT: Final = DecisionKind.CHALLENGE_OR_ACCEPT
_COLOUR_ACTIONS: Final = [CHOOSE_COLOUR + c for c in range(4)]
_CHALLENGE_ACTIONS: Final = [CHALLENGE, ACCEPT]

# What follows a colour choice.
_AFTER_FIRST_CARD: Final = 0
_AFTER_WILD: Final = 1
_AFTER_WILD_DRAW_FOUR: Final = 2


class IllegalActionError(ValueError):
    """An action that is not among the legal ones for the current decision."""


class Round:
    """One deal, from the shuffle to a seat going out (or the turn limit, §18)."""

    __slots__ = (
        "players", "dealer", "number", "options", "rng", "events", "hands", "draw_pile",
        "discard", "colour", "direction", "current", "decision", "turns", "winner",
        "stalled", "over", "_legal", "_after_colour", "_drawn", "_offender_guilty",
        "_scores",
    )

    def __init__(
        self,
        players: int,
        dealer: int,
        number: int,
        options: RuleOptions,
        rng: random.Random,
        events: list[ev.Event],
        scores: list[int],
        deck: list[Card] | None = None,
    ) -> None:
        self.players = players
        self.dealer = dealer
        self.number = number
        self.options = options
        self.rng = rng
        self.events = events
        self._scores = scores
        self.hands: list[list[Card]] = [[] for _ in range(players)]
        self.discard: list[Card] = []
        self.colour = NO_COLOUR
        self.direction = 1
        self.current = -1
        self.decision: DecisionKind | None = None
        self.turns = 0
        self.winner = -1
        self.stalled = False
        self.over = False
        self._legal: list[Action] | None = None
        self._after_colour = _AFTER_FIRST_CARD
        self._drawn = -1
        self._offender_guilty = False
        if deck is None:
            deck = full_deck()
            rng.shuffle(deck)
        self.draw_pile = deck  # top of the pile is the end of the list
        events.append(ev.RoundStarted(number, dealer))
        self._deal()
        self._turn_first_card()

    # -- set-up (§6, §7) ---------------------------------------------------------------

    def _deal(self) -> None:
        pile, hands, n = self.draw_pile, self.hands, self.players
        for _ in range(self.options.hand_size):
            for offset in range(1, n + 1):
                hands[(self.dealer + offset) % n].append(pile.pop())
        for offset in range(1, n + 1):
            seat = (self.dealer + offset) % n
            self.events.append(ev.Dealt(seat, tuple(hands[seat]), len(hands[seat])))

    def _turn_first_card(self) -> None:
        pile = self.draw_pile
        card = pile.pop()
        while card == WILD_DRAW_FOUR:  # §7: back into the pile at a random place
            self.events.append(ev.FirstCardReturned(card))
            pile.insert(self.rng.randrange(len(pile) + 1), card)
            card = pile.pop()
        self.discard.append(card)
        self.events.append(ev.FirstCardTurned(card))
        n = self.players
        left = (self.dealer + 1) % n
        rank = CARD_RANK[card]
        if card == WILD:
            self.current, self.decision = left, CHOOSE
            self._after_colour = _AFTER_FIRST_CARD
            return
        self.colour = CARD_COLOUR[card]
        if rank == SKIP_RANK:
            self.events.append(ev.Skipped(left))
            self._begin_turn((left + 1) % n)
        elif rank == DRAW_TWO_RANK:
            self._draw(left, 2, ev.DrawReason.FIRST_CARD_DRAW_TWO)
            self.events.append(ev.Skipped(left))
            self._begin_turn((left + 1) % n)
        elif rank == REVERSE_RANK:
            if n > 2:  # §7: with two players the dealer simply starts, nothing flips
                self.direction = -1
                self.events.append(ev.DirectionChanged(-1))
            self._begin_turn(self.dealer)
        else:
            self._begin_turn(left)

    # -- the decision loop -------------------------------------------------------------

    def _begin_turn(self, seat: int) -> None:
        self.turns += 1
        self._legal = None
        if self.turns > self.options.turn_limit:  # §18: stalled, no points
            self.stalled = self.over = True
            self.decision = None
            self.current = -1
            return
        self.current = seat
        self.decision = PLAY_OR_DRAW

    def legal_actions(self) -> list[Action]:
        """The legal actions, sorted; plays leaving one card carry the UNO call (§14).

        A fresh list: what a caller does with it cannot change the rules."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal.copy()

    def _compute_legal(self) -> list[Action]:
        decision = self.decision
        if decision is PLAY_OR_DRAW:
            hand = self.hands[self.current]
            playable = PLAYABLE[self.colour * CARD_FACES + self.discard[-1]].intersection(hand)
            legal = sorted(playable)
            if len(hand) == 2:
                legal = [card | UNO_CALL for card in legal]
            legal.append(DRAW)
            return legal
        if decision is PLAY_DRAWN_OR_KEEP:
            card = self._drawn
            if len(self.hands[self.current]) == 2:
                card |= UNO_CALL
            return [card, KEEP]
        if decision is CHOOSE:
            return list(_COLOUR_ACTIONS)
        if decision is CHALLENGE_OR_ACCEPT:
            return list(_CHALLENGE_ACTIONS)
        return []

    def is_legal(self, action: Action) -> bool:
        """Legal up to the UNO flag: a missing or needless call is legal and has its §14 cost."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if action < DRAW:
            card = action & ~UNO_CALL
            return card in legal or (card | UNO_CALL) in legal
        return action in legal

    def apply(self, action: Action) -> None:
        legal = self._legal  # fast path: the listed action; is_legal handles the UNO flag
        if (legal is None or action not in legal) and not self.is_legal(action):
            raise IllegalActionError(
                f"{action_name(action) if is_valid_action_code(action) else action} is not legal "
                f"for seat {self.current} at {self.decision!r}; legal: "
                f"{', '.join(action_name(a) for a in self.legal_actions())}"
            )
        seat = self.current
        decision = self.decision
        self._legal = None
        if decision is PLAY_OR_DRAW:
            if action == DRAW:
                drawn = self._draw(seat, 1, ev.DrawReason.CHOICE)
                if drawn:
                    card = drawn[0]
                    top = self.discard[-1]
                    if card >= WILD or CARD_COLOUR[card] == self.colour or (
                        CARD_RANK[card] == CARD_RANK[top]
                    ):
                        self._drawn = card
                        self.decision = PLAY_DRAWN_OR_KEEP
                        return
                    # §19: kept whether it could be played or not, so the other seats
                    # learn nothing of the card from the events (a keep only after a
                    # playable card told them it matched).
                    self.events.append(ev.KeptDrawnCard(seat))
                self._begin_turn((seat + self.direction) % self.players)
            else:
                self._play(seat, action)
        elif decision is PLAY_DRAWN_OR_KEEP:
            if action == KEEP:
                self.events.append(ev.KeptDrawnCard(seat))
                self._begin_turn((seat + self.direction) % self.players)
            else:
                self._play(seat, action)
        elif decision is CHOOSE:
            self._choose_colour(seat, action - CHOOSE_COLOUR)
        else:
            self._answer_wild_draw_four(seat, action == CHALLENGE)

    # -- effects -----------------------------------------------------------------------

    def _play(self, seat: int, action: Action) -> None:
        card = action & ~UNO_CALL
        hand = self.hands[seat]
        if card == WILD_DRAW_FOUR:  # §8/§13: guilty if it held the colour in play
            colour = self.colour
            self._offender_guilty = any([CARD_COLOUR[c] == colour for c in hand])
        hand.remove(card)
        self.discard.append(card)
        events = self.events
        events.append(ev.Played(seat, card))
        left = len(hand)
        if action & UNO_CALL:
            events.append(ev.UnoCalled(seat, left == 1))
        if left == 0:
            self._go_out(seat, card)
            return
        if left == 1 and not action & UNO_CALL:  # §14: the table catches it at once
            events.append(ev.UnoCaught(seat))
            self._draw(seat, 2, ev.DrawReason.UNO_PENALTY)
        n = self.players
        if card >= WILD:
            self.current, self.decision = seat, CHOOSE
            self._after_colour = _AFTER_WILD if card == WILD else _AFTER_WILD_DRAW_FOUR
            return
        self.colour = CARD_COLOUR[card]
        rank = CARD_RANK[card]
        if rank < SKIP_RANK:
            self._begin_turn((seat + self.direction) % n)
        elif rank == SKIP_RANK or (
            rank == REVERSE_RANK and n == 2 and self.options.two_player_reverse_is_skip
        ):
            skipped = (seat + self.direction) % n
            events.append(ev.Skipped(skipped))
            self._begin_turn((skipped + self.direction) % n)
        elif rank == REVERSE_RANK:
            self.direction = -self.direction
            events.append(ev.DirectionChanged(self.direction))
            self._begin_turn((seat + self.direction) % n)
        else:  # Draw Two
            victim = (seat + self.direction) % n
            self._draw(victim, 2, ev.DrawReason.DRAW_TWO)
            events.append(ev.Skipped(victim))
            self._begin_turn((victim + self.direction) % n)

    def _go_out(self, seat: int, card: Card) -> None:
        """§15: the round ends; a last Draw Two / Wild Draw Four still hits the next seat."""
        victim = (seat + self.direction) % self.players
        if card == WILD_DRAW_FOUR:
            self._draw(victim, 4, ev.DrawReason.WILD_DRAW_FOUR)
        elif CARD_RANK[card] == DRAW_TWO_RANK:
            self._draw(victim, 2, ev.DrawReason.DRAW_TWO)
        self.winner = seat
        self.over = True
        self.decision = None
        self.current = -1

    def _choose_colour(self, seat: int, colour: int) -> None:
        self.colour = colour
        self.events.append(ev.ColourChosen(seat, colour))
        after = self._after_colour
        if after == _AFTER_FIRST_CARD:  # §7: the seat left of the dealer then plays
            self._begin_turn(seat)
        elif after == _AFTER_WILD:
            self._begin_turn((seat + self.direction) % self.players)
        else:
            self.current = (seat + self.direction) % self.players
            self.decision = CHALLENGE_OR_ACCEPT

    def _answer_wild_draw_four(self, victim: int, challenge: bool) -> None:
        n, direction, events = self.players, self.direction, self.events
        offender = (victim - direction) % n
        if not challenge:
            events.append(ev.WildDrawFourAccepted(victim))
            self._draw(victim, 4, ev.DrawReason.WILD_DRAW_FOUR)
            events.append(ev.Skipped(victim))
            self._begin_turn((victim + direction) % n)
            return
        guilty = self._offender_guilty
        events.append(ev.Challenged(victim, offender))
        events.append(
            ev.ChallengeVerdict(victim, offender, guilty, tuple(sorted(self.hands[offender])))
        )
        if guilty:  # §13: the offender draws 4, the challenger plays on the named colour
            self._draw(offender, 4, ev.DrawReason.CHALLENGE_GUILTY)
            self._begin_turn(victim)
        else:
            self._draw(victim, 6, ev.DrawReason.CHALLENGE_INNOCENT)
            events.append(ev.Skipped(victim))
            self._begin_turn((victim + direction) % n)

    def _draw(self, seat: int, count: int, reason: ev.DrawReason) -> list[Card]:
        """Draw ``count`` cards from the top, reshuffling the discards when needed (§10)."""
        pile = self.draw_pile
        if len(pile) >= count:
            cards = pile[-count:]
            del pile[-count:]
            cards.reverse()
        else:
            cards = pile[::-1]
            pile.clear()
            if len(self.discard) > 1:
                top = self.discard.pop()
                pile.extend(self.discard)
                self.discard[:] = [top]
                self.rng.shuffle(pile)
                self.events.append(ev.Reshuffled(len(pile)))
                more = min(count - len(cards), len(pile))
                if more:
                    taken = pile[-more:]
                    del pile[-more:]
                    taken.reverse()
                    cards += taken
        self.hands[seat] += cards
        self.events.append(ev.Drew(seat, tuple(cards), len(cards), reason))
        return cards

    # -- views -------------------------------------------------------------------------

    def observation(self, seat: int) -> Observation:
        return Observation(
            seat,
            tuple(sorted(self.hands[seat])),
            self.decision if seat == self.current else None,
            self.current,
            self.discard[-1],
            self.colour,
            self.direction,
            tuple(map(len, self.hands)),
            len(self.draw_pile),
            len(self.discard),
            self.dealer,
            tuple(self._scores),
            self.number,
            self.turns,
        )

    def wild_draw_four_was_legal(self) -> bool:
        """For the challenge decision: whether the pending Wild Draw Four was legal (§13)."""
        return not self._offender_guilty

    def round_points(self) -> int:
        """§16: the points left in the other hands (what the seat that went out scores)."""
        return sum(
            [sum([CARD_POINTS[c] for c in h]) for s, h in enumerate(self.hands) if s != self.winner]
        )


class Match:
    """A match to the target score (§16-§18): the dealer draw, rounds, scoring, standing.

    With a variant on (§21-§32) its rounds are :class:`arena.rules.variants.VariantRound`
    and :meth:`_finish_variant_round` scores them; official play never goes there.
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
        if self._variant:
            self.round = self._variant_round(1, None)
        else:
            self.round = Round(players, self.dealer, 1, options, rng, self.events, self.scores)

    def _variant_round(self, number: int, starter: int | None) -> Round:
        from arena.rules.variants import VariantRound  # it builds on Round, in this module

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
        if self.is_over or not self.options.mistake_penalty or seat in getattr(
            round_, "out", ()
        ):
            return False
        round_._draw(seat, 2, ev.DrawReason.MISTAKE)
        round_._legal = None  # the hand changed: UNO flags, cards to give
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
        round_ = self.round
        options = self.options
        scores = self.scores
        zero_50 = options.zero_scores_50
        self.rounds_played += 1
        number = round_.number
        stalled = round_.stalled
        winner = -1 if stalled else round_.winner
        out: list[int] = getattr(round_, "out", [])
        if options.until_the_last:
            last = len(out) + 1  # the seats still holding cards share the last place
            order = {seat: place for place, seat in enumerate(out, start=1)}
            self.events.append(ev.RoundPlaces(
                number, tuple(order.get(seat, last) for seat in range(self.players))))
        points = 0
        loser = -1
        if not stalled:
            counted = getattr(round_, "counted_hands", None) or round_.hands
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
        holding cards (§29: a seat out holds none, and "the last player loses"; review,
        stop 38), then the first clockwise from the winner."""
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
    round_: Round
    if options.variants:
        from arena.rules.variants import VariantRound

        variant = VariantRound.__new__(VariantRound)
        variant._setup(len(hands), options, (dealer + 1) % len(hands))
        for seat in out:
            variant.out.append(seat)
            variant._is_out[seat] = True
        if out:
            variant.winner = out[0]
        if refills is not None:
            variant.refills = list(refills)
        round_ = variant
    else:
        round_ = Round.__new__(Round)
    round_.players = len(hands)
    round_.dealer = dealer
    round_.number = 1
    round_.options = options
    round_.rng = rng or random.Random(0)
    round_.events = [] if events is None else events
    round_._scores = [0] * len(hands) if scores is None else scores
    round_.hands = [list(h) for h in hands]
    round_.draw_pile = list(draw_pile)
    round_.discard = list(discard)
    round_.colour = colour
    round_.direction = direction
    round_.current = current
    round_.decision = decision
    round_.turns = turns
    if not out:
        round_.winner = -1
    round_.stalled = False
    round_.over = False
    round_._legal = None
    round_._after_colour = _AFTER_WILD
    round_._drawn = -1
    round_._offender_guilty = False
    return round_
