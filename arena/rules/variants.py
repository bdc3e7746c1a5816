"""The round under house rules (docs/rules.md §21-§32): the official round with variants on.

:class:`~arena.rules.match.Match` deals a :class:`VariantRound` only when some variant is in
force, so official play keeps the plain :class:`~arena.rules.state.Round` and its speed;
here every variant is a flag computed once per round, and each method either replaces one
of the official round's named steps or is a step only the variants have.

How the variants fit the one-decision-at-a-time shape of the engine:

* A played card's *effect* (skip, reverse, draw, colour, swap, exchange) is resolved after
  a **jump-in window** (§25): the seats holding an identical card are asked, one at a
  time, in the direction of play from the player (the player last). A seat that jumps in
  plays its card and the covered card's effect never happens: the jumper's replaces it.
  Seats without an identical card are not asked; while a seat is asked, the others'
  observations still show the player as the seat being waited for, so they learn nothing.
* With ``stacking`` or ``reverse_deflects`` a Draw Two, Wild Draw Four or +10 leaves a
  **pending penalty** on the next seat (§21, §22): it answers with a STACK_OR_ACCEPT
  decision (stack, deflect with a Reverse, challenge the Wild Draw Four on top, or accept
  the total). Without them, draw cards act at once as in official play.
* The seven's swap (§23) and the exchange on a 5 (§24) are CHOOSE_SEAT and GIVE_CARD
  decisions; the exchange's two GIVE_CARD decisions come one after the other, neither
  observation showing the other's choice.
* ``until_the_last`` (§29) takes a seat that goes out out of play: it is skipped, never
  asked again (its last wild names no colour) and never draws.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from arena.rules import events as ev
from arena.rules.actions import (
    ACCEPT,
    CHALLENGE,
    CHOOSE_SEAT,
    GIVE_CARD,
    PASS,
    UNO_CALL,
    Action,
    DecisionKind,
)
from arena.rules.cards import (
    CARD_COLOUR,
    CARD_RANK,
    DRAW_TEN,
    DRAW_TWO_RANK,
    REVERSE_RANK,
    SKIP_RANK,
    WILD,
    WILD_DRAW_FOUR,
    Card,
    Colour,
    coloured,
    full_deck,
)
from arena.rules.observation import Observation, new_observation
from arena.rules.options import RuleOptions
from arena.rules.scoring import hand_points
from arena.rules.state import Round

CHOOSE_A_SEAT: Final = DecisionKind.CHOOSE_SEAT
GIVE_A_CARD: Final = DecisionKind.GIVE_CARD
JUMP_IN_OR_PASS: Final = DecisionKind.JUMP_IN_OR_PASS
STACK_OR_ACCEPT: Final = DecisionKind.STACK_OR_ACCEPT

FIRST_REFILL: Final = 6
"""§30: cards drawn the first time a seat empties its hand (then 5, ... down to 1)."""
COLOUR_CIRCLE: Final = (Colour.RED, Colour.BLUE, Colour.GREEN, Colour.YELLOW)
"""§27: the order of the colours printed on the wild cards, clockwise."""
WILD_DRAW_FOUR_RANK: Final = CARD_RANK[WILD_DRAW_FOUR]
DRAW_TEN_RANK: Final = CARD_RANK[DRAW_TEN]
PENALTY_OF: Final = {DRAW_TWO_RANK: 2, WILD_DRAW_FOUR_RANK: 4, DRAW_TEN_RANK: 10}
"""Cards a draw card makes the next seat draw, by rank (§11, §12, §28)."""
_OWN_REASON: Final = {DRAW_TWO_RANK: ev.DrawReason.DRAW_TWO,
                      WILD_DRAW_FOUR_RANK: ev.DrawReason.WILD_DRAW_FOUR,
                      DRAW_TEN_RANK: ev.DrawReason.DRAW_TEN}

# What a CHOOSE_SEAT decision is for.
_SWAP: Final = 1  # §23, after a 7
_EXCHANGE: Final = 2  # §24, after a 5
_NOT_COVERING: Final = (-1, -1, False)


class VariantRound(Round):
    """One deal under the house rules in ``options`` (some variant is on)."""

    __slots__ = (
        "starter", "penalty_rank", "out", "refills", "counted_hands", "_is_out", "_window",
        "_covered", "_seat_purpose", "_partner", "_exchange_player", "_gift", "_variants",
        "_pending_mode", "_stacking", "_two_on_four", "_deflects", "_seven_o", "_exchange",
        "_jump_in", "_circle", "_until_last", "_refill_on", "_zero_50",
    )

    RETURNED_FIRST = (WILD_DRAW_FOUR, DRAW_TEN)
    """§7; §28: a +10 turned first goes back like a Wild Draw Four."""

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
        starter: int | None = None,
    ) -> None:
        self._setup(players, options, (dealer + 1) % players if starter is None else starter)
        if deck is None:
            deck = full_deck(options.draw_ten)
            rng.shuffle(deck)
        super().__init__(players, dealer, number, options, rng, events, scores, deck)

    def _setup(self, players: int, options: RuleOptions, starter: int) -> None:
        """The variants' state and flags, set before the deal."""
        self.starter = starter
        self.penalty_rank = -1
        """The rank of the last draw card of the pending penalty: what answers it."""
        self.out: list[int] = []
        """§29: the seats that went out, in order."""
        self._is_out = [False] * players
        self.refills = [FIRST_REFILL] * players if options.uno_in_seven else []
        self.counted_hands: tuple[tuple[Card, ...], ...] | None = None
        """§29: the hands when the first seat went out (what it scores for)."""
        self._window: list[int] = []
        self._covered = _NOT_COVERING
        self._seat_purpose = 0
        self._partner = -1
        self._exchange_player = -1
        self._gift = -1
        self._variants = options.variants
        self._stacking = options.stacking
        self._two_on_four = options.stack_two_on_four
        self._deflects = options.reverse_deflects
        self._pending_mode = options.stacking or options.reverse_deflects
        self._seven_o = options.seven_o
        self._exchange = options.exchange_on_five
        self._jump_in = options.jump_in
        self._circle = options.colour_circle
        self._until_last = options.until_the_last
        self._refill_on = options.uno_in_seven
        self._zero_50 = options.zero_scores_50

    def arrange_variants(self, out: Sequence[int], refills: Sequence[int] | None) -> None:
        """For an arranged position: the variants' state, with ``out`` the seats already
        out, in order (§29), and ``refills`` what each seat draws when it next empties its
        hand (§30; None: the opening refills)."""
        self._setup(self.players, self.options, (self.dealer + 1) % self.players)
        for seat in out:
            self.out.append(seat)
            self._is_out[seat] = True
        if out:
            self.winner = out[0]
        if refills is not None:
            self.refills = list(refills)

    def _first_player(self) -> int:
        """§7's seat left of the dealer; §31: the last round's winner."""
        return self.starter

    # -- seats -------------------------------------------------------------------------

    def _next(self, seat: int) -> int:
        """The next seat in the direction of play, skipping seats that went out (§29)."""
        n, direction, out = self.players, self.direction, self._is_out
        seat = (seat + direction) % n
        while out[seat]:
            seat = (seat + direction) % n
        return seat

    def in_play(self) -> int:
        """Seats still in the round (§29)."""
        return self.players - len(self.out)

    def is_out(self, seat: int) -> bool:
        """Whether ``seat`` went out while the round goes on (§29)."""
        return seat in self.out

    # -- legal actions -----------------------------------------------------------------

    def _other_legal(self, decision: DecisionKind | None) -> list[Action]:
        if decision is STACK_OR_ACCEPT:
            return self._penalty_answers()
        if decision is JUMP_IN_OR_PASS:
            card = self._covered[1]
            if len(self.hands[self.current]) == 2:
                card |= UNO_CALL
            return [card, PASS]
        if decision is CHOOSE_A_SEAT:
            seat = self.current
            seats = [CHOOSE_SEAT + other for other in self._seat_choices(seat)]
            return [PASS, *seats] if self._seat_purpose == _EXCHANGE else seats
        if decision is GIVE_A_CARD:
            return [GIVE_CARD + card for card in sorted(set(self.hands[self.current]))]
        return []

    def _seat_choices(self, seat: int) -> list[int]:
        """§23: any other seat still in play; §24: one that holds a card to give."""
        hands, out = self.hands, self._is_out
        exchange = self._seat_purpose == _EXCHANGE
        return [other for other in range(self.players)
                if other != seat and not out[other] and (hands[other] or not exchange)]

    def _penalty_answers(self) -> list[Action]:
        """§21/§22: the cards that answer the pending penalty, then challenge, accept."""
        hand = self.hands[self.current]
        rank = self.penalty_rank
        answers: set[Card] = set()
        if self._stacking:
            if rank == DRAW_TWO_RANK:
                answers.update([c for c in hand if CARD_RANK[c] == DRAW_TWO_RANK])
            elif rank == WILD_DRAW_FOUR_RANK:
                if WILD_DRAW_FOUR in hand:
                    answers.add(WILD_DRAW_FOUR)
                two = coloured(self.colour, DRAW_TWO_RANK)
                if self._two_on_four and two in hand:
                    answers.add(two)
            elif DRAW_TEN in hand:  # §28: a +10 answers only a +10
                answers.add(DRAW_TEN)
        if self._deflects and rank != DRAW_TEN_RANK:
            reverse = coloured(self.colour, REVERSE_RANK)
            if reverse in hand:
                answers.add(reverse)
        legal = sorted(answers)
        if len(hand) == 2:
            legal = [card | UNO_CALL for card in legal]
        if self.discard[-1] == WILD_DRAW_FOUR and not self._is_out[self._penalty_player]:
            legal.append(CHALLENGE)  # §21: only the last Wild Draw Four, only by its victim
        legal.append(ACCEPT)
        return legal

    # -- the decisions only the variants have ------------------------------------------

    def _apply_other(self, seat: int, decision: DecisionKind | None, action: Action) -> None:
        if decision is STACK_OR_ACCEPT:
            if action == ACCEPT:
                self.events.append(ev.PenaltyAccepted(seat, self.penalty))
                self._take_penalty(seat, ev.DrawReason.PENALTY)
            elif action == CHALLENGE:
                self._challenge(seat)
            else:
                self._play(seat, action)
        elif decision is JUMP_IN_OR_PASS:
            if action == PASS:
                self._ask_next_jumper()
            else:
                self.events.append(ev.JumpedIn(seat))
                self._window = []
                self._covered = _NOT_COVERING
                self._play(seat, action)
        elif decision is CHOOSE_A_SEAT:
            self._seat_chosen(seat, action)
        else:
            self._card_given(seat, action - GIVE_CARD)

    # -- a seat's last card ------------------------------------------------------------

    def _hand_emptied(self, seat: int, card: Card) -> bool:
        """``seat`` played its last card: True when that ends the round (§15), False when
        it draws its refill and plays on (§30) or the round goes on without it (§29)."""
        refills = self.refills
        if self._refill_on and refills[seat]:
            count = refills[seat]
            refills[seat] = count - 1
            self.events.append(ev.HandEmptied(seat, count))
            self._draw(seat, count, ev.DrawReason.REFILL)
            return False
        if not self._until_last:
            return super()._hand_emptied(seat, card)
        self._is_out[seat] = True
        self.out.append(seat)
        self.events.append(ev.WentOut(seat, len(self.out)))
        if self.in_play() > 1:
            if self.winner < 0:  # §29: the first out scores from the hands as they are
                self.winner = seat
                self.counted_hands = tuple(tuple(hand) for hand in self.hands)
            return False
        if self.winner < 0:  # out first and last (two seats): §15 as in official play,
            self.winner = seat  # the cards its last draw card deals count
        self._go_out(seat, card)
        return True

    def _last_card_penalty(self, seat: int, card: Card) -> None:
        """§15: a last draw card still hits the next seat, with any pending penalty (§21);
        a last Reverse that deflects (§22) still passes the pending penalty on."""
        rank = CARD_RANK[card]
        pending = self.penalty
        if rank == REVERSE_RANK and pending:
            self.direction = -self.direction
            self.events.append(ev.DirectionChanged(self.direction))
        elif rank not in PENALTY_OF:
            return
        total = pending + PENALTY_OF.get(rank, 0)
        self.penalty = 0
        reason = ev.DrawReason.PENALTY if pending else _OWN_REASON[rank]
        self._draw(self._next(seat), total, reason)

    # -- §25: jump-in --------------------------------------------------------------------

    def _card_effect(self, seat: int, card: Card, emptied: bool) -> None:
        """The seats holding the same card may jump in before it takes effect (§25)."""
        if self._jump_in and card != WILD_DRAW_FOUR and self._open_window(seat, card, emptied):
            return
        self._resolve(seat, card, emptied)

    def _open_window(self, seat: int, card: Card, emptied: bool) -> bool:
        """Ask the seats holding ``card`` whether they jump in: True if one is asked."""
        n, direction, hands = self.players, self.direction, self.hands
        queue = []
        other = seat
        for _ in range(n - 1):
            other = (other + direction) % n
            if card in hands[other]:
                queue.append(other)
        if card in hands[seat]:  # the player last, for its second identical card
            queue.append(seat)
        if not queue:
            return False
        self._covered = (seat, card, emptied)
        self._window = queue
        self._ask_next_jumper()
        return True

    def _ask_next_jumper(self) -> None:
        if self._window:
            self.current = self._window.pop(0)
            self.decision = JUMP_IN_OR_PASS
            return
        seat, card, emptied = self._covered  # nobody jumped in: the card takes effect
        self._covered = _NOT_COVERING
        self._resolve(seat, card, emptied)

    # -- effects -----------------------------------------------------------------------

    def _resolve(self, seat: int, card: Card, emptied: bool) -> None:
        """The effect of ``card`` played by ``seat`` (once no seat jumped in on it)."""
        if card >= WILD:
            if self._circle and card != DRAW_TEN:  # §27 names the Wild and Wild Draw Four only
                self._advance_colour(seat)
                self._after_wild(seat, card)
            elif self._is_out[seat]:  # §29: a seat that went out names no colour
                self._after_wild(seat, card)
            else:
                self._ask_colour(seat, card)
            return
        self.colour = CARD_COLOUR[card]
        rank = CARD_RANK[card]
        events = self.events
        if self.penalty:  # the card answers a pending penalty: a stack or a deflection
            if rank == REVERSE_RANK:  # §22: back to the seat that passed it on
                self.direction = -self.direction
                events.append(ev.DirectionChanged(self.direction))
                self._penalty_on(self._next(seat))
            else:
                self._add_penalty(seat, card)
            return
        if rank < SKIP_RANK:
            if not emptied:  # §23: a 7 or 0 played as the last card swaps nothing
                if rank == 7 and self._seven_o:
                    self._ask_seat(seat, _SWAP)
                    return
                if rank == 0 and self._seven_o:
                    self._pass_hands(seat)
                elif rank == 5 and self._exchange:
                    self._seat_purpose = _EXCHANGE
                    if self._seat_choices(seat):
                        self._ask_seat(seat, _EXCHANGE)
                        return
            self._begin_turn(self._next(seat))
        elif rank == SKIP_RANK or (
            rank == REVERSE_RANK and self.in_play() == 2
            and self.options.two_player_reverse_is_skip
        ):
            skipped = self._next(seat)
            events.append(ev.Skipped(skipped))
            self._begin_turn(self._next(skipped))
        elif rank == REVERSE_RANK:
            self.direction = -self.direction
            events.append(ev.DirectionChanged(self.direction))
            self._begin_turn(self._next(seat))
        else:
            self._add_penalty(seat, card)

    def _advance_colour(self, seat: int) -> None:
        """§27: the colour moves one step round the circle, with the direction of play."""
        step = COLOUR_CIRCLE.index(Colour(self.colour)) + self.direction
        self.colour = int(COLOUR_CIRCLE[step % len(COLOUR_CIRCLE)])
        self.events.append(ev.ColourAdvanced(seat, self.colour))

    # -- draw penalties (§11, §12, §13, §21, §22, §28) -----------------------------------

    def _add_penalty(self, seat: int, card: Card) -> None:
        """A draw card takes effect: at once (as in official play), or pending on the next
        seat (§21, §22)."""
        rank = CARD_RANK[card]
        target = self._next(seat)
        self.penalty_rank = rank
        if not self._pending_mode:
            if card == WILD_DRAW_FOUR and not self._is_out[seat]:
                super()._add_penalty(seat, card)  # §13: challenged or accepted
                return
            self._draw(target, PENALTY_OF[rank], _OWN_REASON[rank])
            self.events.append(ev.Skipped(target))
            self._begin_turn(self._next(target))
            return
        self.penalty += PENALTY_OF[rank]
        self._penalty_player = seat
        self._penalty_on(target)

    def _penalty_on(self, seat: int) -> None:
        self.events.append(ev.PenaltyPending(seat, self.penalty))
        self.current, self.decision = seat, STACK_OR_ACCEPT

    # -- §23 seven and zero, §24 exchange ---------------------------------------------

    def _ask_seat(self, seat: int, purpose: int) -> None:
        self._seat_purpose = purpose
        self.current, self.decision = seat, CHOOSE_A_SEAT

    def _seat_chosen(self, seat: int, action: Action) -> None:
        hands = self.hands
        if self._seat_purpose == _SWAP:
            other = action - CHOOSE_SEAT
            hands[seat], hands[other] = hands[other], hands[seat]
            self.events.append(ev.HandsSwapped(
                seat, other, tuple(hands[seat]), tuple(hands[other]), len(hands[seat]),
                len(hands[other])))
            self._begin_turn(self._next(seat))
        elif action == PASS:
            self.events.append(ev.ExchangePassed(seat))
            self._begin_turn(self._next(seat))
        else:
            other = action - CHOOSE_SEAT
            self.events.append(ev.SeatChosen(seat, other))
            self._exchange_player, self._partner, self._gift = seat, other, -1
            self.current, self.decision = seat, GIVE_A_CARD

    def _card_given(self, seat: int, card: Card) -> None:
        if self._gift < 0:  # the player's pick, hidden until the partner has picked too
            self._gift = card
            self.current, self.decision = self._partner, GIVE_A_CARD
            return
        player, partner, gift = self._exchange_player, self._partner, self._gift
        hands = self.hands
        hands[player].remove(gift)
        hands[partner].remove(card)
        hands[player].append(card)
        hands[partner].append(gift)
        self.events.append(ev.CardsExchanged(player, partner, (gift,), (card,)))
        self._exchange_player = self._partner = self._gift = -1
        self._begin_turn(self._next(player))

    def _pass_hands(self, seat: int) -> None:
        """§23: every hand still in play moves to the next seat in the direction of play."""
        hands = self.hands
        moved: list[list[Card]] = [[] for _ in hands]
        for holder in range(self.players):
            if not self._is_out[holder]:
                moved[self._next(holder)] = hands[holder]
        hands[:] = moved
        self.events.append(ev.HandsPassed(
            seat, self.direction, tuple(tuple(hand) for hand in moved),
            tuple(len(hand) for hand in moved)))

    # -- views -------------------------------------------------------------------------

    def observation(self, seat: int) -> Observation:
        """The official view and the variants' public facts; while a seat is asked to jump
        in (§25) the others still see the player acting."""
        current = self.current
        if seat != current and self.decision is JUMP_IN_OR_PASS:
            current = self._covered[0]
        partner = -1
        if self._exchange_player >= 0:
            if seat == self._exchange_player:
                partner = self._partner
            elif seat == self._partner:
                partner = self._exchange_player
        return new_observation(Observation, (
            *self._view(seat, current), self._variants, self.penalty, partner,
            tuple(self.refills)))

    def round_points(self) -> int:
        """§16 (§26, §29): the points the first seat out scores."""
        hands = self.hands if self.counted_hands is None else self.counted_hands
        zero_50 = self._zero_50
        return sum([hand_points(h, zero_50) for s, h in enumerate(hands) if s != self.winner])
