"""A match's clock (docs/rules.md §20): each decision's deadline, and each seat's time bank that
pays for answers later than it; an untimed seat (a person's, ``arena play --human``) has
neither."""

from __future__ import annotations

import math
from collections.abc import Collection

from arena.referee.limits import Limits


class TimeBank:
    """Each seat's time bank, in seconds: an answer later than the deadline spends the
    difference from it, and a timeout empties it. The ``untimed`` seats' requests never
    expire and their banks are never spent."""

    def __init__(self, limits: Limits, players: int, untimed: Collection[int] = ()) -> None:
        self.deadline = limits.decision_deadline
        self.left = [limits.time_bank] * players
        self.untimed = frozenset(untimed)

    def until(self, seat: int, asked: float) -> float:
        """When a request sent to ``seat`` at ``asked`` expires (the same clock); infinity
        for an untimed seat."""
        if seat in self.untimed:
            return math.inf
        return asked + self.deadline + self.left[seat]

    def charge(self, seat: int, latency: float) -> None:
        """``seat`` answered ``latency`` seconds after it was asked."""
        if latency > self.deadline and seat not in self.untimed:
            self.left[seat] = max(0.0, self.left[seat] - (latency - self.deadline))

    def empty(self, seat: int) -> None:
        """``seat`` let a request expire."""
        self.left[seat] = 0.0
