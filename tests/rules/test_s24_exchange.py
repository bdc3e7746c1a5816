"""§24 ``exchange_on_five``: after a 5 its player may choose a seat or pass; then each of
the two picks a card of its own to give, hidden from the other, and the cards change hands."""

from __future__ import annotations

import pytest
from notation import Case, position, run, table

from arena.rules import events as ev
from arena.rules.actions import DecisionKind
from arena.rules.events import seen_by
from arena.rules.options import RuleOptions

EXCHANGE = RuleOptions(exchange_on_five=True)

BEFORE = "0: R5 R1 G2 | 1: B1 B2 | 2: Y3 Y4 W | discard: R9 | turn: 0"

EXCHANGES = [
    Case(
        "§24 after a 5 the player chooses another seat or passes",
        BEFORE,
        ["play R5"],
        after="turn: 0 | decision: choose_seat | partner: -1",
        log=["0 plays R5"],
        legal=["pass", "seat 1", "seat 2"],
        options=EXCHANGE,
    ),
    Case(
        "§24 passing: no exchange, play goes on",
        BEFORE,
        ["play R5", "pass"],
        after="turn: 1 | decision: play_or_draw | 0: R1 G2 | 2: Y3 Y4 W",
        log=["0 plays R5", "0 passes the exchange"],
        options=EXCHANGE,
    ),
    Case(
        "§24 choosing a seat: the player first picks a card of its own to give",
        BEFORE,
        ["play R5", "seat 2"],
        after="turn: 0 | decision: give_card | partner: 2",
        log=["0 plays R5", "0 exchanges with 2"],
        legal=["give R1", "give G2"],
        options=EXCHANGE,
    ),
    Case(
        "§24 then the chosen seat picks a card of its own (any one, a Wild included)",
        BEFORE,
        ["play R5", "seat 2", "give G2"],
        after="turn: 2 | decision: give_card | partner: 0 | 0: R1 G2 | 2: Y3 Y4 W",
        log=["0 plays R5", "0 exchanges with 2"],
        legal=["give Y3", "give Y4", "give W"],
        options=EXCHANGE,
    ),
    Case(
        "§24 then the cards change hands and play goes on after the 5's player",
        BEFORE,
        ["play R5", "seat 2", "give G2", "give W"],
        after="0: R1 W | 2: Y3 Y4 G2 | 1: B1 B2 | turn: 1 | decision: play_or_draw"
              " | colour: red | partner: -1",
        log=["0 plays R5", "0 exchanges with 2", "0 and 2 exchange a card: G2 for W"],
        options=EXCHANGE,
    ),
    Case(
        "§24 counter-clockwise: play goes on to the right of the 5's player",
        BEFORE + " | direction: ccw",
        ["play R5", "seat 1", "give R1", "give B2"],
        after="0: G2 B2 | 1: B1 R1 | turn: 2",
        options=EXCHANGE,
    ),
    Case(
        "§24 a 5 that is the last card exchanges nothing: the round ends",
        "0: R5 | 1: B1 B2 | 2: Y3 Y4 W | discard: R9 | turn: 0",
        ["play R5"],
        after="over: yes | winner: 0",
        log=["0 plays R5"],
        options=EXCHANGE,
    ),
    Case(
        "§24 two players: the only seat, or pass",
        "0: R5 R1 G2 | 1: B1 B2 | discard: R9 | turn: 0",
        ["play R5"],
        legal=["pass", "seat 1"],
        options=EXCHANGE,
    ),
    Case(
        "§24 off: a 5 is an ordinary number card",
        BEFORE,
        ["play R5"],
        after="turn: 1 | decision: play_or_draw",
        options=RuleOptions(seven_o=True),
    ),
    Case(
        "§24/§30 a 5 that empties a hand is its last card: no exchange, the hand is refilled"
        " (as §23's last 7 swaps nothing)",
        "0: R5 | 1: B1 B2 | 2: G3 G4 | draw: Y9 Y8 Y7 Y6 G6 G5 G4 | discard: R6 | turn: 0",
        ["play R5"],
        after="turn: 1 | decision: play_or_draw",
        log=["0 plays R5", "0 empties its hand, draws 6", "0 draws G4 G5 G6 Y6 Y7 Y8 (refill)"],
        options=RuleOptions(exchange_on_five=True, uno_in_seven=True),
    ),
]


@pytest.mark.parametrize("case", table(EXCHANGES))
def test_exchange_on_five(case: Case) -> None:
    case.check()


def test_neither_choice_is_seen_by_the_other_seat() -> None:
    """§24: the chosen seat decides with the same observation whatever the player gave;
    only the two see the cards exchanged."""
    seen = []
    for gift in ("give R1", "give G2"):
        round_ = position(BEFORE, options=EXCHANGE)
        run(round_, ["play R5", "seat 2", gift])
        assert round_.decision is DecisionKind.GIVE_CARD and round_.current == 2
        seen.append(round_.observation(2))
        assert round_.observation(2).partner == 0
        assert round_.observation(1).partner == -1
    assert seen[0] == seen[1]
    run(round_, ["give Y4"])
    exchanged = next(e for e in round_.events if isinstance(e, ev.CardsExchanged))
    assert [seen_by(exchanged, s).cards for s in range(3)] == [exchanged.cards, (),
                                                                exchanged.cards]
    assert seen_by(exchanged, 1).other_cards == ()


def test_the_player_does_not_see_the_other_choice_before_it_gives() -> None:
    """§24: the player picks first, so its observation can hold nothing of the other's."""
    round_ = position(BEFORE, options=EXCHANGE)
    run(round_, ["play R5", "seat 2"])
    observation = round_.observation(0)
    assert observation.decision is DecisionKind.GIVE_CARD
    assert observation.hand == tuple(sorted(round_.hands[0]))
    assert observation.hand_sizes == (2, 2, 3)
