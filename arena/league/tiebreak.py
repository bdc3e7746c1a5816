"""The tie-break stage: extra matches among entrants the standings cannot separate.

When the season's schedule is played and ``[tiebreak] enabled`` is set, every group of
entrants whose rank intervals overlap (``OfficialStandings.groups``) plays a *batch*:
``batch`` matches per pair (per group of ``table_size`` at larger tables; a group smaller
than the table is joined by the entrants ranked right around it). Then the standings are
fitted again, with the bootstrap over every result so far, and a group whose intervals
no longer overlap is settled. This repeats (a sequential test, one look per batch) until
no group is left or the next batch would pass ``max_matches`` extra matches in all; the
standings then show what the data separated and declare the rest a tie. Repeated looks
make an early "separated" a little more likely than one fixed-size test would; the cap
and the 95% rank intervals keep that small, and a group is only ever declared
separated by the same rule the main standings use.

Tie-break matches are stored like the others (ids ``t001-0001``, sorting after the
schedule's ``m…`` ids, so the live rating applies them last), scheduled a batch at a time:
a season stopped mid-stage resumes the batch in flight, then decides the next.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from arena.league.schedule import ScheduledMatch, schedule
from arena.league.season import Season
from arena.league.store import SeasonStore

if TYPE_CHECKING:  # the ratings (numpy, scipy) are imported where they are computed
    from arena.rating.official import OfficialStandings

PREFIX = "t"


def is_tiebreak(match_id: str) -> bool:
    return match_id.startswith(PREFIX)


def played_batches(store: SeasonStore) -> tuple[int, int, bool]:
    """(batches scheduled, tie-break matches scheduled, any of them not yet done)."""
    summary = tiebreak_summary(store)
    return summary["batches"], summary["matches"], summary["done"] < summary["matches"]


def tables_for(group: Sequence[int], order: Sequence[int], table_size: int
               ) -> list[tuple[int, ...]]:
    """The tables a tied group plays at (entrant ids): all its groups of ``table_size``,
    or, when it is smaller than a table, one table filled with the entrants ranked
    nearest to it."""
    members = list(group)
    if len(members) < table_size:
        first = min(order.index(e) for e in members)
        last = max(order.index(e) for e in members)
        below, above = order[last + 1:], list(reversed(order[:first]))
        fillers = [e for pair in itertools.zip_longest(below, above) for e in pair
                   if e is not None]
        members += fillers[:table_size - len(members)]
        return [tuple(sorted(members, key=order.index))]
    return list(itertools.combinations(sorted(members, key=order.index), table_size))


def next_batch(season: Season, store: SeasonStore, standings: OfficialStandings,
               entrant_ids: Sequence[int]) -> list[ScheduledMatch]:
    """The next batch of tie-break matches (entrant indices, as the schedule), or [] when
    the stage is over: off, nothing tied, a batch still in flight, or the cap reached."""
    settings = season.tiebreak
    if not settings.enabled or not standings.groups:
        return []
    batches, scheduled, in_flight = played_batches(store)
    if in_flight:
        return []
    order = [row.entrant_id for row in standings.rows]
    index_of = {entrant: i for i, entrant in enumerate(entrant_ids)}
    tables = [table for group in standings.groups
              for table in tables_for(group, order, season.table_size)]
    tables = [t for t in tables if all(e in index_of for e in t)]
    if not tables or scheduled + len(tables) * settings.batch > settings.max_matches:
        return []
    batch = batches + 1
    matches: list[ScheduledMatch] = []
    for table_number, table in enumerate(tables):
        # The table's own little schedule gives balanced seats (and duplicate deals).
        local = schedule(season.table_size, season.table_size, settings.batch,
                         season.duplicate_deals)
        for match in local:
            match_id = f"{PREFIX}{batch:03d}-{len(matches) + 1:04d}"
            chance = (f"deal/t{batch:03d}.{table_number}/{match.deal}"
                      if season.duplicate_deals else match_id)
            seats = tuple(index_of[table[i]] for i in match.seats)
            matches.append(ScheduledMatch(match_id, seats, chance, -1 - table_number,
                                          match.deal, 0))
    return matches


def scheduled_tiebreak(store: SeasonStore, entrant_ids: Sequence[int]
                       ) -> list[ScheduledMatch]:
    """The tie-break matches already in the store, as scheduled matches (entrant indices)."""
    index_of = {entrant: i for i, entrant in enumerate(entrant_ids)}
    out = []
    for row in store.matches(prefix=PREFIX):
        seats = tuple(index_of[e] for e in row["seats"])
        out.append(ScheduledMatch(row["match_id"], seats, row["chance"], row["grp"],
                                  row["deal"], row["round"] or 0))
    return out


def tiebreak_summary(store: SeasonStore) -> dict[str, int]:
    """Batches and matches of the tie-break stage, and how many of them are done."""
    rows = store.match_rows(prefix=PREFIX)
    return {"batches": len({row.match_id[1:4] for row in rows}),
            "matches": len(rows),
            "done": sum(1 for row in rows if row.status == "done")}
