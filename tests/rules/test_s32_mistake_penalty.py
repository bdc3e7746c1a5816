"""§32 ``mistake_penalty``: an illegal action (§20) costs the seat 2 drawn cards instead of a
strike; the referee still plays the default action for it. The engine's part is
``Match.penalise``; the referee's (no strike, the default action) is tested in
tests/referee/test_variants.py."""

from __future__ import annotations

import pytest
from notation import line, match_in

from arena.rules.actions import parse_action
from arena.rules.options import RuleOptions

MISTAKES = RuleOptions(mistake_penalty=True)
DRAW = "draw: Y9 Y8 Y7 Y6 B6 B5 B4 B3 B2 B1"


@pytest.mark.parametrize(("before", "options", "penalised", "log", "legal"), [
    pytest.param(f"0: R3 G1 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0", MISTAKES,
                 True, ["0 draws B1 B2 (mistake)"], ["play R3", "draw"],
                 id="§32 the seat draws 2 and its decision stays (the UNO flag follows its hand)"),
    pytest.param(f"0: R3 G1 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0",
                 RuleOptions(), False, [], ["play R3 uno", "draw"],
                 id="§32 off (official §20): no cards, a strike instead"),
    pytest.param(f"0: | 1: B1 B2 | 2: Y3 Y4 | {DRAW} | discard: R5 | turn: 1 | out: 0",
                 RuleOptions(mistake_penalty=True, until_the_last=True), False, [],
                 ["draw"], id="§32/§29 a seat that went out draws nothing"),
])
def test_mistake_penalty(before: str, options: RuleOptions, penalised: bool,
                         log: list[str], legal: list[str]) -> None:
    match = match_in(before, options)
    seat = 0
    start = len(match.events)
    assert match.penalise(seat) is penalised
    assert [line(e) for e in match.events[start:]] == log
    if match.current_seat == seat:
        assert [parse_action(a) for a in legal] == match.legal_actions()


def test_the_penalty_is_drawn_before_the_default_action() -> None:
    """§32: penalty first, then the default action (here: draw) with the bigger hand."""
    match = match_in(f"0: R3 G1 | 1: B1 B2 | 2: Y3 | {DRAW} | discard: R5 | turn: 0", MISTAKES)
    assert match.penalise(0)
    match.apply(parse_action("draw"))
    assert sorted(match.round.hands[0]) == sorted(
        [parse_action(f"play {c}") for c in ("R3", "G1", "B1", "B2", "B3")])
