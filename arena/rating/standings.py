"""A season's ratings in one call: the live TrueSkill and the official standings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.rating.official import OfficialStandings, official_standings
from arena.rating.outcome import Outcome
from arena.rating.trueskill_ratings import (
    Leaderboard,
    Standing,
    calibrated_draw_probability,
    rate_season,
)


@dataclass(frozen=True)
class SeasonRatings:
    live: Leaderboard
    """TrueSkill in schedule order, with the draw probability calibrated from the season's
    ties: the running rating, and each entrant's counters and history."""
    official: OfficialStandings
    """The order-independent fit with rank intervals: the standings."""

    def standing(self, entrant_id: int) -> Standing:
        return next(s for s in self.live.standings if s.entrant_id == entrant_id)


def rate(outcomes: Sequence[Outcome], entrant_ids: Sequence[int],
         resamples: int | None = None, names: Mapping[int, str] | None = None
         ) -> SeasonRatings:
    """The live TrueSkill and the official standings; ``names`` order the entrants the
    official fit ties exactly (``official_standings``)."""
    draw = calibrated_draw_probability(outcomes)
    live = rate_season(outcomes, entrant_ids, draw)
    official = (official_standings(outcomes, entrant_ids, names=names) if resamples is None
                else official_standings(outcomes, entrant_ids, resamples, names=names))
    return SeasonRatings(live, official)
