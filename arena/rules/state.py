"""The official round (docs/rules.md §6-§15, §18-§19), shaped like an OpenSpiel game.

A :class:`Round` is one deal, driven by ``legal_actions()`` / ``apply(action)`` until
``over``; :class:`arena.rules.match.Match` plays rounds to the target score. Chance comes
only from the ``random.Random`` passed in.

Each rule is a named step (a method); :class:`arena.rules.variants.VariantRound` replaces
only the steps the house rules change: ``RETURNED_FIRST``, ``_first_player``, ``_next``,
``_other_legal``, ``_apply_other``, ``_hand_emptied``, ``_last_card_penalty``,
``_card_effect``, ``_add_penalty``, ``is_out``, ``observation`` and ``round_points``.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar, Final, Self

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
from arena.rules.observation import OFFICIAL_PLAY, Observation, new_observation
from arena.rules.options import RuleOptions

PLAY_OR_DRAW: Final = DecisionKind.PLAY_OR_DRAW
PLAY_DRAWN_OR_KEEP: Final = DecisionKind.PLAY_DRAWN_OR_KEEP
CHOOSE: Final = DecisionKind.CHOOSE_COLOUR
CHALLENGE_OR_ACCEPT: Final = DecisionKind.CHALLENGE_OR_ACCEPT
_COLOUR_ACTIONS: Final = [CHOOSE_COLOUR + c for c in range(4)]
_CHALLENGE_ACTIONS: Final = [CHALLENGE, ACCEPT]
_FIRST_CARD: Final = -1
"""In ``Round._wild``: the Wild being named was turned first (§7), not played."""


class IllegalActionError(ValueError):
    """An action that is not among the legal ones for the current decision."""


class Round:
    """One deal, from the shuffle to a seat going out (§15) or the turn limit (§18)."""

    __slots__ = (
        "players", "dealer", "number", "options", "rng", "events", "hands", "draw_pile",
        "discard", "colour", "direction", "current", "decision", "turns", "winner",
        "stalled", "over", "penalty", "_legal", "_wild", "_drawn", "_offender_guilty",
        "_penalty_player", "_scores",
    )

    RETURNED_FIRST: ClassVar[tuple[Card, ...]] = (WILD_DRAW_FOUR,)
    """§7: the cards that go back into the draw pile when turned first."""

    def __init__(
        self, players: int, dealer: int, number: int, options: RuleOptions,
        rng: random.Random, events: list[ev.Event], scores: list[int],
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
        self.stalled = self.over = False
        self.penalty = 0
        """The cards a pending draw penalty makes its seat draw (§13; §21, §22); 0: none."""
        self._legal: list[Action] | None = None
        self._wild = _FIRST_CARD
        self._drawn = -1
        self._offender_guilty = False
        self._penalty_player = -1
        if deck is None:
            deck = full_deck()
            rng.shuffle(deck)
        self.draw_pile = deck  # top of the pile is the end of the list
        events.append(ev.RoundStarted(number, dealer))
        self._deal()
        self._turn_first_card()

    @classmethod
    def arranged(
        cls, hands: list[list[Card]], draw_pile: list[Card], discard: list[Card], colour: int,
        current: int, direction: int, dealer: int, decision: DecisionKind,
        options: RuleOptions, rng: random.Random, scores: list[int], events: list[ev.Event],
        turns: int,
    ) -> Self:
        """A position, not a deal (``arena.rules.match.arrange_round``); a Wild is named."""
        round_ = cls.__new__(cls)
        round_.players = len(hands)
        round_.dealer = dealer
        round_.number = 1
        round_.options = options
        round_.rng = rng
        round_.events = events
        round_._scores = scores
        round_.hands = [list(h) for h in hands]
        round_.draw_pile = list(draw_pile)
        round_.discard = list(discard)
        round_.colour = colour
        round_.direction = direction
        round_.current = current
        round_.decision = decision
        round_.turns = turns
        round_.winner = -1
        round_.stalled = round_.over = False
        round_.penalty = 0
        round_._legal = None
        round_._wild = WILD
        round_._drawn = -1
        round_._offender_guilty = False
        round_._penalty_player = -1
        return round_

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
        """§7: the top card starts the discard pile and acts on the first player."""
        pile = self.draw_pile
        card = pile.pop()
        returned = self.RETURNED_FIRST
        while card in returned:  # back into the pile at a random place
            self.events.append(ev.FirstCardReturned(card))
            pile.insert(self.rng.randrange(len(pile) + 1), card)
            card = pile.pop()
        self.discard.append(card)
        self.events.append(ev.FirstCardTurned(card))
        self._first_card_acts(card, self._first_player())

    def _first_player(self) -> int:
        """§7: the seat left of the dealer."""
        return (self.dealer + 1) % self.players

    def _first_card_acts(self, card: Card, first: int) -> None:
        """§7: the first card's effect on the first player."""
        n = self.players
        if card == WILD:  # the first player names the colour, then plays
            self._ask_colour(first, _FIRST_CARD)
            return
        self.colour = CARD_COLOUR[card]
        rank = CARD_RANK[card]
        if rank == SKIP_RANK:
            self.events.append(ev.Skipped(first))
            self._begin_turn((first + 1) % n)
        elif rank == DRAW_TWO_RANK:
            self._draw(first, 2, ev.DrawReason.FIRST_CARD_DRAW_TWO)
            self.events.append(ev.Skipped(first))
            self._begin_turn((first + 1) % n)
        elif rank == REVERSE_RANK:
            if n > 2:  # with two players the dealer simply starts, nothing flips
                self.direction = -1
                self.events.append(ev.DirectionChanged(-1))
            self._begin_turn((first - 1) % n)  # the seat before the first (§7: the dealer)
        else:
            self._begin_turn(first)

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
        return self._other_legal(decision)

    def _other_legal(self, decision: DecisionKind | None) -> list[Action]:
        """The legal actions at a decision official play lacks: none (the round is over)."""
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
                    # playable card would tell them it matched).
                    self.events.append(ev.KeptDrawnCard(seat))
                self._begin_turn(self._next(seat))
            else:
                self._play(seat, action)
        elif decision is PLAY_DRAWN_OR_KEEP:
            if action == KEEP:
                self.events.append(ev.KeptDrawnCard(seat))
                self._begin_turn(self._next(seat))
            else:
                self._play(seat, action)
        elif decision is CHOOSE:
            self._choose_colour(seat, action - CHOOSE_COLOUR)
        elif decision is CHALLENGE_OR_ACCEPT:
            if action == CHALLENGE:
                self._challenge(seat)
            else:
                self.events.append(ev.WildDrawFourAccepted(seat))
                self._take_penalty(seat, ev.DrawReason.WILD_DRAW_FOUR)
        else:
            self._apply_other(seat, decision, action)

    def _apply_other(self, seat: int, decision: DecisionKind | None, action: Action) -> None:
        """An action at a decision official play lacks: never, as none is legal there."""

    # -- effects -----------------------------------------------------------------------

    def _next(self, seat: int) -> int:
        """The seat after ``seat`` in the direction of play."""
        return (seat + self.direction) % self.players

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
            if self._hand_emptied(seat, card):
                return
        elif left == 1 and not action & UNO_CALL:  # §14: the table catches it at once
            events.append(ev.UnoCaught(seat))
            self._draw(seat, 2, ev.DrawReason.UNO_PENALTY)
        self._card_effect(seat, card, left == 0)

    def _hand_emptied(self, seat: int, card: Card) -> bool:
        """``seat`` played its last card ``card``: True, the round is over (§15)."""
        self.winner = seat
        self._go_out(seat, card)
        return True

    def _go_out(self, seat: int, card: Card) -> None:
        """§15: the round ends; a last draw card still hits the next seat."""
        self._last_card_penalty(seat, card)
        self.over = True
        self.decision = None
        self.current = -1

    def _last_card_penalty(self, seat: int, card: Card) -> None:
        """§15: the cards a last Draw Two or Wild Draw Four makes the next seat draw."""
        if card == WILD_DRAW_FOUR:
            self._draw(self._next(seat), 4, ev.DrawReason.WILD_DRAW_FOUR)
        elif CARD_RANK[card] == DRAW_TWO_RANK:
            self._draw(self._next(seat), 2, ev.DrawReason.DRAW_TWO)

    def _card_effect(self, seat: int, card: Card, emptied: bool) -> None:
        """What ``card`` played by ``seat`` does (§8-§12); ``emptied`` never holds here (an
        emptied hand went out). The next seat is inline, not ``_next``: every play runs this."""
        if card >= WILD:
            self._ask_colour(seat, card)
            return
        n = self.players
        self.colour = CARD_COLOUR[card]
        rank = CARD_RANK[card]
        events = self.events
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

    def _ask_colour(self, seat: int, wild: Card) -> None:
        """``seat`` names the colour of ``wild`` (``_FIRST_CARD``: a Wild turned first)."""
        self.current, self.decision = seat, CHOOSE
        self._wild = wild

    def _choose_colour(self, seat: int, colour: int) -> None:
        self.colour = colour
        self.events.append(ev.ColourChosen(seat, colour))
        wild = self._wild
        if wild == _FIRST_CARD:  # §7: the seat that named it plays
            self._begin_turn(seat)
        else:
            self._after_wild(seat, wild)

    def _after_wild(self, seat: int, wild: Card) -> None:
        """A played wild's colour is set: after a Wild the next seat plays, else a penalty."""
        if wild == WILD:
            self._begin_turn(self._next(seat))
        else:
            self._add_penalty(seat, wild)

    def _add_penalty(self, seat: int, card: Card) -> None:
        """The penalty of the draw card ``seat`` played. Official play brings only a Wild
        Draw Four here (a Draw Two acts at once, in ``_card_effect``): its 4 cards wait
        on the next seat, which challenges or accepts (§13)."""
        self.penalty = 4
        self._penalty_player = seat
        self.current, self.decision = self._next(seat), CHALLENGE_OR_ACCEPT

    def _take_penalty(self, seat: int, reason: ev.DrawReason) -> None:
        """``seat`` draws the pending penalty and misses its turn."""
        total = self.penalty
        self.penalty = 0
        self._draw(seat, total, reason)
        self.events.append(ev.Skipped(seat))
        self._begin_turn(self._next(seat))

    def _challenge(self, victim: int) -> None:
        """§13: the offender shows its hand; guilty, it draws the penalty, else the
        challenger draws it and 2 more (§21: the whole pending total)."""
        events = self.events
        offender = self._penalty_player
        guilty = self._offender_guilty
        total = self.penalty
        self.penalty = 0
        events.append(ev.Challenged(victim, offender))
        events.append(
            ev.ChallengeVerdict(victim, offender, guilty, tuple(sorted(self.hands[offender])))
        )
        if guilty:  # the offender draws, the challenger plays on the named colour
            self._draw(offender, total, ev.DrawReason.CHALLENGE_GUILTY)
            self._begin_turn(victim)
        else:
            self._draw(victim, total + 2, ev.DrawReason.CHALLENGE_INNOCENT)
            events.append(ev.Skipped(victim))
            self._begin_turn(self._next(victim))

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

    def draw_out_of_turn(self, seat: int, count: int, reason: ev.DrawReason) -> None:
        """``seat`` draws outside the turn order (§32); the legal actions follow its hand."""
        self._draw(seat, count, reason)
        self._legal = None

    # -- views -------------------------------------------------------------------------

    def observation(self, seat: int) -> Observation:
        return new_observation(Observation, self._view(seat, self.current) + OFFICIAL_PLAY)

    def _view(self, seat: int, current: int) -> tuple[Any, ...]:
        """The §19 fields of ``seat``'s observation, showing ``current`` as the seat acting."""
        return (
            seat, tuple(sorted(self.hands[seat])),
            self.decision if seat == self.current else None, current,
            self.discard[-1], self.colour, self.direction, tuple(map(len, self.hands)),
            len(self.draw_pile), len(self.discard),
            self.dealer, tuple(self._scores), self.number, self.turns,
        )

    def is_out(self, seat: int) -> bool:
        """Whether ``seat`` went out while the round goes on (§29): never in official play."""
        return False

    def wild_draw_four_was_legal(self) -> bool:
        """For the challenge decision: whether the pending Wild Draw Four was legal (§13)."""
        return not self._offender_guilty

    def round_points(self) -> int:
        """§16: the points left in the other hands (what the seat that went out scores)."""
        return sum(
            [sum([CARD_POINTS[c] for c in h]) for s, h in enumerate(self.hands) if s != self.winner]
        )
