"""TrueSkill ratings over a season's results."""

from arena.rating.trueskill_ratings import (
    ENVIRONMENT,
    Leaderboard,
    Standing,
    rate_season,
)

__all__ = ["ENVIRONMENT", "Leaderboard", "Standing", "rate_season"]
