"""Property-based tests of the rules engine: thousands of random games, invariants checked
after every action.

The rulebook is docs/rules.md; every property names the sections it checks. The
oracles below (deck, points, playability, places) are written from the rule text and card
names, not from the engine's own tables, so that a wrong table is caught too.

Games are kept short (targets 100-500, small round and turn limits) so that the file runs
in under a minute on two cores while covering a few thousand games.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain

import hypothesis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.bots.policies import GreedyPolicy, Policy, RandomPolicy, StrategistPolicy
from arena.bots.runner import play_match
from arena.rules import (
    ACCEPT,
    CHALLENGE,
    CHOOSE_COLOUR,
    DRAW,
    KEEP,
    UNO_CALL,
    WILD_DRAW_FOUR,
    Action,
    DecisionKind,
    IllegalActionError,
    Match,
    Observation,
    Round,
    RuleOptions,
    card_name,
    full_deck,
    points,
)
from arena.rules import events as ev
from arena.rules.events import DrawReason, from_record, seen_by, to_record
from arena.rules.seeds import seat_seed

# -- oracles written from the rule text ------------------------------------------------

FULL_DECK = sorted(full_deck())
NO_COLOUR = 4
COLOURS = "RYGB"


def colour_of(card: int) -> int:
    """The printed colour (0-3 for R, Y, G, B), or 4 for a wild (§2)."""
    name = card_name(card)
    return NO_COLOUR if name.startswith("W") else COLOURS.index(name[0])


def symbol_of(card: int) -> str:
    """The number or symbol printed on the card: '0'-'9', 'S', 'R', '+2', 'W', 'W+4'."""
    name = card_name(card)
    return name if name.startswith("W") else name[1:]


def card_points(card: int) -> int:
    """§3: numbers face value; Skip, Reverse, Draw Two 20; wilds 50."""
    symbol = symbol_of(card)
    if symbol.isdigit():
        return int(symbol)
    return 50 if symbol.startswith("W") else 20


def hand_points(hand: Sequence[int]) -> int:
    return sum(card_points(card) for card in hand)


def playable(card: int, top: int, colour: int) -> bool:
    """§8: same colour, same number or symbol, or a wild (a Wild Draw Four is always offered,
    the bluff of §13)."""
    if symbol_of(card).startswith("W"):
        return True
    return colour_of(card) == colour or symbol_of(card) == symbol_of(top)


def expected_places(scores: Sequence[int], lowest_wins: bool) -> tuple[int, ...]:
    """§16/§17: 1 + the number of seats strictly better; equal scores share a place."""
    sign = 1 if lowest_wins else -1
    return tuple(
        1 + sum(1 for other in scores if sign * other < sign * mine) for mine in scores
    )


# Cards a draw asks for, by reason (§7, §9, §11, §12, §13, §14, §15).
REQUESTED = {
    DrawReason.CHOICE: 1,
    DrawReason.DRAW_TWO: 2,
    DrawReason.WILD_DRAW_FOUR: 4,
    DrawReason.CHALLENGE_GUILTY: 4,
    DrawReason.CHALLENGE_INNOCENT: 6,
    DrawReason.UNO_PENALTY: 2,
    DrawReason.FIRST_CARD_DRAW_TWO: 2,
}

OBSERVATION_FIELDS = (
    "seat", "hand", "decision", "current_seat", "top_card", "colour", "direction",
    "hand_sizes", "draw_pile_size", "discard_pile_size", "dealer", "scores", "round_number",
    "turn", "variants", "pending_penalty", "partner", "refills",
)


def accepted(legal: Sequence[Action], action: int) -> bool:
    """What ``is_legal`` must accept: a legal action, up to the UNO flag on a play (§14)."""
    if action in legal:
        return True
    return 0 <= action < DRAW and (action ^ UNO_CALL) in legal


# -- policies and the game driver ------------------------------------------------------


class FuzzPolicy:
    """Uniform over the legal actions; optionally biased to draw (and keep) to empty the
    draw pile (§10), or to play so that rounds end and score (§15-§17); optionally careless
    with the UNO call (§14)."""

    def __init__(
        self, seed: int, draw_bias: float = 0.0, play_bias: float = 0.0,
        forget_uno: float = 0.0, needless_uno: float = 0.0,
    ) -> None:
        self.rng = random.Random(seed)
        self.draw_bias = draw_bias
        self.play_bias = play_bias
        self.forget_uno = forget_uno
        self.needless_uno = needless_uno

    def decide(self, observation: Observation, legal: Sequence[Action]) -> Action:
        rng = self.rng
        if self.draw_bias and rng.random() < self.draw_bias:
            if DRAW in legal:
                return DRAW
            if KEEP in legal:
                return KEEP
        plays = [a for a in legal if a < DRAW]
        if plays and self.play_bias and rng.random() < self.play_bias:
            action = rng.choice(plays)
        else:
            action = rng.choice(legal)
        if action < DRAW:
            if action & UNO_CALL:
                if rng.random() < self.forget_uno:
                    action &= ~UNO_CALL
            elif rng.random() < self.needless_uno:
                action |= UNO_CALL
        return action


STYLES: dict[str, dict[str, float]] = {
    "uniform": {},
    "careless": {"forget_uno": 0.5, "needless_uno": 0.1},
    "eager": {"play_bias": 0.95, "forget_uno": 0.2, "needless_uno": 0.05},
    "drawer": {"draw_bias": 0.9, "forget_uno": 0.2},
}


def make_policies(style: str, seed: int, players: int) -> list[FuzzPolicy]:
    return [FuzzPolicy(seat_seed(seed, seat), **STYLES[style]) for seat in range(players)]


def decision_bound(options: RuleOptions) -> int:
    """At most four decisions per begun turn (play or draw, play the drawn card, name a
    colour, answer a Wild Draw Four) and one colour for a turned Wild (§7, §9, §12, §13)."""
    return options.round_limit * (4 * options.turn_limit + 1)


Before = Callable[[Match, int, Observation, list[Action]], None]
After = Callable[[Match, Action, int, Round], None]


def play(
    match: Match, policies: Sequence[Policy], before: Before | None = None,
    after: After | None = None,
) -> int:
    """Play to the end; ``before(match, seat, observation, legal)`` runs at each decision,
    ``after(match, action, first_new_event, round_before)`` after each action."""
    bound = decision_bound(match.options)
    decisions = 0
    while not match.is_over:
        seat = match.current_seat
        observation = match.observation(seat)
        legal = list(match.legal_actions())
        if before is not None:
            before(match, seat, observation, legal)
        action = policies[seat].decide(observation, legal)
        start, round_before = len(match.events), match.round
        match.apply(action)
        if after is not None:
            after(match, action, start, round_before)
        decisions += 1
        assert decisions <= bound, f"no end after {decisions} decisions (bound {bound})"
    return decisions


def new_match(seed: int, players: int, options: RuleOptions) -> Match:
    return Match(players, rng=random.Random(seed), options=options)


def stream_json(events: Sequence[ev.Event]) -> bytes:
    return json.dumps([to_record(e) for e in events]).encode()


# -- strategies ------------------------------------------------------------------------

seeds = st.integers(0, 2**64 - 1)
player_counts = st.integers(2, 10)
styles = st.sampled_from(["uniform", "careless", "eager"])
all_styles = st.sampled_from(["uniform", "careless", "eager", "drawer"])
rule_options = st.builds(
    RuleOptions,
    target_score=st.integers(100, 500),
    alternative_scoring=st.booleans(),
    two_player_reverse_is_skip=st.booleans(),
    turn_limit=st.one_of(
        st.integers(1, 40), st.integers(300, 1000), st.just(500), st.just(1000)
    ),
    round_limit=st.integers(1, 5),
    hand_size=st.one_of(st.just(7), st.integers(1, 10)),
)


# -- §2/§3: the deck and the points ------------------------------------------------------


def test_the_deck_is_the_108_cards_of_section_2() -> None:
    names = Counter(card_name(card) for card in full_deck())
    assert sum(names.values()) == 108
    for colour in COLOURS:
        assert names[colour + "0"] == 1
        for symbol in [*map(str, range(1, 10)), "S", "R", "+2"]:
            assert names[colour + symbol] == 2
    assert names["W"] == names["W+4"] == 4


def test_card_points_follow_section_3() -> None:
    # per colour: 0 + 2*(1+...+9) + 6 action cards * 20 = 90 + 120; eight wilds * 50
    assert hand_points(full_deck()) == 4 * (90 + 120) + 8 * 50
    assert [points([card]) for card in range(54)] == [card_points(card) for card in range(54)]


# -- (a) every card is always accounted for (§2, §6, §7, §10) ----------------------------


def assert_all_cards_present(round_: Round) -> None:
    cards = sorted(chain(*round_.hands, round_.draw_pile, round_.discard))
    assert cards == FULL_DECK, (
        f"cards missing {sorted((Counter(FULL_DECK) - Counter(cards)).elements())}, "
        f"extra {sorted((Counter(cards) - Counter(FULL_DECK)).elements())}"
    )


@settings(max_examples=400, deadline=None)
@given(seed=seeds, players=player_counts, options=rule_options, style=all_styles)
def test_every_card_is_accounted_for_after_every_action(
    seed: int, players: int, options: RuleOptions, style: str
) -> None:
    match = new_match(seed, players, options)
    assert_all_cards_present(match.round)

    def after(match: Match, action: Action, start: int, round_before: Round) -> None:
        assert_all_cards_present(match.round)
        if match.round is not round_before:  # the finished round too, as it ended
            assert_all_cards_present(round_before)

    play(match, make_policies(style, seed, players), after=after)


# -- (b) legal actions follow §8/§9/§12/§13; illegal ones are refused ---------------------


@settings(max_examples=150, deadline=None)
@given(seed=seeds, players=player_counts, options=rule_options, style=all_styles)
def test_every_applied_action_is_legal_and_legal_actions_follow_the_rules(
    seed: int, players: int, options: RuleOptions, style: str
) -> None:
    match = new_match(seed, players, options)
    pending_guilt: dict[int, bool] = {}  # offender -> held the colour when playing W+4
    shown: dict[int, tuple[int, ...]] = {}  # offender -> its hand when challenged

    def before(match: Match, seat: int, obs: Observation, legal: list[Action]) -> None:
        round_ = match.round
        hand = round_.hands[seat]
        assert legal, "a decision with no legal action"
        assert legal == sorted(set(legal))
        assert all(match.is_legal(action) for action in legal)
        decision = match.decision
        if decision is DecisionKind.PLAY_OR_DRAW:  # §8, §9, §14
            assert legal[-1] == DRAW
            plays = legal[:-1]
            top, colour = round_.discard[-1], round_.colour
            assert {a & ~UNO_CALL for a in plays} == {
                c for c in hand if playable(c, top, colour)
            }
            assert all(bool(a & UNO_CALL) == (len(hand) == 2) for a in plays)
        elif decision is DecisionKind.PLAY_DRAWN_OR_KEEP:  # §9: that card only
            drew = next(e for e in reversed(match.events) if type(e) is ev.Drew)
            assert drew.seat == seat and drew.reason is DrawReason.CHOICE
            (drawn,) = drew.cards
            assert playable(drawn, round_.discard[-1], round_.colour)
            assert legal == [drawn | (UNO_CALL if len(hand) == 2 else 0), KEEP]
        elif decision is DecisionKind.CHOOSE_COLOUR:  # §7, §12: any colour
            assert legal == [CHOOSE_COLOUR + c for c in range(4)]
        else:  # §13
            assert decision is DecisionKind.CHALLENGE_OR_ACCEPT
            assert legal == [CHALLENGE, ACCEPT]
            offender = (seat - round_.direction) % players
            assert round_.discard[-1] == WILD_DRAW_FOUR and offender in pending_guilt
            shown[offender] = tuple(sorted(round_.hands[offender]))

    def after(match: Match, action: Action, start: int, round_before: Round) -> None:
        new = match.events[start:]
        if action < DRAW:
            played = new[0]
            assert type(played) is ev.Played and played.card == action & ~UNO_CALL
        for event in new:
            if type(event) is ev.ChallengeVerdict:  # §13: guilty iff it held the colour
                assert event.guilty == pending_guilt.pop(event.offender)
                assert event.hand == shown.pop(event.offender)

    class Checked:
        """Checks that what the policy chooses is accepted; notes a Wild Draw Four's guilt."""

        def __init__(self, inner: FuzzPolicy) -> None:
            self.inner = inner

        def decide(self, observation: Observation, legal: Sequence[Action]) -> Action:
            action = self.inner.decide(observation, legal)
            assert accepted(legal, action) and match.is_legal(action)
            if action < DRAW and action & ~UNO_CALL == WILD_DRAW_FOUR:
                round_ = match.round
                hand = round_.hands[observation.seat]
                pending_guilt[observation.seat] = any(
                    colour_of(c) == round_.colour for c in hand
                )
            return action

    policies = [Checked(p) for p in make_policies(style, seed, players)]
    play(match, policies, before=before, after=after)


def snapshot(match: Match) -> tuple[object, ...]:
    round_ = match.round
    return (
        id(round_), tuple(map(tuple, round_.hands)), tuple(round_.draw_pile),
        tuple(round_.discard), round_.colour, round_.direction, round_.current,
        round_.decision, round_.turns, len(match.events), tuple(match.scores), match.is_over,
    )


def assert_refused(match: Match, action: int) -> None:
    """§20 on the engine's side: an action that is not legal is refused, and nothing moves."""
    assert not match.is_legal(action), f"is_legal({action}) accepted a non-legal action"
    state = snapshot(match)
    try:
        match.apply(action)
    except IllegalActionError:
        pass
    except Exception as exc:
        pytest.fail(
            f"apply({action}) at {match.decision!r} raised {type(exc).__name__}: {exc!r} "
            "instead of IllegalActionError"
        )
    else:
        pytest.fail(f"apply({action}) accepted a non-legal action")
    assert snapshot(match) == state, f"a refused apply({action}) changed the state"


probes = st.lists(
    st.one_of(st.integers(-300, 300), st.integers()), min_size=1, max_size=6
)


@settings(max_examples=200, deadline=None)
@given(seed=seeds, players=player_counts, style=all_styles, probe_ints=probes)
def test_non_legal_ints_are_refused_without_changing_the_state(
    seed: int, players: int, style: str, probe_ints: list[int]
) -> None:
    options = RuleOptions(target_score=200, turn_limit=60, round_limit=2)
    match = new_match(seed, players, options)

    def before(match: Match, seat: int, obs: Observation, legal: list[Action]) -> None:
        for action in probe_ints:
            if not accepted(legal, action):
                assert_refused(match, action)

    play(match, make_policies(style, seed, players), before=before)
    for action in probe_ints:  # and everything is refused once the match is over
        assert not match.is_legal(action)
        with pytest.raises(IllegalActionError):
            match.apply(action)


def test_apply_refuses_every_non_legal_int_with_illegal_action_error() -> None:
    """Every int from -200 to 300 that is not legal, at each decision of a few games.

    Non-card faces 54-63 (and with the UNO flag, 118-127) are action codes of no card at
    all; ``apply`` must refuse them like any other illegal action (IllegalActionError, a
    ValueError), not crash on building its error message."""
    wrong: dict[int, str] = {}
    for seed in range(3):
        match = new_match(seed, 3, RuleOptions(target_score=100, turn_limit=20, round_limit=1))
        policies = make_policies("uniform", seed, 3)
        while not match.is_over:
            legal = list(match.legal_actions())
            for action in range(-200, 301):
                if accepted(legal, action):
                    continue
                if match.is_legal(action):
                    wrong[action] = "is_legal accepted it"
                    continue
                try:
                    match.apply(action)
                except IllegalActionError:
                    continue
                except Exception as exc:
                    wrong[action] = f"{type(exc).__name__}: {exc}"
                else:
                    pytest.fail(f"apply({action}) accepted a non-legal action")
            seat = match.current_seat
            match.apply(policies[seat].decide(match.observation(seat), legal))
    assert not wrong, "non-legal actions not refused with IllegalActionError: " + ", ".join(
        f"{action} ({why})" for action, why in sorted(wrong.items())
    )


def test_legal_actions_cannot_be_changed_through_the_returned_list() -> None:
    """What is legal is the engine's business: a caller (a policy handed the list by the
    runner, say) that edits the list it was given must not change the rules.

    Each decision of a few games: the list from ``legal_actions()`` is cleared, then a
    card the seat does not hold is appended; ``legal_actions()`` and ``is_legal`` must not
    follow."""
    problems: list[str] = []
    for seed in range(4):
        players = 2 + seed
        match = new_match(seed, players, RuleOptions(target_score=100, turn_limit=30,
                                                     round_limit=1))
        policies = make_policies("uniform", seed, players)
        while not match.is_over:
            seat = match.current_seat
            legal = match.legal_actions()
            expected = list(legal)
            missing = next(c for c in range(54) if c not in match.round.hands[seat])
            legal.clear()
            legal.append(missing)
            if match.legal_actions() != expected:
                problems.append(
                    f"seed {seed}: after editing the returned list, legal_actions() is "
                    f"{match.legal_actions()} instead of {expected}"
                )
            if match.is_legal(missing) and not accepted(expected, missing):
                problems.append(f"seed {seed}: is_legal({missing}) accepts a card not held")
            if not all(match.is_legal(action) for action in expected):
                problems.append(f"seed {seed}: is_legal refuses actions that are legal")
            if problems:
                break
            match.apply(policies[seat].decide(match.observation(seat), expected))
        if problems:
            break
    assert not problems, "\n".join(problems)


# -- (c) scores grow only by the §16 / §17 amounts; stalled rounds change nothing (§18) -----


@settings(max_examples=600, deadline=None)
@given(seed=seeds, players=player_counts, options=rule_options, style=styles)
def test_scores_grow_only_by_the_points_of_the_hands_shown(
    seed: int, players: int, options: RuleOptions, style: str
) -> None:
    match = new_match(seed, players, options)
    ended: list[tuple[ev.RoundEnded, Round]] = []

    def after(match: Match, action: Action, start: int, round_before: Round) -> None:
        for event in match.events[start:]:
            if type(event) is ev.RoundEnded:
                ended.append((event, round_before))
                # the hands shown are the hands as the round ended (§15: after the last
                # Draw Two / Wild Draw Four hit the next seat)
                assert event.hands == tuple(tuple(sorted(h)) for h in round_before.hands)
                assert event.round == round_before.number
                assert event.stalled == round_before.stalled

    play(match, make_policies(style, seed, players), after=after)

    scores = [0] * players
    for number, (event, round_) in enumerate(ended, start=1):
        assert event.round == number
        before = list(scores)
        if event.stalled:  # §18: no points
            assert event.winner == -1 and event.points == 0
            assert round_.turns == options.turn_limit + 1
        else:
            winner = event.winner
            assert 0 <= winner < players and event.hands[winner] == ()
            if options.alternative_scoring:  # §17: each seat adds its own leftovers
                scores = [s + hand_points(h) for s, h in zip(scores, event.hands, strict=True)]
            else:  # §16: the seat that went out scores the other hands
                shown = sum(hand_points(h) for seat, h in enumerate(event.hands) if seat != winner)
                assert event.points == shown
                scores[winner] += shown
        assert list(event.scores) == scores, (
            f"round {number}: scores went {before} -> {list(event.scores)}, expected {scores}"
        )
        # §16/§17/§18: the match ends right after the first round reaching the target, or
        # at the round limit
        last = max(scores) >= options.target_score or number == options.round_limit
        assert last == (number == len(ended))

    end = match.events[-1]
    assert type(end) is ev.MatchEnded
    hypothesis.event("round limit reached" if end.round_limit_reached else "target reached")
    hypothesis.event("a round won" if any(not e.stalled for e, _ in ended) else "all stalled")
    assert list(end.scores) == scores == match.scores
    assert end.round_limit_reached == (max(scores) < options.target_score)
    assert end.places == match.places == expected_places(scores, options.alternative_scoring)


# -- (d) an observation holds the seat's own hand and public facts only (§19) -------------


def resampled_observation(match: Match, seat: int, rng: random.Random) -> Observation:
    """The seat's observation after dealing the hidden cards (other hands and the draw pile)
    anew, keeping every size: it must not change."""
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


def assert_observation_is_own(match: Match, seat: int, obs: Observation) -> None:
    round_ = match.round
    assert Observation._fields == OBSERVATION_FIELDS
    tuples = {name for name in obs._fields if isinstance(getattr(obs, name), tuple)}
    assert tuples == {"hand", "hand_sizes", "scores", "variants", "refills"}
    # official play: the variants' fields (§21-§32) keep their defaults
    assert (obs.variants, obs.pending_penalty, obs.partner, obs.refills) == ((), 0, -1, ())
    for name in set(obs._fields) - tuples - {"decision"}:
        assert type(getattr(obs, name)) is int, f"{name} is {getattr(obs, name)!r}"
    assert obs.seat == seat
    assert obs.hand == tuple(sorted(round_.hands[seat]))
    assert obs.hand_sizes == tuple(len(h) for h in round_.hands)
    assert obs.scores == tuple(match.scores)
    assert obs.decision == (match.decision if seat == match.current_seat else None)
    assert obs.current_seat == match.current_seat
    assert obs.top_card == round_.discard[-1]
    assert obs.draw_pile_size == len(round_.draw_pile)
    assert obs.discard_pile_size == len(round_.discard)
    assert obs.dealer == round_.dealer
    assert obs.round_number == match.rounds_played + 1


class OwnView:
    """Each seat's hand, rebuilt from what that seat is shown of the stream (§19)."""

    def __init__(self, players: int) -> None:
        self.hands: list[list[int]] = [[] for _ in range(players)]
        self.seen = 0

    def feed(self, events: Sequence[ev.Event]) -> None:
        for raw in events[self.seen:]:
            for seat, hand in enumerate(self.hands):
                match seen_by(raw, seat):
                    case ev.RoundStarted():
                        hand.clear()
                    case ev.Dealt(seat=owner, cards=cards) | ev.Drew(seat=owner, cards=cards):
                        if owner == seat:
                            hand += cards
                        else:
                            assert cards == ()
                    case ev.Played(seat=player, card=card) if player == seat:
                        hand.remove(card)
        self.seen = len(events)


@settings(max_examples=100, deadline=None)
@given(seed=seeds, players=player_counts, options=rule_options, style=all_styles)
def test_observations_hold_no_other_hand(
    seed: int, players: int, options: RuleOptions, style: str
) -> None:
    match = new_match(seed, players, options)
    rng = random.Random(seed)
    view = OwnView(players)

    def before(match: Match, seat: int, obs: Observation, legal: list[Action]) -> None:
        assert_observation_is_own(match, seat, obs)
        assert resampled_observation(match, seat, rng) == obs
        other = rng.randrange(players)  # a seat not deciding sees no decision
        other_obs = match.observation(other)
        assert_observation_is_own(match, other, other_obs)
        assert resampled_observation(match, other, rng) == other_obs
        # each seat can follow its own hand from what it is shown, and nothing more
        view.feed(match.events)
        assert sorted(view.hands[seat]) == list(obs.hand)
        assert sorted(view.hands[other]) == list(other_obs.hand)

    play(match, make_policies(style, seed, players), before=before)


@settings(max_examples=200, deadline=None)
@given(seed=seeds, players=player_counts, options=rule_options, style=all_styles)
def test_seen_by_hides_private_cards_from_other_seats(
    seed: int, players: int, options: RuleOptions, style: str
) -> None:
    match = new_match(seed, players, options)
    play(match, make_policies(style, seed, players))
    for event in match.events:
        for seat in [*range(players), -1]:
            view = seen_by(event, seat)
            match event:
                case ev.Dealt(seat=owner, cards=cards) | ev.Drew(seat=owner, cards=cards):
                    if owner == seat:
                        assert view == event
                    else:
                        assert view == event._replace(cards=())
                        assert view.amount == len(cards)
                case ev.ChallengeVerdict(challenger=challenger):
                    assert view == (event if challenger == seat else event._replace(hand=()))
                case _:
                    assert view == event


# -- a spectator can follow every public number from the public stream (§10, §14, §19) -----


class Spectator:
    """Follows ``seen_by(event, -1)`` (no cards of any hand) and checks the accounting of
    §7 (first card), §10 (draws and reshuffles), §14 (UNO) as it goes."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.seen = 0
        self.sizes = [0] * players
        self.pile = self.discard = 0
        self.top = -1
        self.colour = NO_COLOUR
        self.direction = 1
        self.dealer = -1
        self.reshuffles = 0
        self.pile_before_reshuffle = 0
        self.penalty_due = -1
        self.short_draws = 0

    def feed(self, events: Sequence[ev.Event]) -> None:
        while self.seen < len(events):
            at = self.seen
            self.seen += 1
            event = seen_by(events[at], -1)
            previous = events[at - 1] if at else None
            following = events[at + 1] if at + 1 < len(events) else None
            self.step(event, previous, following)

    def step(self, event: ev.Event, previous: object, following: object) -> None:
        sizes = self.sizes
        if self.penalty_due >= 0:  # §14: the caught seat draws 2 next, nothing in between
            assert type(event) in (ev.Reshuffled, ev.Drew), event
        match event:
            case ev.RoundStarted(dealer=dealer):
                self.sizes = [0] * self.players
                self.pile, self.discard, self.direction = 108, 0, 1
                self.dealer = dealer
            case ev.Dealt(seat=seat, cards=cards, amount=amount):
                assert cards == ()
                sizes[seat] += amount
                self.pile -= amount
            case ev.FirstCardReturned(card=card):
                assert card == WILD_DRAW_FOUR
            case ev.FirstCardTurned(card=card):
                assert card != WILD_DRAW_FOUR
                self.pile -= 1
                self.discard = 1
                self.top = card
                self.colour = colour_of(card)
            case ev.Played(seat=seat, card=card):
                assert sizes[seat] >= 1
                sizes[seat] -= 1
                self.discard += 1
                self.top = card
                if colour_of(card) != NO_COLOUR:  # a wild's colour comes with ColourChosen
                    self.colour = colour_of(card)
                if sizes[seat] == 1:  # §14: called, or caught at once
                    match following:
                        case ev.UnoCalled(seat=caller, counted=True) if caller == seat:
                            pass
                        case ev.UnoCaught(seat=caught) if caught == seat:
                            pass
                        case _:
                            pytest.fail(f"one card left without call or catch: {following}")
            case ev.UnoCalled(seat=seat, counted=counted):
                assert type(previous) is ev.Played and previous.seat == seat
                assert counted == (sizes[seat] == 1)
            case ev.UnoCaught(seat=seat):
                assert type(previous) is ev.Played and previous.seat == seat
                assert sizes[seat] == 1
                self.penalty_due = seat
            case ev.ColourChosen(colour=colour):
                assert 0 <= colour < 4
                self.colour = colour
            case ev.DirectionChanged(direction=direction):
                assert direction == -self.direction
                self.direction = direction
            case ev.Reshuffled(cards=count):  # §10: all the discards but the top card
                assert count == self.discard - 1 > 0
                assert type(following) is ev.Drew
                self.reshuffles += 1
                self.pile_before_reshuffle = self.pile
                self.pile += count
                self.discard = 1
            case ev.Drew(seat=seat, cards=cards, amount=amount, reason=reason):
                assert cards == ()
                wanted = REQUESTED[reason]
                if self.penalty_due >= 0:
                    assert (seat, reason) == (self.penalty_due, DrawReason.UNO_PENALTY)
                    self.penalty_due = -1
                if type(previous) is ev.Reshuffled:  # only when the pile could not serve
                    assert self.pile_before_reshuffle < wanted
                assert amount == min(wanted, self.pile), (event, self.pile)
                if amount < wanted:  # §10: short only when nothing is left to reshuffle
                    assert self.pile == amount and self.discard == 1
                    self.short_draws += 1
                sizes[seat] += amount
                self.pile -= amount
            case ev.RoundEnded(hands=hands):
                assert sizes == [len(h) for h in hands]
                assert self.pile + self.discard + sum(sizes) == 108

    def check(self, obs: Observation) -> None:
        assert obs.hand_sizes == tuple(self.sizes)
        assert obs.draw_pile_size == self.pile
        assert obs.discard_pile_size == self.discard
        assert obs.top_card == self.top
        assert obs.colour == self.colour
        assert obs.direction == self.direction
        assert obs.dealer == self.dealer


def follow(match: Match, policies: Sequence[Policy]) -> Spectator:
    spectator = Spectator(match.players)

    def before(match: Match, seat: int, obs: Observation, legal: list[Action]) -> None:
        spectator.feed(match.events)
        spectator.check(obs)

    def after(match: Match, action: Action, start: int, round_before: Round) -> None:
        assert_all_cards_present(match.round)

    play(match, policies, before=before, after=after)
    spectator.feed(match.events)
    return spectator


@settings(max_examples=250, deadline=None)
@given(seed=seeds, players=player_counts, options=rule_options, style=all_styles)
def test_a_spectator_can_follow_every_public_number(
    seed: int, players: int, options: RuleOptions, style: str
) -> None:
    follow(new_match(seed, players, options), make_policies(style, seed, players))


# Draw-heavy play (90% draw, 90% keep) empties the draw pile again and again (§10).
draw_heavy_options = st.builds(
    RuleOptions,
    target_score=st.integers(100, 300),
    turn_limit=st.integers(100, 300),
    round_limit=st.integers(1, 3),
    hand_size=st.integers(5, 10),
)


@settings(max_examples=400, deadline=None)
@given(seed=seeds, players=player_counts, options=draw_heavy_options)
def test_draw_heavy_games_keep_the_cards_and_the_piles_right(
    seed: int, players: int, options: RuleOptions
) -> None:
    spectator = follow(new_match(seed, players, options), make_policies("drawer", seed, players))
    hypothesis.event("reshuffled" if spectator.reshuffles else "never reshuffled")
    hypothesis.event("a short draw" if spectator.short_draws else "no short draw")


def test_draw_heavy_games_do_reshuffle_and_run_dry() -> None:
    """The fixed-seed check that the draw-heavy runs really exercise §10."""
    options = RuleOptions(target_score=200, turn_limit=200, round_limit=2)
    reshuffled_games = short_draws = games = 0
    for seed in range(24):
        players = (2, 4, 7, 10)[seed % 4]
        policies = make_policies("drawer", seed, players)
        spectator = follow(new_match(seed, players, options), policies)
        games += 1
        reshuffled_games += spectator.reshuffles > 0
        short_draws += spectator.short_draws
    assert reshuffled_games == games, f"only {reshuffled_games} of {games} games reshuffled"
    assert short_draws > 0, "no draw ever found an empty pile"


# -- (e) a seed fixes the match, byte for byte -------------------------------------------


def recorded_stream(seed: int, players: int, options: RuleOptions, style: str) -> bytes:
    match = new_match(seed, players, options)
    play(match, make_policies(style, seed, players))
    return stream_json(match.events)


FACTORIES: tuple[Callable[[int], Policy], ...] = (RandomPolicy, GreedyPolicy, StrategistPolicy)


@settings(max_examples=100, deadline=None)
@given(
    seed=seeds, offset=st.integers(1, 2**64 - 1), players=player_counts,
    options=rule_options, style=styles,
    mix=st.lists(st.sampled_from(FACTORIES), min_size=10, max_size=10),
)
def test_same_seed_same_stream_different_seed_different_stream(
    seed: int, offset: int, players: int, options: RuleOptions, style: str,
    mix: list[Callable[[int], Policy]],
) -> None:
    other = (seed + offset) % 2**64  # never the same seed
    first = recorded_stream(seed, players, options, style)
    assert recorded_stream(seed, players, options, style) == first
    assert recorded_stream(other, players, options, style) != first
    # the in-process runner, bots seeded from the match seed
    factories = mix[:players]
    runs = [
        stream_json(play_match(factories, s, options, build=True).events)
        for s in (seed, seed, other)
    ]
    assert runs[0] == runs[1] != runs[2]


DIGEST_SCRIPT = """
import hashlib, json, random
from arena.bots.policies import RandomPolicy, StrategistPolicy
from arena.bots.runner import play_match
from arena.rules import RuleOptions
from arena.rules.events import to_record
options = RuleOptions(target_score=200, turn_limit=200, round_limit=3)
digest = hashlib.sha256()
for seed in range(6):
    result = play_match([RandomPolicy, StrategistPolicy] * 2, seed, options, build=True)
    digest.update(json.dumps([to_record(e) for e in result.events]).encode())
print(digest.hexdigest())
"""


def test_the_stream_does_not_depend_on_hash_randomisation() -> None:
    """The same seeds give the same bytes in fresh interpreters with different hash seeds."""
    digests = set()
    for hash_seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", DIGEST_SCRIPT], env=env, capture_output=True, text=True,
            check=True,
        )
        digests.add(out.stdout.strip())
    options = RuleOptions(target_score=200, turn_limit=200, round_limit=3)
    factories: list[Callable[[int], Policy]] = [RandomPolicy, StrategistPolicy] * 2
    here = hashlib.sha256()
    for seed in range(6):
        result = play_match(factories, seed, options, build=True)
        here.update(stream_json(result.events))
    assert digests == {here.hexdigest()}


# -- (f) every game ends, within the limits (§4-§7, §18) ---------------------------------


def same(events: Sequence[ev.Event], expected: Sequence[ev.Event]) -> bool:
    """Equal event lists, types included (named tuples alone compare as plain tuples)."""
    return [(type(e), e) for e in events] == [(type(e), e) for e in expected]


def assert_round_set_up(match: Match) -> None:
    """§5-§7 for the round just dealt: dealing order, the turned card and who starts."""
    events = match.events
    start = max(i for i, e in enumerate(events) if type(e) is ev.RoundStarted)
    round_, n, hand_size = match.round, match.players, match.options.hand_size
    assert same(events[start:start + 1], [ev.RoundStarted(match.rounds_played + 1, round_.dealer)])
    left = (round_.dealer + 1) % n
    for offset, dealt in enumerate(events[start + 1:start + 1 + n]):  # from the dealer's left
        assert isinstance(dealt, ev.Dealt) and dealt.seat == (left + offset) % n
        assert len(dealt.cards) == dealt.amount == hand_size
    rest = events[start + 1 + n:]
    while type(rest[0]) is ev.FirstCardReturned:
        rest = rest[1:]
    turned = rest[0]
    assert isinstance(turned, ev.FirstCardTurned)
    symbol, after = symbol_of(turned.card), rest[1:]
    obs = match.observation(match.current_seat)
    if symbol == "W":  # the seat left of the dealer names the colour, then plays
        assert (match.current_seat, match.decision) == (left, DecisionKind.CHOOSE_COLOUR)
        assert after == [] and obs.colour == NO_COLOUR and obs.turn == 0
        return
    assert match.decision is DecisionKind.PLAY_OR_DRAW and obs.turn == 1
    assert obs.colour == colour_of(turned.card)
    if symbol == "S":
        assert same(after, [ev.Skipped(left)]) and match.current_seat == (left + 1) % n
    elif symbol == "+2":
        assert len(after) == 2 and same(after[1:], [ev.Skipped(left)])
        drew = after[0]
        assert isinstance(drew, ev.Drew) and drew.seat == left
        assert drew.reason is DrawReason.FIRST_CARD_DRAW_TWO and drew.amount == 2
        assert match.current_seat == (left + 1) % n
    elif symbol == "R":  # with two players the dealer simply starts, nothing flips
        flipped = [ev.DirectionChanged(-1)] if n > 2 else []
        assert same(after, flipped) and match.current_seat == round_.dealer
        assert obs.direction == (-1 if n > 2 else 1)
    else:
        assert after == [] and match.current_seat == left and obs.direction == 1


def assert_dealer_draw(match: Match) -> None:
    """§4: every seat draws; the highest number deals (actions and wilds count 0); ties
    draw again among themselves."""
    draws = [e for e in match.events if type(e) is ev.DealerDraw]
    (chosen,) = [e for e in match.events if type(e) is ev.DealerChosen]
    drawing, at = list(range(match.players)), 0
    while True:
        batch = draws[at:at + len(drawing)]
        at += len(drawing)
        assert [e.seat for e in batch] == drawing
        values = {
            e.seat: int(symbol_of(e.card)) if symbol_of(e.card).isdigit() else 0 for e in batch
        }
        best = max(values.values())
        drawing = [seat for seat in drawing if values[seat] == best]
        if len(drawing) == 1:
            break
    assert at == len(draws) and chosen.seat == drawing[0]
    assert next(e for e in match.events if type(e) is ev.RoundStarted).dealer == chosen.seat


@settings(max_examples=500, deadline=None)
@given(seed=seeds, players=player_counts, options=rule_options, style=styles)
def test_random_games_end_within_the_round_and_turn_limits(
    seed: int, players: int, options: RuleOptions, style: str
) -> None:
    match = new_match(seed, players, options)
    assert_dealer_draw(match)
    assert_round_set_up(match)
    top_turn: list[int] = [0]

    def before(match: Match, seat: int, obs: Observation, legal: list[Action]) -> None:
        assert 0 <= obs.turn <= options.turn_limit  # §18
        top_turn[-1] = max(top_turn[-1], obs.turn)

    def after(match: Match, action: Action, start: int, round_before: Round) -> None:
        if match.round is not round_before:
            if round_before.stalled:  # the limit was reached, and only then
                assert top_turn[-1] == options.turn_limit
            assert match.round.dealer == (round_before.dealer + 1) % players  # §5
            assert_round_set_up(match)
            top_turn.append(0)

    decisions = play(match, make_policies(style, seed, players), before=before, after=after)
    assert decisions <= decision_bound(options)
    assert match.is_over and 1 <= match.rounds_played <= options.round_limit
    kinds = [type(e) for e in match.events]
    assert kinds[-1] is ev.MatchEnded and kinds.count(ev.MatchEnded) == 1
    assert kinds.count(ev.RoundEnded) == kinds.count(ev.RoundStarted) == match.rounds_played
    end = match.events[-1]
    assert isinstance(end, ev.MatchEnded) and end.rounds == match.rounds_played
    # nothing more can happen
    assert match.current_seat == -1 and match.legal_actions() == []
    with pytest.raises(IllegalActionError):
        match.apply(DRAW)


# -- (g) every event survives to_record / JSON / from_record -----------------------------


@settings(max_examples=150, deadline=None)
@given(seed=seeds, players=player_counts, options=rule_options, style=styles)
def test_every_event_round_trips_through_its_record(
    seed: int, players: int, options: RuleOptions, style: str
) -> None:
    match = new_match(seed, players, options)
    play(match, make_policies(style, seed, players))
    for event in match.events:
        record = to_record(event)
        assert list(record) == ["event", *event._fields]
        for value in (record, json.loads(json.dumps(record))):
            back = from_record(value)
            assert type(back) is type(event) and back == event
            assert [type(v) for v in back] == [type(v) for v in event], event
            assert to_record(back) == record
