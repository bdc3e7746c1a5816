"""A season's stored results as the ratings read them (``Outcome``): what the standings
and the report rate, without the run's machinery (the report imports only this)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from arena.league.store import SeasonStore, StoredResult
from arena.rating import Outcome


def season_outcomes(store: SeasonStore) -> list[Outcome]:
    return outcomes_of(store.results(), store.chances())


def outcomes_of(results: Iterable[StoredResult], chances: Mapping[str, str]
                ) -> list[Outcome]:
    """Stored results as the rating code reads them; ``chances``: each match's deal label
    (shared by the matches of a duplicate deal, which the bootstrap resamples together)."""
    return [Outcome(match_id, entrant_id, seat, place, score, rounds_won, strikes,
                    disqualified, faults,
                    "" if (chance := chances.get(match_id, match_id)) == match_id else chance)
            for match_id, entrant_id, seat, place, score, rounds_won, strikes, disqualified,
            faults in results]
