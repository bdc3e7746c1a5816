"""The fault policy of docs/rules.md §20: strikes, default actions, disqualification."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from arena.bots.policies import most_held_colour
from arena.rules.actions import (
    ACCEPT,
    CHOOSE_COLOUR,
    CHOOSE_SEAT,
    DRAW,
    GIVE_CARD,
    KEEP,
    PASS,
    Action,
    DecisionKind,
)
from arena.rules.cards import CARD_RANK
from arena.rules.observation import Observation


class FaultKind(IntEnum):
    """Mirrors ``uno_arena.v1.FaultKind``."""

    TIMEOUT = 1
    ILLEGAL_ACTION = 2
    OUT_OF_TURN = 3
    MALFORMED = 4
    DISCONNECTED = 5
    NO_HELLO = 6
    STRIKE_LIMIT = 7
    UNSUPPORTED_VARIANTS = 8
    FLOODED = 9


DISQUALIFYING = frozenset({FaultKind.DISCONNECTED, FaultKind.NO_HELLO, FaultKind.STRIKE_LIMIT,
                           FaultKind.UNSUPPORTED_VARIANTS, FaultKind.FLOODED})


@dataclass(frozen=True)
class Fault:
    seat: int
    kind: FaultKind
    reason: str
    strikes: int
    disqualified: bool
    penalised: bool = False
    """§32 ``mistake_penalty``: the seat drew 2 cards instead of taking a strike."""

    def to_record(self) -> dict[str, object]:
        record: dict[str, object] = {
            "seat": self.seat, "kind": self.kind.name.lower(), "reason": self.reason,
            "strikes": self.strikes, "disqualified": self.disqualified}
        if self.penalised:
            record["penalised"] = True
        return record


def default_action(observation: Observation) -> Action:
    """§20: what the referee plays for a struck bot: draw, keep, accept, its main colour;
    under the variants: accept the pending penalty, pass a jump-in or an exchange, swap with
    the next seat still holding cards, give its first card."""
    decision = observation.decision
    if decision is DecisionKind.PLAY_OR_DRAW:
        return DRAW
    if decision is DecisionKind.PLAY_DRAWN_OR_KEEP:
        return KEEP
    if decision is DecisionKind.CHALLENGE_OR_ACCEPT or (
        decision is DecisionKind.STACK_OR_ACCEPT
    ):
        return ACCEPT
    if decision is DecisionKind.JUMP_IN_OR_PASS:
        return PASS
    if decision is DecisionKind.CHOOSE_SEAT:
        if CARD_RANK[observation.top_card] == 5:  # §24: the exchange may be passed
            return PASS
        players = len(observation.hand_sizes)  # §23: a seat must be named
        seats = [(observation.seat + offset) % players for offset in range(1, players)]
        return CHOOSE_SEAT + next((s for s in seats if observation.hand_sizes[s]), seats[0])
    if decision is DecisionKind.GIVE_CARD:
        return GIVE_CARD + observation.hand[0]
    return CHOOSE_COLOUR + most_held_colour(observation.hand)
