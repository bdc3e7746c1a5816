"""A bot as anyone sees it: its matches (opponents, result, score, rating change), its
record, and every two bots' head-to-head on the ladder; the same for pages and the API."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from arena.rating.trueskill_ratings import MU, Leaderboard, Standing
from arena.report.charts import rating_chart
from arena.report.data import Bot as ReportBot
from arena.report.data import HeadToHead
from arena.server.kept import Kept
from arena.server.store import LeagueStore, StoredMatch, Version


@dataclass(frozen=True)
class MatchLine:
    """One finished match of a bot's, from its seat."""

    match_id: str
    kind: str
    finished_at: float | None
    version: int
    """The number of the bot's version that played."""
    opponents: tuple[tuple[str, int], ...]
    """Each other seat's bot and place."""
    place: int
    score: int
    result: str
    """``won``, ``lost``, ``tied`` or ``place N``."""
    rating_change: float | None
    """The version's mu after the match, less its mu before (None for the final's
    matches, which the ladder's ratings leave out)."""

    def to_json(self) -> dict[str, Any]:
        return {"match_id": self.match_id, "kind": self.kind, "finished_at": self.finished_at,
                "version": self.version, "place": self.place, "score": self.score,
                "result": self.result, "rating_change": self.rating_change,
                "opponents": [{"bot": bot, "place": place} for bot, place in self.opponents]}


def _result(place: int, places: list[int]) -> str:
    best = min(places)
    if place == best:
        return "tied" if places.count(best) > 1 else "won"
    return "lost" if len(places) == 2 else f"place {place}"


def rating_changes(standing: Standing) -> dict[str, float]:
    """By match id: how the version's mu moved in that match."""
    changes, before = {}, MU
    for match_id, mu, _ in standing.history:
        changes[match_id] = mu - before
        before = mu
    return changes


def match_lines(store: LeagueStore, versions: list[Version], standings: dict[int, Standing],
                matches: list[StoredMatch]) -> list[MatchLine]:
    """The bot's seat in each of ``matches`` (finished ones, newest first as given)."""
    mine = {v.id: v for v in versions}
    every = {v.id: v for v in store.versions()}
    changes = {v.id: rating_changes(standings[v.id]) for v in versions if v.id in standings}
    results: dict[str, list[Any]] = defaultdict(list)
    for result in store.results(match_ids=[m.match_id for m in matches]):
        results[result.match_id].append(result)
    lines = []
    for match in matches:
        seats = results.get(match.match_id, [])
        own = next((r for r in seats if r.version_id in mine), None)
        if own is None:
            continue
        places = [r.place for r in seats]
        lines.append(MatchLine(
            match.match_id, match.kind, match.finished_at, mine[own.version_id].number,
            tuple((every[r.version_id].bot, r.place) for r in seats
                  if r.version_id not in mine),
            own.place, own.score, _result(own.place, places),
            changes.get(own.version_id, {}).get(match.match_id)))
    return lines


@dataclass(frozen=True)
class Record:
    """A bot's ladder record over all its versions."""

    matches: int
    wins: int
    last_played: float | None

    @property
    def win_rate(self) -> float | None:
        return self.wins / self.matches if self.matches else None


def record(store: LeagueStore, bot_id: int) -> Record:
    rows = store.db.execute(
        "SELECT COUNT(*), SUM(r.place = (SELECT MIN(o.place) FROM results o "
        "WHERE o.match_id = r.match_id) AND (SELECT COUNT(*) FROM results o WHERE "
        "o.match_id = r.match_id AND o.place = r.place) = 1), MAX(m.finished_at) "
        "FROM results r JOIN matches m ON m.match_id = r.match_id "
        "JOIN versions v ON v.id = r.version_id WHERE v.bot_id = ? AND m.kind = 'ladder'",
        (bot_id,)).fetchone()
    return Record(int(rows[0] or 0), int(rows[1] or 0), rows[2])


HEAD_TO_HEAD: Kept[tuple[object, ...], dict[tuple[str, str], HeadToHead]] = Kept(4)
"""By the store and its count of recorded ladder matches (what the table is a function of)."""


def head_to_head(store: LeagueStore, key: object) -> dict[tuple[str, str], HeadToHead]:
    """Every two bots' ladder record at the tables they shared, by (bot, other bot) name:
    how often the first finished ahead (ties count half)."""
    cache_key = (key, store.done_count("ladder"))
    found = HEAD_TO_HEAD.get(cache_key)
    if found is not None:
        return found
    bot_of = {v.id: v.bot for v in store.versions()}
    tables: dict[str, list[Any]] = defaultdict(list)
    for result in store.results(kind="ladder"):
        tables[result.match_id].append(result)
    records: dict[tuple[str, str], HeadToHead] = defaultdict(HeadToHead)
    for seats in tables.values():
        for a, b in itertools.permutations(seats, 2):
            first, second = bot_of[a.version_id], bot_of[b.version_id]
            if first == second:
                continue
            entry = records[(first, second)]
            entry.meetings += 1
            entry.wins += 1.0 if a.place < b.place else 0.5 if a.place == b.place else 0.0
    found = dict(records)
    HEAD_TO_HEAD.put(cache_key, found)
    return found


def head_to_head_json(records: dict[tuple[str, str], HeadToHead]) -> list[dict[str, Any]]:
    return [{"bot": bot, "opponent": other, "meetings": h.meetings, "wins": h.wins,
             "rate": h.rate, "interval": list(h.interval())}
            for (bot, other), h in sorted(records.items())]


def chart(version: Version, standing: Standing, board: Leaderboard) -> Markup:
    """The version's rating history, on the axis every chart of the ladder shares."""
    bot = ReportBot(version.id, version.bot, f"v{version.number}", version.folder,
                    version.content_hash, {}, version.bot, standing=standing)
    return rating_chart(bot, chart_range(board))


CHART_RANGES: Kept[int, tuple[Leaderboard, tuple[float, float]]] = Kept(4)
"""By the ratings' id, each with the ratings themselves (held: their id is not reused)."""


def chart_range(board: Leaderboard) -> tuple[float, float]:
    """The rating axis every chart shares: the ladder's whole range, mu +- sigma over every
    version's history (a value per result: read once per ratings, which are cached too)."""
    found = CHART_RANGES.get(id(board))
    if found is not None and found[0] is board:
        return found[1]
    values = [mu + k * sigma for s in board.standings for _, mu, sigma in s.history
              for k in (-1, 1)]
    low, high = (min(values) - 1, max(values) + 1) if values else (0.0, 50.0)
    bounds = (low if math.isfinite(low) else 0.0, high)
    CHART_RANGES.put(id(board), (board, bounds))
    return bounds
