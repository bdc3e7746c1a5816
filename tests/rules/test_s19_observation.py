"""Information (§19): a seat sees its own hand and the public facts, nothing else."""

from __future__ import annotations

import random

import pytest
from notation import cards, line, position, run

from arena.rules import events as ev
from arena.rules.actions import DecisionKind
from arena.rules.cards import Colour
from arena.rules.events import DrawReason, seen_by
from arena.rules.match import Match
from arena.rules.observation import Observation


def test_observation_holds_exactly_the_facts_of_section_19() -> None:
    """A new field must be checked against §19 before this list grows. The last four are
    the variants' public facts (§21-§32: which are on, the pending penalty of §21/§22, the
    other seat of an exchange of §24, the refills of §30), at their defaults in official
    play."""
    assert Observation._fields == (
        "seat", "hand", "decision", "current_seat", "top_card", "colour", "direction",
        "hand_sizes", "draw_pile_size", "discard_pile_size", "dealer", "scores",
        "round_number", "turn", "variants", "pending_penalty", "partner", "refills",
    )
    assert Observation._field_defaults == {
        "variants": (), "pending_penalty": 0, "partner": -1, "refills": ()}


BEFORE = ("0: R1 G2 W | 1: B3 Y+2 | 2: G7 G8 G9 Y1 | draw: B1 B2 R3 | discard: Y5 R5"
          " | turn: 1 | direction: ccw | dealer: 2 | turns: 7")

PUBLIC = [
    pytest.param(0, None, ("R1", "G2", "W"), id="§19 a waiting seat sees its hand, no decision"),
    pytest.param(1, DecisionKind.PLAY_OR_DRAW, ("B3", "Y+2"),
                 id="§19 the seat to act sees its hand and its decision"),
    pytest.param(2, None, ("G7", "G8", "G9", "Y1"), id="§19 the dealer sees only its own hand"),
]


@pytest.mark.parametrize(("seat", "decision", "hand"), PUBLIC)
def test_observation_of_a_position(seat: int, decision: DecisionKind | None,
                                   hand: tuple[str, ...]) -> None:
    round_ = position(BEFORE, scores=[12, 0, 40])
    observation = round_.observation(seat)
    assert observation == Observation(
        seat=seat,
        hand=tuple(sorted(cards(" ".join(hand)))),
        decision=decision,
        current_seat=1,
        top_card=cards("R5")[0],
        colour=Colour.RED,
        direction=-1,
        hand_sizes=(3, 2, 4),
        draw_pile_size=3,
        discard_pile_size=2,
        dealer=2,
        scores=(12, 0, 40),
        round_number=1,
        turn=7,
    )


HIDDEN = [
    pytest.param(0, "1: B3 Y+2", "1: G4 W+4", id="§19 another seat's cards are not seen"),
    pytest.param(0, "2: G7 G8 G9 Y1", "2: W W W+4 R9", id="§19 nor the dealer's cards"),
    pytest.param(1, "draw: B1 B2 R3", "draw: R3 B2 B1", id="§19 nor the draw pile's order"),
    pytest.param(2, "draw: B1 B2 R3", "draw: W+4 W+4 W", id="§19 nor the draw pile's cards"),
    pytest.param(1, "discard: Y5 R5", "discard: W+4 R5", id="§19 nor the buried discards"),
]


@pytest.mark.parametrize(("seat", "part", "replacement"), HIDDEN)
def test_observation_is_blind_to_hidden_cards(seat: int, part: str, replacement: str) -> None:
    assert part in BEFORE
    one = position(BEFORE)
    other = position(BEFORE.replace(part, replacement))
    assert one.observation(seat) == other.observation(seat)
    # ...while the seat whose cards changed would notice (so the test can fail).
    changed = int(part[0]) if part[0].isdigit() else None
    if changed is not None:
        assert one.observation(changed) != other.observation(changed)


def test_drawn_card_is_seen_by_the_drawer_alone() -> None:
    """§19: a seat sees the cards it draws; the others see its hand grow."""
    round_ = position(BEFORE)
    before = [round_.observation(s) for s in range(3)]
    run(round_, ["draw"])  # seat 1 draws R3, playable on red
    after = [round_.observation(s) for s in range(3)]
    assert cards("R3")[0] in after[1].hand and cards("R3")[0] not in before[1].hand
    assert after[1].decision is DecisionKind.PLAY_DRAWN_OR_KEEP
    for seat in (0, 2):
        assert after[seat].hand == before[seat].hand
        assert after[seat].hand_sizes == (3, 3, 4)
        assert after[seat].draw_pile_size == 2
    drew = round_.events[-1]
    assert isinstance(drew, ev.Drew)
    assert [line(seen_by(drew, s)) for s in range(3)] == [
        "1 draws 1 cards (choice)", "1 draws R3 (choice)", "1 draws 1 cards (choice)"]


EVENTS = [
    pytest.param(ev.Dealt(1, tuple(cards("R1 R2 R3 R4 R5 R6 R7")), 7),
                 ["1 dealt 7 cards", "1 dealt R1 R2 R3 R4 R5 R6 R7", "1 dealt 7 cards"],
                 id="§19 a deal is seen by its seat, the others see the count"),
    pytest.param(ev.Drew(2, tuple(cards("W W+4")), 2, DrawReason.DRAW_TWO),
                 ["2 draws 2 cards (draw_two)", "2 draws 2 cards (draw_two)",
                  "2 draws W W+4 (draw_two)"],
                 id="§19 a draw is seen by the drawer, the others see the count"),
    pytest.param(ev.ChallengeVerdict(0, 1, True, tuple(cards("R1 G2"))),
                 ["1 guilty, hand shown to 0: R1 G2", "1 guilty, hand shown to 0",
                  "1 guilty, hand shown to 0"],
                 id="§19 a challenged hand is seen by the challenger alone"),
    pytest.param(ev.Played(1, cards("W+4")[0]), ["1 plays W+4"] * 3,
                 id="§19 every card played is public"),
    pytest.param(ev.ColourChosen(1, Colour.BLUE), ["1 names blue"] * 3,
                 id="§19 colours named are public"),
    pytest.param(ev.UnoCalled(2, True), ["2 calls UNO"] * 3, id="§19 calls are public"),
    pytest.param(ev.UnoCaught(2), ["2 caught without UNO"] * 3, id="§19 catches are public"),
    pytest.param(ev.Challenged(0, 1), ["0 challenges 1"] * 3, id="§19 challenges are public"),
    pytest.param(ev.Drew(2, (), 0, DrawReason.CHOICE), ["2 draws nothing (choice)"] * 3,
                 id="§19 drawing nothing from empty piles is public"),
    pytest.param(ev.FirstCardTurned(cards("G5")[0]), ["turned G5"] * 3,
                 id="§19 the turned card is public"),
]


@pytest.mark.parametrize(("event", "lines"), EVENTS)
def test_events_as_each_seat_sees_them(event: ev.Event, lines: list[str]) -> None:
    assert [line(seen_by(event, seat)) for seat in range(3)] == lines


def test_each_seat_of_a_real_match_sees_only_its_own_deal() -> None:
    match = Match(4, random.Random(9))
    dealt = [e for e in match.events if isinstance(e, ev.Dealt)]
    assert len(dealt) == 4
    for seat in range(4):
        for event in dealt:
            seen = seen_by(event, seat)
            assert isinstance(seen, ev.Dealt)
            assert seen.amount == 7
            assert seen.cards == (event.cards if event.seat == seat else ())
        assert sorted(match.observation(seat).hand) == sorted(match.round.hands[seat])


def _plain(value: object) -> bool:
    """Ints, None and tuples of them: nothing that could carry a generator or its seed."""
    if value is None or type(value) is int or isinstance(value, DecisionKind):
        return True
    return isinstance(value, tuple) and all(_plain(v) for v in value)


@pytest.mark.parametrize("seed", [1, 2, 3], ids=lambda s: f"§19 only plain facts, seed {s}")
def test_observations_are_plain_public_facts(seed: int) -> None:
    match = Match(3, random.Random(seed))
    for _ in range(60):
        if match.is_over:
            break
        for seat in range(3):
            observation = match.observation(seat)
            assert all(_plain(value) for value in observation)
            assert observation.hand == tuple(sorted(match.round.hands[seat]))
            assert observation.hand_sizes == tuple(len(h) for h in match.round.hands)
            assert (observation.decision is not None) is (seat == match.current_seat)
        match.apply(match.legal_actions()[0])


def test_the_generator_behind_a_round_does_not_show() -> None:
    """§19: the same position under two different generators looks the same to every seat."""
    one = position(BEFORE, rng=random.Random(1))
    other = position(BEFORE, rng=random.Random(2))
    for seat in range(3):
        assert one.observation(seat) == other.observation(seat)
