"""A match's time and fault limits, on their own: a season file names them, and reading
one needs none of the referee's gRPC."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SECONDS_RANGES = {
    "decision_deadline": (0.01, 3600.0),
    "time_bank": (0.0, 86400.0),
    "hello_timeout": (0.1, 3600.0),
}
"""What each time limit may be, in seconds (finite, and within what a request's uint32
milliseconds carry): a season file or a command line giving more is refused."""
MOST_STRIKES = 1000
"""Strikes before a bot is disqualified, at most."""


@dataclass(frozen=True)
class Limits:
    """Time and fault limits (docs/rules.md §20), recorded in every log."""

    decision_deadline: float = 1.0
    """Seconds to answer one decision before the time bank is used."""
    time_bank: float = 10.0
    """Extra seconds for the whole match."""
    strike_limit: int = 3
    hello_timeout: float = 10.0
    """Seconds for every bot to connect and say hello."""

    def to_record(self) -> dict[str, Any]:
        return {"decision_deadline": self.decision_deadline, "time_bank": self.time_bank,
                "strike_limit": self.strike_limit, "hello_timeout": self.hello_timeout}
