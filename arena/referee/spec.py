"""What a match is given and what it gives back: its spec, its seats, its outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.bots.policies import Policy
from arena.referee.faults import Fault
from arena.referee.launch import SeatLauncher
from arena.referee.limits import Limits
from arena.rules.options import OFFICIAL, RuleOptions
from arena.rules.seeds import MatchSeed


@dataclass(frozen=True)
class MatchSpec:
    match_id: str
    seed: int | MatchSeed
    """Where the deals come from: a secret key (seasons, ``arena play``) or a public seed."""
    players: int
    options: RuleOptions = OFFICIAL
    limits: Limits = field(default_factory=Limits)
    log_path: Path | None = None
    sandbox: dict[str, Any] = field(default_factory=dict)
    """How the bots are isolated (backend, resource limits, warnings); logged in the header."""
    entered: tuple[tuple[str, str] | None, ...] = ()
    """The name and version each seat is entered as (its bot.toml), which the log, pages
    and terminals show: a bot's hello could otherwise name it anything, another entrant
    or a verdict on one. A seat not listed (a bot started by hand) is shown as its hello
    says, its control characters escaped."""
    untimed: frozenset[int] = frozenset()
    """Seats with no clock: a person's (``arena play --human``) is never timed out and
    spends no time bank; every other seat keeps ``limits``. Logged in the header."""


@dataclass(frozen=True)
class InProcessSeat:
    """A seat played by an in-process policy (for ``arena check`` and tests)."""

    policy: Policy
    name: str
    version: str = "built-in"


Seat = SeatLauncher | InProcessSeat | None


@dataclass
class SeatReport:
    seat: int
    name: str = ""
    version: str = ""
    connected: bool = False
    strikes: int = 0
    disqualified: bool = False
    faults: list[Fault] = field(default_factory=list)
    decisions: int = 0
    think_seconds: float = 0.0
    asked: dict[str, int] = field(default_factory=dict)
    """Decision kinds this seat was asked, by name."""
    mishandled: dict[str, int] = field(default_factory=dict)
    """Decision kinds it answered late, illegally or not at all (the default was played)."""


@dataclass(frozen=True)
class MatchOutcome:
    match_id: str
    seed: int | MatchSeed
    scores: tuple[int, ...]
    places: tuple[int, ...]
    rounds: int
    round_limit_reached: bool
    seats: tuple[SeatReport, ...]
    rounds_won: tuple[int, ...]
    decisions: int
    seconds: float
    """Wall time of the whole match, bot start-up and the log's encoding included."""
    play_seconds: float
    """Wall time from match start to match end (start-up excluded)."""
    log_path: Path | None

    @property
    def disqualified(self) -> tuple[int, ...]:
        return tuple(s.seat for s in self.seats if s.disqualified)
