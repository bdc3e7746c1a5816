"""Starting a round: the dealer draw (§4), the deal passing left (§5), the deal (§6) and the
turned card (§7)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

import pytest
from notation import StackedRandom, check, legal, log, names, run, stacked_deck, table

from arena.rules import events as ev
from arena.rules.actions import DecisionKind
from arena.rules.cards import (
    CARD_KIND,
    DEALER_DRAW_VALUE,
    WILD_DRAW_FOUR,
    Kind,
    full_deck,
    parse_cards,
)
from arena.rules.match import Match, arrange_round
from arena.rules.options import OFFICIAL, RuleOptions
from arena.rules.state import Round

# -- §4 the dealer draw -------------------------------------------------------------------


@dataclass(frozen=True)
class DealerDrawCase:
    name: str
    players: int
    draws: str
    """The cards off the shuffled deck, in the order the seats draw them."""
    log: tuple[str, ...]
    dealer: int


DEALER_DRAWS = [
    DealerDrawCase(
        "§4 the highest number deals",
        3, "R3 B8 G1",
        ("0 draws R3 for dealer", "1 draws B8 for dealer", "2 draws G1 for dealer", "1 deals"),
        dealer=1,
    ),
    DealerDrawCase(
        "§4 action and wild cards count as zero: a 1 beats them",
        4, "RS W+4 G1 B+2",
        ("0 draws RS for dealer", "1 draws W+4 for dealer", "2 draws G1 for dealer",
         "3 draws B+2 for dealer", "2 deals"),
        dealer=2,
    ),
    DealerDrawCase(
        "§4 two seats tied for highest draw again, only among themselves",
        3, "R5 B9 G9 Y2 YS",
        ("0 draws R5 for dealer", "1 draws B9 for dealer", "2 draws G9 for dealer",
         "1 draws Y2 for dealer", "2 draws YS for dealer", "1 deals"),
        dealer=1,
    ),
    DealerDrawCase(
        "§4 an action card ties with a zero and with a wild",
        3, "R0 BR W Y3 G1 B2",
        ("0 draws R0 for dealer", "1 draws BR for dealer", "2 draws W for dealer",
         "0 draws Y3 for dealer", "1 draws G1 for dealer", "2 draws B2 for dealer", "0 deals"),
        dealer=0,
    ),
    DealerDrawCase(
        "§4 ties repeat until one seat is highest, the field shrinking each time",
        4, "R9 G9 B9 Y2 R4 G4 B1 G7 RR",
        ("0 draws R9 for dealer", "1 draws G9 for dealer", "2 draws B9 for dealer",
         "3 draws Y2 for dealer", "0 draws R4 for dealer", "1 draws G4 for dealer",
         "2 draws B1 for dealer", "0 draws G7 for dealer", "1 draws RR for dealer", "0 deals"),
        dealer=0,
    ),
    DealerDrawCase(
        "§4 two players both drawing symbols tie and draw again",
        2, "W+4 GS Y6 R7",
        ("0 draws W+4 for dealer", "1 draws GS for dealer", "0 draws Y6 for dealer",
         "1 draws R7 for dealer", "1 deals"),
        dealer=1,
    ),
]


@pytest.mark.parametrize("case", table(DEALER_DRAWS))
def test_dealer_draw(case: DealerDrawCase) -> None:
    match = Match(case.players, StackedRandom(7, stacked_deck(parse_cards(case.draws))))
    before_round = [e for e in match.events if isinstance(e, ev.DealerDraw | ev.DealerChosen)]
    assert log(before_round) == list(case.log)
    assert match.dealer == case.dealer
    assert match.round.dealer == case.dealer
    assert match.events[len(before_round)] == ev.RoundStarted(1, case.dealer)


def test_dealer_draw_cards_go_back_before_the_deal() -> None:
    """§4: the drawn cards go back and the deck is reshuffled: round 1 has all 108 cards."""
    match = Match(3, StackedRandom(7, stacked_deck(parse_cards("R5 B9 G9 Y2 YS"))))
    round_ = match.round
    everything = [c for hand in round_.hands for c in hand] + round_.draw_pile + round_.discard
    assert Counter(everything) == Counter(full_deck())


def replay_dealer_draw(events: list[ev.Event], players: int) -> tuple[int, int]:
    """Check a dealer draw against §4 from its events; returns (dealer, redraw rounds)."""
    drawing = list(range(players))
    index = 0
    redraws = 0
    while True:
        values = {}
        for seat in drawing:
            event = events[index]
            assert isinstance(event, ev.DealerDraw) and event.seat == seat, (index, event)
            values[seat] = DEALER_DRAW_VALUE[event.card]
            index += 1
        best = max(values.values())
        drawing = [seat for seat in drawing if values[seat] == best]
        if len(drawing) == 1:
            assert events[index] == ev.DealerChosen(drawing[0])
            return drawing[0], redraws
        redraws += 1


@pytest.mark.parametrize("players", [2, 3, 4, 10], ids=lambda n: f"§4 seeded draws, {n} players")
def test_dealer_draw_follows_the_rule_over_many_seeds(players: int) -> None:
    redraw_seen = False
    for seed in range(60):
        match = Match(players, random.Random(seed))
        dealer, redraws = replay_dealer_draw(match.events, players)
        assert match.dealer == dealer
        redraw_seen = redraw_seen or redraws > 0
    assert redraw_seen, "no tie in 60 seeds: widen the range so the tie rule is exercised"


# -- §5 the deal passes left ---------------------------------------------------------------

ROTATIONS = [
    pytest.param(2, "R1 R9", [1, 0, 1, 0], id="§5 two players alternate the deal"),
    pytest.param(3, "R1 R2 R9", [2, 0, 1, 2], id="§5 the deal passes from the last seat to 0"),
    pytest.param(4, "R1 R9 R2 R3", [1, 2, 3, 0, 1], id="§5 four players, deal moves clockwise"),
]


@pytest.mark.parametrize(("players", "draws", "dealers"), ROTATIONS)
def test_deal_passes_left_each_round(players: int, draws: str, dealers: list[int]) -> None:
    match = Match(players, StackedRandom(3, stacked_deck(parse_cards(draws))))
    seen = [match.dealer]
    for _ in dealers[1:]:
        # Seat 0 goes out at once, so the round ends and the next is dealt.
        hands = [parse_cards("R1")] + [parse_cards("G2")] * (players - 1)
        match.round = arrange_round(hands, [], parse_cards("R5"), 0, 0,
                                    dealer=match.dealer, scores=match.scores,
                                    events=match.events)
        start = len(match.events)
        match.apply(parse_cards("R1")[0])
        assert not match.is_over
        started = [e for e in match.events[start:] if isinstance(e, ev.RoundStarted)]
        assert started == [ev.RoundStarted(len(seen) + 1, match.dealer)]
        assert match.round.dealer == match.dealer
        seen.append(match.dealer)
    assert seen == dealers


# -- §6 the deal ---------------------------------------------------------------------------


def numbered(colour: str, count: int) -> str:
    """``numbered("R", 3)`` -> ``"R1 R2 R3"``."""
    return " ".join(f"{colour}{i}" for i in range(1, count + 1))


def interleave(*hands: str) -> str:
    """The cards of several hands dealt one at a time: first card of each, then second..."""
    columns = [hand.split() for hand in hands]
    return " ".join(card for row in zip(*columns, strict=True) for card in row)


@dataclass(frozen=True)
class DealCase:
    name: str
    players: int
    dealer: int
    top: str
    """The cards off the top of the deck, in order: the deal, then the turned card."""
    hands: str
    """The expected hands in position notation."""
    order: tuple[int, ...]
    """The seats in the order they are dealt to."""


DEALS = [
    DealCase(
        "§6 two players, dealer 0: seat 1 gets the first card, one at a time",
        2, 0, interleave(numbered("R", 7), numbered("Y", 7)) + " B5",
        f"1: {numbered('R', 7)} | 0: {numbered('Y', 7)}",
        (1, 0),
    ),
    DealCase(
        "§6 three players, dealer 1: deal starts at seat 2 and wraps",
        3, 1, interleave(numbered("R", 7), numbered("Y", 7), numbered("G", 7)) + " B5",
        f"2: {numbered('R', 7)} | 0: {numbered('Y', 7)} | 1: {numbered('G', 7)}",
        (2, 0, 1),
    ),
    DealCase(
        "§6 four players, dealer 3 (last seat): seat 0 is dealt first",
        4, 3,
        interleave(numbered("R", 7), numbered("Y", 7), numbered("G", 7), numbered("B", 7))
        + " R9",
        f"0: {numbered('R', 7)} | 1: {numbered('Y', 7)} | 2: {numbered('G', 7)}"
        f" | 3: {numbered('B', 7)}",
        (0, 1, 2, 3),
    ),
]


@pytest.mark.parametrize("case", table(DEALS))
def test_deal_one_card_at_a_time_from_the_left_of_the_dealer(case: DealCase) -> None:
    events: list[ev.Event] = []
    top = parse_cards(case.top)
    round_ = Round(case.players, case.dealer, 1, OFFICIAL, random.Random(0), events,
                   [0] * case.players, deck=stacked_deck(top))
    check(round_, case.hands)
    assert [e.seat for e in events if isinstance(e, ev.Dealt)] == list(case.order)
    assert all(e.amount == 7 for e in events if isinstance(e, ev.Dealt))
    # §6: then the next card of the pile starts the discard pile.
    assert round_.discard == top[-1:]
    assert len(round_.draw_pile) == 108 - 7 * case.players - 1
    assert log(events)[-1] == f"turned {names(top[-1:])}"


def test_deal_of_ten_players_uses_seventy_cards_in_order() -> None:
    """§6 with a shuffled deck: the k-th card off the top goes to seat dealer+1+k (mod n)."""
    deck = full_deck()
    random.Random(11).shuffle(deck)
    while deck[-71] == WILD_DRAW_FOUR:  # keep the turned card simple for this check
        deck.insert(0, deck.pop(-71))
    dealer, n = 6, 10
    round_ = Round(n, dealer, 1, OFFICIAL, random.Random(0), [], [0] * n, deck=list(deck))
    for k in range(7 * n):
        seat = (dealer + 1 + k) % n
        assert round_.hands[seat][k // n] == deck[-1 - k]


# -- §7 the turned card --------------------------------------------------------------------

# Hands are dealt from yellow and green number cards, so the turned card (red, blue or a
# wild) and the cards under it are the only ones a case needs to name.
FILLER = parse_cards(" ".join(
    ["Y0"] + [f"Y{i} Y{i}" for i in range(1, 10)] + ["G0"] + [f"G{i} G{i}" for i in range(1, 10)]
))


@dataclass(frozen=True)
class FirstCardCase:
    name: str
    players: int
    dealer: int
    turned: str
    """The turned card and the cards under it, in the order they come off the pile."""
    log: tuple[str, ...]
    """Events from the first card turned (or returned) on."""
    after: str
    actions: tuple[str, ...] = ()
    legal: tuple[str, ...] | None = None


def deal_with_turned(players: int, dealer: int, turned: str, seed: int = 0) -> Round:
    top = FILLER[: 7 * players] + parse_cards(turned)
    return Round(players, dealer, 1, OFFICIAL, random.Random(seed), [], [0] * players,
                 deck=stacked_deck(top))


def after_the_deal(round_: Round) -> list[str]:
    last_deal = max(i for i, e in enumerate(round_.events) if isinstance(e, ev.Dealt))
    return log(round_.events[last_deal + 1:])


FIRST_CARDS = [
    FirstCardCase(
        "§7 number card: nothing happens, the seat left of the dealer starts",
        3, 0, "R5",
        ("turned R5",),
        "turn: 1 | colour: red | direction: cw | decision: play_or_draw | sizes: 7 7 7",
    ),
    FirstCardCase(
        "§7 number card with the last seat dealing: seat 0 starts",
        3, 2, "B0",
        ("turned B0",),
        "turn: 0 | colour: blue | direction: cw",
    ),
    FirstCardCase(
        "§7 Skip: the seat left of the dealer is skipped, the next starts",
        3, 0, "RS",
        ("turned RS", "1 skipped"),
        "turn: 2 | colour: red | direction: cw | sizes: 7 7 7",
    ),
    FirstCardCase(
        "§7 Skip with two players: the dealer starts",
        2, 0, "BS",
        ("turned BS", "1 skipped"),
        "turn: 0 | colour: blue",
    ),
    FirstCardCase(
        "§7 Reverse: the dealer starts and play goes counter-clockwise",
        3, 0, "RR B1",
        ("turned RR", "direction ccw", "0 draws B1 (choice)", "0 keeps"),
        "turn: 2 | direction: ccw | colour: red",
        actions=("draw",),  # the dealer cannot play B1 on a red Reverse: play goes right
    ),
    FirstCardCase(
        "§7 Reverse with the last seat dealing: it starts, then the seat to its right",
        4, 3, "BR R1",
        ("turned BR", "direction ccw", "3 draws R1 (choice)", "3 keeps"),
        "turn: 2 | direction: ccw | colour: blue",
        actions=("draw",),
    ),
    FirstCardCase(
        "§7 Reverse with two players: the dealer simply starts, the direction unchanged",
        2, 1, "RR B1",
        ("turned RR",),
        "turn: 1 | colour: red | direction: cw | decision: play_or_draw",
    ),
    FirstCardCase(
        "§7 Draw Two: the seat left of the dealer draws 2 and loses its turn",
        3, 1, "R+2 B1 B2",
        ("turned R+2", "2 draws B1 B2 (first_card_draw_two)", "2 skipped"),
        "turn: 0 | colour: red | sizes: 7 7 9 | draw_size: 84",
    ),
    FirstCardCase(
        "§7 Draw Two with two players: the other seat draws, the dealer starts",
        2, 0, "B+2 R1 R2",
        ("turned B+2", "1 draws R1 R2 (first_card_draw_two)", "1 skipped"),
        "turn: 0 | colour: blue | sizes: 7 9",
    ),
    FirstCardCase(
        "§7 Wild: the seat left of the dealer chooses the colour",
        3, 2, "W",
        ("turned W",),
        "turn: 0 | decision: choose_colour | colour: none | turns: 0",
        legal=("colour red", "colour yellow", "colour green", "colour blue"),
    ),
    FirstCardCase(
        "§7 Wild: the seat left of the dealer chooses, then takes its turn",
        3, 2, "W",
        ("turned W", "0 names yellow"),
        "turn: 0 | decision: play_or_draw | colour: yellow | turns: 1",
        actions=("colour yellow",),
    ),
    FirstCardCase(
        "§7 Wild: the chooser plays on its colour and play goes on to its left",
        3, 2, "W",
        ("turned W", "0 names yellow", "0 plays Y0"),
        "turn: 1 | colour: yellow | discard: W Y0 | sizes: 6 7 7",
        actions=("colour yellow", "play Y0"),
    ),
    FirstCardCase(
        "§7 Wild with two players: the non-dealer chooses and plays",
        2, 0, "W",
        ("turned W", "1 names green"),
        "turn: 1 | colour: green",
        actions=("colour green",),
    ),
]


@pytest.mark.parametrize("case", table(FIRST_CARDS))
def test_first_card(case: FirstCardCase) -> None:
    round_ = deal_with_turned(case.players, case.dealer, case.turned)
    run(round_, case.actions)
    assert after_the_deal(round_) == list(case.log)
    check(round_, case.after)
    if case.legal is not None:
        assert legal(round_) == list(case.legal)


@pytest.mark.parametrize(
    "turned",
    [
        pytest.param("W+4 R5", id="§7 Wild Draw Four turned first goes back, the next is turned"),
        pytest.param("W+4 W+4 W+4 B7", id="§7 Wild Draw Four turned three times in a row"),
    ],
)
def test_first_wild_draw_four_is_returned(turned: str) -> None:
    on_top = turned.split().count("W+4")
    for seed in range(20):
        round_ = deal_with_turned(3, 0, turned, seed)
        lines = after_the_deal(round_)
        returned = lines.count("W+4 returned to the pile")
        assert returned >= on_top
        assert lines == ["W+4 returned to the pile"] * returned + [lines[-1]]
        # Only Wild Draw Fours go back, so the first other card is the one turned.
        assert lines[-1] == f"turned {turned.split()[-1]}"
        assert round_.discard == parse_cards(turned.split()[-1])
        # Back into the draw pile: no card lost, all four Wild Draw Fours there.
        assert round_.draw_pile.count(WILD_DRAW_FOUR) == 4
        assert len(round_.draw_pile) == 108 - 21 - 1
        assert round_.current == 1  # a number card: the seat left of the dealer starts


def test_first_wild_draw_four_goes_back_at_a_random_place() -> None:
    """§7: a random position, so now and then it lands on top and is returned again."""
    top = FILLER[:21] + parse_cards("W+4 R5")
    rest = [c for c in stacked_deck(top)[:-len(top)] if c != WILD_DRAW_FOUR]
    deck = rest + top[::-1]  # the turned one is the only Wild Draw Four
    places, turned_again = set(), 0
    for seed in range(400):
        round_ = Round(3, 0, 1, OFFICIAL, random.Random(seed), [], [0, 0, 0], deck=list(deck))
        returned = after_the_deal(round_).count("W+4 returned to the pile")
        turned_again += returned > 1
        places.add(round_.draw_pile.index(WILD_DRAW_FOUR))
        assert round_.discard != [WILD_DRAW_FOUR]
    assert len(places) > 20
    assert turned_again, "as often as needed: a W+4 put back on top is returned again"


def test_first_card_in_seeded_matches() -> None:
    """§7 through real matches: who starts follows from the turned card."""
    kinds = set()
    for seed in range(60):
        match = Match(3, random.Random(seed))
        round_ = match.round
        kind = CARD_KIND[round_.discard[0]]
        kinds.add(kind)
        left = (match.dealer + 1) % 3
        if kind is Kind.WILD:
            assert (round_.current, round_.decision) == (left, DecisionKind.CHOOSE_COLOUR)
        elif kind in (Kind.SKIP, Kind.DRAW_TWO):
            assert round_.current == (left + 1) % 3
        elif kind is Kind.REVERSE:
            assert (round_.current, round_.direction) == (match.dealer, -1)
        else:
            assert (round_.current, round_.direction) == (left, 1)
    assert Kind.WILD_DRAW_FOUR not in kinds
    assert Kind.NUMBER in kinds and len(kinds) >= 3


@pytest.mark.parametrize("options", [OFFICIAL, RuleOptions(colour_circle=True),
                                     RuleOptions(two_player_reverse_is_skip=False)],
                         ids=["official", "§27 colour_circle", "§11 option off"])
def test_a_reverse_turned_between_two_players_leaves_the_direction(options: RuleOptions
                                                                   ) -> None:
    """§7 "with two players the dealer simply starts": play stays clockwise, as after a
    Reverse played between two (were the turned one to flip it, every wild of the round
    would move the colour backward under §27)."""
    turned = 0
    for seed in range(400):
        match = Match(2, random.Random(seed), options)
        round_ = match.round
        if CARD_KIND[round_.discard[0]] is not Kind.REVERSE:
            continue
        turned += 1
        assert (round_.current, round_.direction) == (match.dealer, 1)
        assert not any(isinstance(e, ev.DirectionChanged) for e in match.events)
        assert match.observation(round_.current).direction == 1
    assert turned >= 5
