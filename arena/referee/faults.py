"""The fault policy of RULES.md §20: strikes, default actions, disqualification."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from arena.bots.policies import most_held_colour
from arena.rules.actions import ACCEPT, CHOOSE_COLOUR, DRAW, KEEP, Action, DecisionKind
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
    FLOODED = 8


DISQUALIFYING = frozenset({FaultKind.DISCONNECTED, FaultKind.NO_HELLO, FaultKind.STRIKE_LIMIT,
                           FaultKind.FLOODED})


@dataclass(frozen=True)
class Fault:
    seat: int
    kind: FaultKind
    reason: str
    strikes: int
    disqualified: bool

    def to_record(self) -> dict[str, object]:
        return {"seat": self.seat, "kind": self.kind.name.lower(), "reason": self.reason,
                "strikes": self.strikes, "disqualified": self.disqualified}


def default_action(observation: Observation) -> Action:
    """§20: what the referee plays for a struck bot: draw, keep, accept, its main colour."""
    decision = observation.decision
    if decision is DecisionKind.PLAY_OR_DRAW:
        return DRAW
    if decision is DecisionKind.PLAY_DRAWN_OR_KEEP:
        return KEEP
    if decision is DecisionKind.CHALLENGE_OR_ACCEPT:
        return ACCEPT
    return CHOOSE_COLOUR + most_held_colour(observation.hand)
