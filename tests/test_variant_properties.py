"""Property-based tests of the variants (docs/rules.md §21-§32): random combinations of house
rules, random play, invariants checked after every action.

* every card is accounted for (108, or 112 with ``draw_ten``, §28);
* every observation says which variants are on, matches the decision asked, and holds
  only what §19 and the variant allow: no other hand, a bystander of a jump-in offer (§25)
  sees the player still acting, and a seat's hand can be rebuilt, card for card, from the
  events as that seat sees them (deals, draws, plays, the swaps of §23, the exchanges of
  §24);
* every legal action fits its decision kind, and every applied one is legal;
* points move only when a round ends, by what the hands shown at its end are worth (§15-§17,
  §26; under §31 the scores are rounds won); §32's two cards keep every card accounted for;
* matches end, and a seed fixes the match.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.bots.policies import GreedyPolicy, RandomPolicy, StrategistPolicy
from arena.referee.faults import default_action
from arena.rules import events as ev
from arena.rules.actions import (
    ACCEPT,
    CHALLENGE,
    CHOOSE_SEAT,
    DRAW,
    GIVE_CARD,
    PASS,
    UNO_CALL,
    Action,
    DecisionKind,
)
from arena.rules.cards import CARD_RANK, DRAW_TWO_RANK, REVERSE_RANK, full_deck
from arena.rules.events import seen_by, to_record
from arena.rules.match import Match
from arena.rules.observation import Observation
from arena.rules.options import VARIANTS, RuleOptions
from arena.rules.scoring import hand_points
from arena.rules.seeds import seat_seed
from arena.rules.variants import VariantRound


@st.composite
def variant_options(draw: st.DrawFn) -> RuleOptions:
    """Any combination the rulebook allows, at least one variant on, short matches."""
    chosen = draw(st.lists(st.sampled_from(VARIANTS), min_size=1, max_size=len(VARIANTS),
                           unique=True))
    settings_: dict[str, Any] = dict.fromkeys(chosen, True)
    if "stack_two_on_four" in chosen:
        settings_["stacking"] = True
    if "lazy_scoring" in chosen:
        settings_["rounds"] = draw(st.integers(1, 3))
    else:
        settings_["alternative_scoring"] = draw(st.booleans())
    return RuleOptions(
        target_score=draw(st.integers(50, 300)),
        two_player_reverse_is_skip=draw(st.booleans()),
        turn_limit=draw(st.sampled_from([15, 60, 200])),
        round_limit=draw(st.integers(1, 3)),
        hand_size=draw(st.sampled_from([7, 7, 3, 10])),
        **settings_,
    )


seeds = st.integers(0, 2**32 - 1)
players = st.integers(2, 7)
kinds = st.sampled_from(["random", "greedy", "strategist"])
POLICIES = {"random": RandomPolicy, "greedy": GreedyPolicy, "strategist": StrategistPolicy}


def deck(options: RuleOptions) -> Counter[int]:
    return Counter(full_deck(options.draw_ten))


def all_cards(match: Match) -> Counter[int]:
    round_ = match.round
    return Counter([c for hand in round_.hands for c in hand] + round_.draw_pile
                   + round_.discard)


def decision_bound(options: RuleOptions) -> int:
    """Turns are bounded by §18; the decisions a turn can hold under the variants (jump-ins,
    stacks, deflections, swaps, exchanges) by the cards in play."""
    return options.round_limit * (options.turn_limit + 1) * 400


class OwnViews:
    """Each seat's hand rebuilt from the events as that seat is shown them."""

    def __init__(self, players: int) -> None:
        self.hands: list[Counter[int]] = [Counter() for _ in range(players)]
        self.seen = 0

    def feed(self, events: Sequence[ev.Event]) -> None:
        for raw in events[self.seen:]:
            for seat, hand in enumerate(self.hands):
                self._apply(seen_by(raw, seat), seat, hand)
        self.seen = len(events)

    @staticmethod
    def _apply(event: ev.Event, seat: int, hand: Counter[int]) -> None:
        match event:
            case ev.RoundStarted():
                hand.clear()
            case ev.Dealt(seat=owner, cards=cards) | ev.Drew(seat=owner, cards=cards):
                if owner == seat:
                    hand.update(cards)
                else:
                    assert cards == ()
            case ev.Played(seat=player, card=card) if player == seat:
                hand.subtract([card])
            case ev.HandsSwapped(seat=player, other=other, cards=mine, other_cards=theirs):
                assert (mine != () or player != seat or event.amount == 0)
                if seat == player:
                    assert theirs == ()
                    hand.clear()
                    hand.update(mine)
                elif seat == other:
                    assert mine == ()
                    hand.clear()
                    hand.update(theirs)
                else:
                    assert mine == theirs == ()
            case ev.HandsPassed(hands=hands):
                assert all(h == () for s, h in enumerate(hands) if s != seat)
                hand.clear()
                hand.update(hands[seat])
            case ev.CardsExchanged(seat=player, other=other, cards=given, other_cards=taken):
                if seat == player:
                    hand.subtract(given)
                    hand.update(taken)
                elif seat == other:
                    hand.subtract(taken)
                    hand.update(given)
                else:
                    assert given == taken == ()

    def check(self, match: Match) -> None:
        for seat, hand in enumerate(self.hands):
            assert +hand == Counter(match.round.hands[seat]), f"seat {seat}'s own view"


def assert_fits(match: Match, observation: Observation, legal: list[Action]) -> None:
    """The legal actions fit the decision (§21-§25 for the new kinds)."""
    decision = match.decision
    hand = Counter(observation.hand)
    assert legal and len(set(legal)) == len(legal) and legal == sorted(legal)
    plays = [a & ~UNO_CALL for a in legal if a < DRAW]
    assert all(hand[c] for c in plays)
    if decision is DecisionKind.CHOOSE_SEAT:
        seats = [a - CHOOSE_SEAT for a in legal if a != PASS]
        assert seats and observation.seat not in seats
        assert all(0 <= s < len(observation.hand_sizes) for s in seats)
        assert set(legal) - {PASS} == {CHOOSE_SEAT + s for s in seats}
        assert CARD_RANK[observation.top_card] in (5, 7)
    elif decision is DecisionKind.GIVE_CARD:
        assert all(a >= GIVE_CARD for a in legal)
        assert {a - GIVE_CARD for a in legal} == set(hand)
        assert observation.partner >= 0 and observation.partner != observation.seat
    elif decision is DecisionKind.JUMP_IN_OR_PASS:
        assert len(legal) == 2 and legal[1] == PASS
        assert plays == [observation.top_card]
    elif decision is DecisionKind.STACK_OR_ACCEPT:
        assert legal[-1] == ACCEPT and observation.pending_penalty > 0
        for card in plays:
            assert CARD_RANK[card] in (DRAW_TWO_RANK, REVERSE_RANK) or card >= 53
        assert set(legal) <= {*(a for a in legal if a < DRAW), CHALLENGE, ACCEPT}


def check_scores(match: Match, before: list[int], new: Sequence[ev.Event],
                 options: RuleOptions) -> None:
    """Points move only at a round's end (§15-§17); what they move by is the hands shown
    then (§16 the winner takes the others', §17 each seat adds its own, §26 a lone 0 is 50;
    §31 the scores are rounds won), under every variant."""
    ended = [e for e in new if isinstance(e, ev.RoundEnded)]
    if not ended:
        assert list(match.scores) == before, "points moved mid-round"
        return
    (end,) = ended
    if options.lazy_scoring:
        assert list(end.scores) == match.rounds_won
        return
    worth = [hand_points(hand, options.zero_scores_50) for hand in end.hands]
    if end.stalled:
        assert list(end.scores) == before
    elif options.until_the_last:  # §29 counts the hands at the moment the first went out
        assert end.winner >= 0
    elif options.alternative_scoring:
        assert list(end.scores) == [s + w for s, w in zip(before, worth, strict=True)]
    else:
        assert end.hands[end.winner] == ()
        assert end.points == sum(worth)
        assert list(end.scores) == [s + (end.points if seat == end.winner else 0)
                                    for seat, s in enumerate(before)]


def play_out(seed: int, count: int, options: RuleOptions, kind: str) -> Match:
    match = Match(count, random.Random(seed), options)
    policies = [POLICIES[kind](seat_seed(seed, s)) for s in range(count)]
    mistakes = random.Random(seed + 2)
    views = OwnViews(count)
    expected = deck(options)
    bound = decision_bound(options)
    decisions = 0
    while not match.is_over:
        seat = match.current_seat
        observation = match.observation(seat)
        legal = match.legal_actions()
        assert observation.variants == options.variants
        assert observation.decision is match.decision
        assert_fits(match, observation, legal)
        assert default_action(observation) in legal or (
            default_action(observation) < DRAW
            and default_action(observation) ^ UNO_CALL in legal)
        round_ = match.round
        assert isinstance(round_, VariantRound)
        for other in range(count):
            if other == seat:
                continue
            view = match.observation(other)
            assert view.decision is None
            if match.decision is DecisionKind.JUMP_IN_OR_PASS:  # §25: learns nothing
                assert view.current_seat == round_._covered[0]
            else:
                assert view.current_seat == seat
        if options.mistake_penalty and mistakes.random() < 0.02:  # §32, as the referee does
            sizes = [len(hand) for hand in round_.hands]
            penalised = mistakes.randrange(count)
            if match.penalise(penalised):
                assert len(round_.hands[penalised]) > sizes[penalised] or not (
                    round_.draw_pile or len(round_.discard) > 1)
            assert all_cards(match) == expected
            views.feed(match.events)
            views.check(match)
            continue
        action = policies[seat].decide(observation, legal)
        assert action in legal
        before, seen = list(match.scores), len(match.events)
        match.apply(action)
        check_scores(match, before, match.events[seen:], options)
        decisions += 1
        assert decisions <= bound
        assert all_cards(match) == expected
        views.feed(match.events)
        views.check(match)
    return match


@settings(max_examples=120, deadline=None)
@given(seed=seeds, count=players, options=variant_options(), kind=kinds)
def test_random_variant_matches_keep_every_invariant(seed: int, count: int,
                                                     options: RuleOptions, kind: str) -> None:
    match = play_out(seed, count, options, kind)
    ended = [e for e in match.events if isinstance(e, ev.MatchEnded)]
    assert len(ended) == 1 and match.places == ended[0].places
    if options.lazy_scoring:
        assert match.rounds_played == min(options.rounds, options.round_limit)


def resampled(match: Match, seat: int, rng: random.Random) -> Observation:
    """The seat's observation with the hidden cards (other hands, the draw pile) dealt anew."""
    round_ = match.round
    others = [s for s in range(match.players) if s != seat]
    saved = [list(h) for h in round_.hands], list(round_.draw_pile)
    pool = [c for s in others for c in round_.hands[s]] + round_.draw_pile
    rng.shuffle(pool)
    at = 0
    for s in others:
        size = len(round_.hands[s])
        round_.hands[s][:] = pool[at:at + size]
        at += size
    round_.draw_pile[:] = pool[at:]
    try:
        return match.observation(seat)
    finally:
        for hand, original in zip(round_.hands, saved[0], strict=True):
            hand[:] = original
        round_.draw_pile[:] = saved[1]


@settings(max_examples=60, deadline=None)
@given(seed=seeds, count=players, options=variant_options())
def test_observations_hold_no_hidden_card(seed: int, count: int, options: RuleOptions) -> None:
    match = Match(count, random.Random(seed), options)
    chooser = random.Random(seed)
    rng = random.Random(seed + 1)
    steps = 0
    while not match.is_over and steps < 400:
        for seat in range(count):
            assert resampled(match, seat, rng) == match.observation(seat)
        round_ = match.round
        if match.decision is DecisionKind.GIVE_CARD and round_._gift >= 0:  # type: ignore[attr-defined]
            # §24: the partner's view is the same whatever the player chose to give
            before = match.observation(match.current_seat)
            player = round_._exchange_player  # type: ignore[attr-defined]
            for card in set(round_.hands[player]):
                round_._gift = card  # type: ignore[attr-defined]
                assert match.observation(match.current_seat) == before
        match.apply(chooser.choice(match.legal_actions()))
        steps += 1


def stream(seed: int, count: int, options: RuleOptions) -> bytes:
    match = play_out(seed, count, options, "random")
    return json.dumps([to_record(e) for e in match.events]).encode()


@settings(max_examples=25, deadline=None)
@given(seed=seeds, count=players, options=variant_options())
def test_a_seed_fixes_a_variant_match(seed: int, count: int, options: RuleOptions) -> None:
    assert stream(seed, count, options) == stream(seed, count, options)
