"""Ratings over a season's results: the live TrueSkill (schedule order, the running rating
during a season) and the official standings (an order-independent fit with rank intervals).

This package reads ``Outcome`` values only; it never imports the league."""

from arena.rating.official import OfficialRow, OfficialStandings, official_standings
from arena.rating.outcome import Outcome
from arena.rating.standings import SeasonRatings, rate
from arena.rating.trueskill_ratings import (
    ENVIRONMENT,
    Leaderboard,
    Standing,
    calibrated_draw_probability,
    rate_season,
)

__all__ = ["ENVIRONMENT", "Leaderboard", "OfficialRow", "OfficialStandings", "Outcome",
           "SeasonRatings", "Standing", "calibrated_draw_probability", "official_standings",
           "rate", "rate_season"]
