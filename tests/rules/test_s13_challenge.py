"""The Wild Draw Four challenge (§13): who draws, who plays next, who sees the hand."""

from __future__ import annotations

import pytest
from notation import Case, line, position, run, table

from arena.rules import events as ev
from arena.rules.events import seen_by

CHALLENGES = [
    Case(
        "§13 guilty: the offender draws 4, the challenger draws nothing",
        "0: W+4 R1 G7 | 1: B1 G2 | 2: Y3 | draw: Y9 Y8 Y7 Y6 | discard: R5 | turn: 0",
        ["play W+4", "colour green", "challenge"],
        after="0: R1 G7 Y6 Y7 Y8 Y9 | 1: B1 G2 | draw: | discard: R5 W+4",
        log=["0 plays W+4", "0 names green", "1 challenges 0",
             "0 guilty, hand shown to 1: R1 G7", "0 draws Y6 Y7 Y8 Y9 (challenge_guilty)"],
    ),
    Case(
        "§13 guilty: the challenger takes its turn normally, on the named colour",
        "0: W+4 R1 G7 | 1: B1 G2 R2 | 2: Y3 | draw: Y9 Y8 Y7 Y6 | discard: R5 | turn: 0",
        ["play W+4", "colour green", "challenge"],
        after="turn: 1 | decision: play_or_draw | colour: green",
        legal=["play G2", "draw"],
    ),
    Case(
        "§13 guilty: after the challenger's play the turn goes on from it",
        "0: W+4 R1 G7 | 1: B1 G2 R2 | 2: Y3 Y4 | draw: Y9 Y8 Y7 Y6 | discard: R5 | turn: 0",
        ["play W+4", "colour green", "challenge", "play G2"],
        after="turn: 2 | discard: R5 W+4 G2",
    ),
    Case(
        "§13 innocent: the challenger draws 6 and loses its turn",
        "0: W+4 G1 B7 | 1: B1 G2 | 2: Y3 | draw: Y9 Y8 Y7 Y6 Y5 Y4 Y3 | discard: R5 | turn: 0",
        ["play W+4", "colour green", "challenge"],
        after="0: G1 B7 | 1: B1 G2 Y3 Y4 Y5 Y6 Y7 Y8 | draw: Y9 | turn: 2 | colour: green",
        log=["0 plays W+4", "0 names green", "1 challenges 0",
             "0 innocent, hand shown to 1: G1 B7", "1 draws Y3 Y4 Y5 Y6 Y7 Y8 (challenge_innocent)",
             "1 skipped"],
    ),
    Case(
        "§13 innocent though holding a Wild and a card of the same number",
        "0: W+4 W G5 | 1: B1 G2 | 2: Y3 | draw: Y9 Y8 Y7 Y6 Y5 Y4 | discard: R5 | turn: 0",
        ["play W+4", "colour blue", "challenge"],
        after="0: W G5 | sizes: 2 8 1 | turn: 2 | colour: blue",
        log=["0 plays W+4", "0 names blue", "1 challenges 0",
             "0 innocent, hand shown to 1: G5 W", "1 draws Y4 Y5 Y6 Y7 Y8 Y9 (challenge_innocent)",
             "1 skipped"],
    ),
    Case(
        "§13 guilty means the colour before the Wild Draw Four, even if named again",
        "0: W+4 R1 G7 | 1: B1 G2 | 2: Y3 | draw: Y9 Y8 Y7 Y6 | discard: R5 | turn: 0",
        ["play W+4", "colour red", "challenge"],
        after="sizes: 6 2 1 | turn: 1 | colour: red",
        log=["0 plays W+4", "0 names red", "1 challenges 0",
             "0 guilty, hand shown to 1: R1 G7", "0 draws Y6 Y7 Y8 Y9 (challenge_guilty)"],
    ),
    Case(
        "§13 holding only the named colour is innocent",
        "0: W+4 B1 G7 | 1: B3 G2 | 2: Y3 | draw: Y9 Y8 Y7 Y6 Y5 Y4 | discard: R5 | turn: 0",
        ["play W+4", "colour blue", "challenge"],
        after="sizes: 2 8 1 | turn: 2",
    ),
    Case(
        "§13 after a Wild, holding its named colour is guilty",
        "0: W+4 B1 G7 | 1: B3 G2 | 2: Y3 | draw: Y9 Y8 Y7 Y6 | discard: R5 W | colour: blue"
        " | turn: 0",
        ["play W+4", "colour green", "challenge"],
        after="sizes: 6 2 1 | turn: 1 | colour: green",
    ),
    Case(
        "§13 counter-clockwise: the seat to the right challenges",
        "0: W+4 R1 G7 | 1: B1 | 2: Y3 G2 | draw: Y9 Y8 Y7 Y6 | discard: R5 | turn: 0"
        " | direction: ccw",
        ["play W+4", "colour green", "challenge"],
        after="sizes: 6 1 2 | turn: 2 | direction: ccw",
        log=["0 plays W+4", "0 names green", "2 challenges 0",
             "0 guilty, hand shown to 2: R1 G7", "0 draws Y6 Y7 Y8 Y9 (challenge_guilty)"],
    ),
    Case(
        "§13 counter-clockwise innocent: the challenger loses its turn, play goes right",
        "0: W+4 G1 G7 | 1: B1 | 2: Y3 G2 | 3: B4 | draw: Y9 Y8 Y7 Y6 Y5 Y4 | discard: R5"
        " | turn: 0 | direction: ccw",
        ["play W+4", "colour green", "challenge"],
        after="sizes: 2 1 2 7 | turn: 2",
        log=["0 plays W+4", "0 names green", "3 challenges 0",
             "0 innocent, hand shown to 3: G1 G7", "3 draws Y4 Y5 Y6 Y7 Y8 Y9 (challenge_innocent)",
             "3 skipped"],
    ),
    Case(
        "§13 two players guilty: the challenger plays next",
        "0: W+4 R1 G7 | 1: B1 G2 | draw: Y9 Y8 Y7 Y6 | discard: R5 | turn: 0",
        ["play W+4", "colour blue", "challenge"],
        after="sizes: 6 2 | turn: 1 | colour: blue",
        legal=["play B1 uno", "draw"],
    ),
    Case(
        "§13 two players innocent: the offender plays again",
        "0: W+4 G1 G7 | 1: B1 G2 | draw: Y9 Y8 Y7 Y6 Y5 Y4 | discard: R5 | turn: 0",
        ["play W+4", "colour green", "challenge"],
        after="sizes: 2 8 | turn: 0 | colour: green",
        legal=["play G1 uno", "play G7 uno", "draw"],
    ),
    Case(
        "§13 a drawn Wild Draw Four played while holding the colour is guilty",
        "0: R1 G7 | 1: B1 G2 | 2: Y3 | draw: Y9 Y8 Y7 Y6 W+4 | discard: R5 | turn: 0",
        ["draw", "play W+4", "colour blue", "challenge"],
        after="0: R1 G7 Y6 Y7 Y8 Y9 | turn: 1",
        log=["0 draws W+4 (choice)", "0 plays W+4", "0 names blue", "1 challenges 0",
             "0 guilty, hand shown to 1: R1 G7", "0 draws Y6 Y7 Y8 Y9 (challenge_guilty)"],
    ),
    Case(
        "§13 the hand shown is the offender's hand after any UNO penalty",
        "0: W+4 R1 | 1: B1 G2 | 2: Y3 | draw: Y9 Y8 Y7 Y6 B8 B9 | discard: R5 | turn: 0",
        ["play W+4", "colour blue", "challenge"],
        after="sizes: 7 2 1 | turn: 1",
        log=["0 plays W+4", "0 caught without UNO", "0 draws B9 B8 (uno_penalty)",
             "0 names blue", "1 challenges 0", "0 guilty, hand shown to 1: R1 B8 B9",
             "0 draws Y6 Y7 Y8 Y9 (challenge_guilty)"],
    ),
    Case(
        "§13 an offender that called UNO and is guilty draws 4 onto its last card",
        "0: W+4 R1 | 1: B1 G2 | 2: Y3 | draw: Y9 Y8 Y7 Y6 | discard: R5 | turn: 0",
        ["play W+4 uno", "colour blue", "challenge"],
        after="0: R1 Y6 Y7 Y8 Y9 | turn: 1",
    ),
]


@pytest.mark.parametrize("case", table(CHALLENGES))
def test_challenge(case: Case) -> None:
    case.check()


@pytest.mark.parametrize(
    ("before", "guilty"),
    [
        pytest.param("0: W+4 R1 G7 | 1: B1 G2 | 2: Y3 | 3: Y4", True,
                     id="§13 guilty hand is seen by the challenger alone"),
        pytest.param("0: W+4 G1 B7 | 1: B1 G2 | 2: Y3 | 3: Y4", False,
                     id="§13 innocent hand is seen by the challenger alone"),
    ],
)
def test_verdict_hand_is_seen_by_the_challenger_alone(before: str, guilty: bool) -> None:
    round_ = position(before + " | draw: Y9 Y8 Y7 Y6 Y5 Y4 | discard: R5 | turn: 0")
    run(round_, ["play W+4", "colour green", "challenge"])
    verdicts = [e for e in round_.events if isinstance(e, ev.ChallengeVerdict)]
    assert len(verdicts) == 1
    verdict = verdicts[0]
    assert (verdict.challenger, verdict.offender, verdict.guilty) == (1, 0, guilty)
    assert len(verdict.hand) == 2
    for seat in range(4):
        seen = seen_by(verdict, seat)
        assert isinstance(seen, ev.ChallengeVerdict)
        # Everyone learns who challenged whom and the verdict; only the challenger the hand.
        assert (seen.challenger, seen.offender, seen.guilty) == (1, 0, guilty)
        assert seen.hand == (verdict.hand if seat == 1 else ())
    penalty = next(e for e in round_.events if isinstance(e, ev.Drew))
    penalised = 0 if guilty else 1
    for seat in range(4):
        seen_draw = seen_by(penalty, seat)
        assert isinstance(seen_draw, ev.Drew)
        assert seen_draw.amount == (4 if guilty else 6)
        assert seen_draw.cards == (penalty.cards if seat == penalised else ())
    assert line(seen_by(verdict, 2)) == f"0 {'guilty' if guilty else 'innocent'}, hand shown to 1"


def test_challenger_cannot_tell_guilty_from_innocent_before_challenging() -> None:
    """§13/§19: the state knows the verdict (for referee tools); the observation does not."""
    observations = []
    for hand, legal_play in (("W+4 R1 G7", False), ("W+4 B1 G7", True)):
        round_ = position(f"0: {hand} | 1: B1 G2 | 2: Y3 | discard: R5 | turn: 0")
        run(round_, ["play W+4", "colour green"])
        assert round_.wild_draw_four_was_legal() is legal_play
        observations.append(round_.observation(1))
    assert observations[0] == observations[1]
