"""The referee: a gRPC server per match, seats bound by tokens, deadlines, faults, logs."""

from arena.referee.launch import BotProcess, SeatLauncher
from arena.referee.match import Limits, MatchOutcome, MatchSpec, SeatReport, run_match

__all__ = [
    "BotProcess", "Limits", "MatchOutcome", "MatchSpec", "SeatLauncher", "SeatReport",
    "run_match",
]
