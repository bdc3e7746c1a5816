"""Rule options: one frozen value holding every choice, official rules by default."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class RuleOptions:
    """The rule set of a match. The defaults are the official Mattel rules (RULES.md)."""

    target_score: int = 500
    """§16: the match ends after the round in which a seat reaches this score."""
    alternative_scoring: bool = False
    """§17: each seat scores its own leftover points; lowest total wins."""
    two_player_reverse_is_skip: bool = True
    """§11: with two players a Reverse acts as a Skip (the official two-player rule)."""
    turn_limit: int = 1000
    """§18: a round that would start turn ``turn_limit + 1`` ends stalled, no points."""
    round_limit: int = 100
    """§18: a match that has played this many rounds ends as it stands."""
    hand_size: int = 7
    """§6: cards dealt to each seat."""

    def __post_init__(self) -> None:
        problems = []
        for option in fields(self):
            value = getattr(self, option.name)
            wanted = bool if option.type in ("bool", bool) else int
            if type(value) is not wanted:  # bool is an int subclass: compare exactly
                kind = "true or false" if wanted is bool else "a whole number"
                raise ValueError(f"{option.name} must be {kind}, not {value!r}")
        if self.target_score < 1:
            problems.append(f"target_score must be at least 1, not {self.target_score}")
        if self.turn_limit < 1:
            problems.append(f"turn_limit must be at least 1, not {self.turn_limit}")
        if self.round_limit < 1:
            problems.append(f"round_limit must be at least 1, not {self.round_limit}")
        if not 1 <= self.hand_size <= 10:
            problems.append(f"hand_size must be 1..10, not {self.hand_size}")
        if problems:
            raise ValueError("; ".join(problems))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleOptions:
        """Build from a mapping, naming any unknown option (for season files and logs)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"unknown rule option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        return cls(**data)


OFFICIAL = RuleOptions()
