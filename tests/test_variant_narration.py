"""The narration (terminal replays, the site's replay viewer) has a line for every event
of the variants (docs/rules.md §21-§32), and rule sets read plainly."""

from __future__ import annotations

import random

from arena.rules import events as ev
from arena.rules.match import Match
from arena.rules.narration import VARIANT_SUMMARIES, describe, describe_rules, variant_lines
from arena.rules.options import VARIANTS, RuleOptions

MIXES = (
    RuleOptions(stacking=True, reverse_deflects=True, seven_o=True, exchange_on_five=True,
                jump_in=True, colour_circle=True, draw_ten=True, uno_in_seven=True,
                target_score=150, round_limit=2, turn_limit=200),
    RuleOptions(until_the_last=True, round_limit=2, turn_limit=400),
    RuleOptions(lazy_scoring=True, rounds=2, zero_scores_50=True),
)


def test_every_event_has_a_plain_line_for_every_seat() -> None:
    names = ["ann", "bob", "cat", "dan"]
    seen: set[str] = set()
    for options in MIXES:
        for seed in range(8):
            match = Match(4, random.Random(seed), options)
            chooser = random.Random(seed)
            while not match.is_over:
                match.apply(chooser.choice(match.legal_actions()))
            for event in match.events:
                seen.add(type(event).__name__)
                for seat in range(4):
                    line = describe(ev.seen_by(event, seat), names)
                    assert line and not line.startswith(type(event).__name__ + "("), line
    assert seen >= {"PenaltyPending", "PenaltyAccepted", "HandsSwapped", "HandsPassed",
                    "SeatChosen", "ExchangePassed", "CardsExchanged", "JumpedIn",
                    "ColourAdvanced", "WentOut", "HandEmptied", "RoundPlaces", "RoundLoser"}


def test_hidden_cards_are_not_narrated() -> None:
    swap = ev.HandsSwapped(0, 2, (5, 6), (7,), 2, 1)
    assert "holds" in describe(swap)
    assert describe(ev.seen_by(swap, 1)) == "seat 0 swaps hands with seat 2 (2 and 1 cards now)"
    exchange = ev.CardsExchanged(0, 1, (5,), (7,))
    assert describe(ev.seen_by(exchange, 3)) == "seat 0 and seat 1 exchange a card"
    assert "red 5 for red 7" in describe(ev.seen_by(exchange, 1))


def test_rule_sets_read_plainly() -> None:
    assert describe_rules(RuleOptions()) == "official rules, target 500"
    assert describe_rules({"target_score": 200, "stacking": True, "jump_in": True}) == (
        "house rules: stacking (§21), jump_in (§25); target 200")
    assert describe_rules(RuleOptions(lazy_scoring=True, rounds=5)) == (
        "house rules: lazy_scoring (§31); 5 rounds, lazy scoring")
    assert variant_lines({}) == []
    assert set(VARIANT_SUMMARIES) == set(VARIANTS)
    lines = variant_lines(RuleOptions(seven_o=True, draw_ten=True))
    assert lines == ["seven_o (§23): a 7 swaps hands with a chosen seat, a 0 passes every "
                     "hand on", "draw_ten (§28): four +10 cards in a 112-card deck"]
