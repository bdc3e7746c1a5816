"""What the site shows, read from the season store and the match logs (no rendering)."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any

from arena.league.outcomes import outcomes_of
from arena.league.store import SeasonStore, StoredResult, damaged
from arena.league.tiebreak import is_tiebreak, tiebreak_summary
from arena.rating import OfficialRow, SeasonRatings, rate
from arena.rating.outcome import Outcome
from arena.rating.trueskill_ratings import Leaderboard, Standing


@dataclass
class Bot:
    id: int
    name: str
    version: str
    folder: str
    content_hash: str
    manifest: dict[str, Any]
    slug: str
    standing: Standing | None = None
    """The live TrueSkill (schedule order): counters and the rating history."""
    official: OfficialRow | None = None
    """The official standings' row (None: unrated, no match recorded)."""
    rank: int = 0
    outranks_next: float | None = None
    results: list[StoredResult] = field(default_factory=list)
    seat_positions: dict[int, list[StoredResult]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


@dataclass(slots=True)
class MatchRow:
    match_id: str
    status: str
    chance: str
    """The label its deals derive under from the season key."""
    seats: list[int]
    """Entrant ids by seat."""
    results: list[StoredResult]
    """By seat (empty unless done)."""
    seconds: float | None
    decisions: int | None
    rounds: int | None
    round_limit_reached: bool
    log_path: str | None
    error: str | None
    finished_at: float | None
    log_sha256: str | None = None
    """SHA-256 of the log as recorded with the result (None: a store of an older version)."""
    round: int | None = None
    deal_matches: list[str] = field(default_factory=list)
    """The other matches of its duplicate deal (same cards, seats rotated)."""
    net: list[int] = field(default_factory=list)
    """With duplicate deals, by seat: the seat's bot's points minus the average of the
    others', summed over every match of the deal (the deal's verdict, luck of the cards
    removed)."""

    @property
    def tiebreak(self) -> bool:
        return is_tiebreak(self.match_id)

    @property
    def faults(self) -> int:
        return sum(len(r.faults) for r in self.results)

    def result_of(self, entrant_id: int) -> str:
        """won / lost / tied / placed N: the match for one of its bots."""
        mine = next((r for r in self.results if r.entrant_id == entrant_id), None)
        if mine is None:
            return ""
        best = min(r.place for r in self.results)
        if mine.place == best:
            return "tied" if sum(r.place == best for r in self.results) > 1 else "won"
        return "lost" if len(self.results) == 2 else f"place {mine.place}"


@dataclass(slots=True)
class HeadToHead:
    """The record of ``row`` against ``column``: matches where both sat at the table."""

    meetings: int = 0
    wins: float = 0.0
    """Times ``row`` finished ahead of ``column`` (ties count half)."""
    deals: int = 0
    """Duplicate deals both played (at two seats: both seat orders)."""
    deals_ahead: int = 0
    deals_even: int = 0
    net_points: int = 0
    """``row``'s points minus ``column``'s over those deals."""

    @property
    def rate(self) -> float:
        return self.wins / self.meetings if self.meetings else 0.0

    def interval(self) -> tuple[float, float]:
        """95% Wilson interval of the rate."""
        n = self.meetings
        if not n:
            return (0.0, 1.0)
        z = 1.959964
        p = self.rate
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class SeasonData:
    name: str
    settings: dict[str, Any]
    bots: dict[int, Bot]
    ranked: list[Bot]
    matches: list[MatchRow]
    head_to_head: dict[tuple[int, int], HeadToHead]
    counts: dict[str, int]
    store_path: Path
    outcomes: list[Outcome] = field(default_factory=list)
    """The results as the ratings read them (``rate_season_data``)."""
    ratings: SeasonRatings | None = None
    """None until ``attach_ratings``: ``ranked`` is then in entrant order."""
    unrated: list[Bot] = field(default_factory=list)
    groups: list[list[Bot]] = field(default_factory=list)
    """Bots the data cannot separate (they share a rank), in standings order."""
    tiebreak: dict[str, int] = field(default_factory=dict)
    key_commitment: str | None = None
    """SHA-256 of the season key (published from the start)."""
    revealed_key: str | None = None
    """The season key itself, once the organiser has revealed it (`arena season reveal`)."""

    positions: dict[str, int] = field(default_factory=dict)
    """Each match's index in ``matches`` (made when first needed)."""

    @property
    def board(self) -> Leaderboard:
        """The live TrueSkill (once the ratings are attached)."""
        if self.ratings is None:
            raise RuntimeError("the season's ratings are not attached yet")
        return self.ratings.live

    def bot(self, entrant_id: int) -> Bot:
        return self.bots[entrant_id]

    def index_of(self, match_id: str) -> int:
        """The match's place in ``matches`` (schedule order; a bot page lists hundreds:
        no scan per row)."""
        if len(self.positions) != len(self.matches):
            self.positions = {m.match_id: i for i, m in enumerate(self.matches)}
        return self.positions[match_id]

    def match(self, match_id: str) -> MatchRow:
        """The match called ``match_id``."""
        return self.matches[self.index_of(match_id)]


SLUG_BYTES = 120
"""A bot page's name, at most (UTF-8 bytes; a file name holds 255): a name of 64 letters
from beyond the first plane is 256 bytes, and a store may hold a long version."""


def _slug(name: str, version: str, taken: set[str]) -> str:
    base = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in f"{name}-{version}")
    if len(base.encode("utf-8", "surrogatepass")) > SLUG_BYTES:
        digest = hashlib.sha256(f"{name}\0{version}".encode("utf-8", "surrogatepass")
                                ).hexdigest()[:12]
        kept = base.encode("utf-8", "surrogatepass")[:SLUG_BYTES - 13]
        base = f"{kept.decode('utf-8', 'ignore')}-{digest}"
    slug, number = base, 2
    while slug in taken:
        slug, number = f"{base}-{number}", number + 1
    taken.add(slug)
    return slug


def load_season_data(store_path: Path) -> SeasonData:
    """Read everything the site shows (the store opened read-only: a run may be writing;
    StoreError if it is missing or damaged), ratings included. What it makes is kept out
    of the garbage collector's reach for the rest of the process (``_kept_for_good``)."""
    data = read_season_data(store_path)
    attach_ratings(data, rate_season_data(data))
    return data


OnOutcomes = Callable[[list[Outcome], dict[int, str]], None]
"""Called with a season's outcomes and entrants (id: name) as soon as they are read."""


def read_season_data(store_path: Path, on_outcomes: OnOutcomes | None = None
                     ) -> SeasonData:
    """``load_season_data`` but the ratings (the slowest part, ``rate_outcomes``, which
    the report computes in a helper process meanwhile, then ``attach_ratings``).
    ``on_outcomes(outcomes, names)`` is called as soon as the store is read, before
    the rest is made from it: what the ratings need is known then (the report hands it to
    a helper at once)."""
    with _kept_for_good():
        return _season_data(store_path, on_outcomes)


def rate_season_data(data: SeasonData) -> SeasonRatings:
    """The season's ratings (a pure function of ``data.outcomes`` and its entrants)."""
    return rate_outcomes(data.outcomes, {bot.id: bot.name for bot in data.bots.values()})


def rate_outcomes(outcomes: list[Outcome], names: dict[int, str]) -> SeasonRatings:
    """The ratings of these outcomes among these entrants (id: name)."""
    with _kept_for_good():
        return rate(outcomes, list(names), names=names)


def attach_ratings(data: SeasonData, ratings: SeasonRatings) -> None:
    """Give each bot its live standing and official row, and the ranked bots their order."""
    data.ratings = ratings
    for standing in ratings.live.standings:
        data.bots[standing.entrant_id].standing = standing
    official = ratings.official
    for row in official.rows:
        bot = data.bots[row.entrant_id]
        bot.official, bot.rank, bot.outranks_next = row, row.position, row.above_next
    ranked = [data.bots[row.entrant_id] for row in official.rows]
    if {b.id for b in ranked} != {b.id for b in data.ranked}:
        raise ValueError("the ratings are not the ratings of this season's results")
    data.ranked = ranked
    data.groups = [[data.bots[e] for e in group] for group in official.groups]


@contextlib.contextmanager
def _kept_for_good() -> Iterator[None]:
    """What is made inside is kept to the end of the process (the report's): Python's
    cyclic garbage collector is held off while it is made, then told to leave it be
    (``gc.freeze``). A season of 50,000 results is about a million objects, none in a
    cycle: the collector went over all of them again each time they had grown by a quarter
    (half the load, the ratings included), then three times more as the pages were made
    (about a second)."""
    if not gc.isenabled():  # the caller's own choice
        yield
        return
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        gc.enable()


def _season_data(store_path: Path, on_outcomes: OnOutcomes | None) -> SeasonData:
    store = SeasonStore(store_path, read_only=True)
    try:
        name = store.meta("name") or store_path.parent.name
        settings = store.settings()
        taken: set[str] = set()
        bots = {
            e["id"]: Bot(e["id"], e["name"], e["version"], e["folder"], e["hash"],
                         e["manifest"], _slug(e["name"], e["version"], taken))
            for e in store.entrants()
        }
        results = store.results()
        counts = store.counts()
        rows = store.match_rows()
        tiebreak = tiebreak_summary(store)
        commitment = store.meta("key_commitment")
        # The key stays secret (bots could predict deals) until the organiser reveals it.
        revealed = store.meta("season_key") if store.meta("key_revealed_at") else None
    finally:
        store.close()
    # Every result and seat names an entrant the store holds (else the store is damaged:
    # no page could name that bot).
    strangers = ({r.entrant_id for r in results}.union(*(row.seats for row in rows))
                 - bots.keys())
    if strangers:
        raise damaged(store_path, "matches name entrant(s) "
                      f"{', '.join(map(repr, sorted(strangers, key=repr)[:5]))}, which it "
                      "does not hold")
    # Rated from the rows just read (what ``season_ratings`` reads again from the store).
    outcomes = outcomes_of(results, {row.match_id: row.chance for row in rows})
    if on_outcomes is not None:
        on_outcomes(outcomes, {bot.id: bot.name for bot in bots.values()})
    for result in results:
        bot = bots[result.entrant_id]
        bot.results.append(result)
        bot.seat_positions.setdefault(result.seat, []).append(result)
    # Ranked: the bots that played (in entrant order until ``attach_ratings`` orders them
    # as the official standings do). Unrated: entrants that played no match; an older
    # version of a bot that was replaced before it played (same name, another content
    # hash) is not listed at all.
    ranked = [bot for bot in bots.values() if bot.results]
    current = {(b.name, b.folder) for b in ranked}
    unrated = [bot for bot in bots.values()
               if not bot.results and (bot.name, bot.folder) not in current]
    # The store gives the results by match, then seat, and the matches in the same order:
    # each match's results are the next group (no look-up in a dict of 80,000 matches).
    tables = [list(seats) for _, seats in itertools.groupby(results, attrgetter("match_id"))]
    head_to_head = _meetings(tables)
    matches = []
    following = iter(tables)
    table = next(following, None)
    for stored in rows:
        while table is not None and table[0].match_id < stored.match_id:
            table = next(following, None)  # results of a match the store does not list
        match_results: list[StoredResult] = []
        if table is not None and table[0].match_id == stored.match_id:
            match_results, table = table, next(following, None)
        matches.append(MatchRow(
            stored.match_id, stored.status, stored.chance, stored.seats, match_results,
            stored.seconds, stored.decisions, stored.rounds, bool(stored.round_limit_reached),
            stored.log_path, stored.error, stored.finished_at, stored.log_sha256, stored.round))
    _duplicate_deals(matches, head_to_head)
    return SeasonData(name, settings, bots, ranked, matches, dict(head_to_head), counts,
                      store_path, outcomes=outcomes, unrated=unrated, tiebreak=tiebreak,
                      key_commitment=commitment, revealed_key=revealed)


def _meetings(tables: list[list[StoredResult]]) -> defaultdict[tuple[int, int], HeadToHead]:
    """Every two bots' record at the tables they shared, by (bot, other bot)."""
    head_to_head: defaultdict[tuple[int, int], HeadToHead] = defaultdict(HeadToHead)
    for seats in tables:
        for a, b in itertools.permutations(seats, 2):
            if a.entrant_id == b.entrant_id:  # one bot at two seats: no record against itself
                continue
            record = head_to_head[(a.entrant_id, b.entrant_id)]
            record.meetings += 1
            record.wins += 1.0 if a.place < b.place else 0.5 if a.place == b.place else 0.0
    return head_to_head


def _duplicate_deals(matches: list[MatchRow],
                     head_to_head: defaultdict[tuple[int, int], HeadToHead]) -> None:
    """Pair up the matches of each duplicate deal: partners, net points per seat, and the
    deal's verdict for every two bots that played all of it."""
    deals: dict[str, list[MatchRow]] = defaultdict(list)
    for match in matches:
        if match.chance != match.match_id:
            deals[match.chance].append(match)
    for members in deals.values():
        ids = [m.match_id for m in members]
        for index, match in enumerate(members):
            match.deal_matches = ids[:index] + ids[index + 1:]
        if any(m.status != "done" or not m.results for m in members):
            continue
        points: dict[int, float] = {}
        totals: dict[int, int] = {}
        played: dict[int, int] = {}
        for match in members:
            table, others = sum(r.score for r in match.results), len(match.results) - 1
            for r in match.results:
                entrant, score = r.entrant_id, r.score
                # The seat's points minus the others' average, over the deal.
                points[entrant] = points.get(entrant, 0.0) + (score - (table - score) / others)
                totals[entrant] = totals.get(entrant, 0) + score
                played[entrant] = played.get(entrant, 0) + 1
        for match in members:
            match.net = [round(points[r.entrant_id]) for r in match.results]
        # Not a bot that played only part of it (replaced by a new version in between).
        entrants = sorted([e for e, count in played.items() if count == len(members)])
        for a, b in itertools.permutations(entrants, 2):
            margin = totals[a] - totals[b]
            record = head_to_head[(a, b)]
            record.deals += 1
            record.net_points += margin
            record.deals_ahead += margin > 0
            record.deals_even += margin == 0


def read_match_log(path: Path) -> list[dict[str, Any]]:
    from arena.referee.log import read_log

    return list(read_log(path))
