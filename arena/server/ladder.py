"""The ladder's arithmetic: live ratings of the versions, the matchmaker, the phase, and
the final's schedule and standings. No threads and no processes here (``service`` runs
them); everything is read from the store and returned as values.

Ratings: each version is an entrant of the live TrueSkill (``arena.rating``), its ladder
matches applied in match-id order (the order they were made). A new version starts with
the prior's uncertainty; under ``new_version_rating = "carry_mean"`` it starts from its
predecessor's mean at that point. A bot's row on the ladder is its newest active (or, once
it has none, newest rated) version; its older versions keep their history.

Matchmaking, one table at a time while slots are free, by ``arena.server.matchmaking``'s
rule (placement matches first, then whoever is overdue, then the match that teaches the
ladder most about its order, with a cap on one pair's repeats), over the ratings, the
matches each pair of versions has played and how long each version has waited. A version
plays one match at a time, an author's bots at most ``max_running_per_author`` at once,
and an author's bots never meet unless ``same_author_matches``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from arena.league.schedule import schedule, too_large
from arena.rating.official import OfficialStandings, official_standings
from arena.rating.outcome import Outcome
from arena.rating.trueskill_ratings import Leaderboard, Standing, rate_season
from arena.server import matchmaking
from arena.server.config import PHASES, League
from arena.server.kept import Kept
from arena.server.store import LeagueStore, Recorded, Result, Version

Value = TypeVar("Value")


def outcomes(results: Sequence[Result], deals: dict[str, str] | None = None) -> list[Outcome]:
    return [Outcome(r.match_id, r.version_id, r.seat, r.place, r.score, r.rounds_won,
                    r.strikes, r.disqualified, r.faults,
                    deal=(deals or {}).get(r.match_id, ""))
            for r in results]


_CACHE_SIZE = 8
_cache: Kept[tuple[object, ...], Any] = Kept(_CACHE_SIZE)
"""Ratings by what they are a pure function of: each page and each matchmaking step would
otherwise replay every result."""


def _cached(key: tuple[object, ...], compute: Callable[[], Value]) -> Value:
    return cast(Value, _cache.make(key, compute))


def ladder_ratings(store: LeagueStore, league: League) -> Leaderboard:
    """The live TrueSkill of every version over the ladder's results."""
    versions = store.versions()
    inherit = {}
    if league.ladder.new_version_rating == "carry_mean":
        inherit = {v.id: v.predecessor for v in versions if v.predecessor is not None}
    identity = _identity(store)
    key = ("ladder", str(store.path), identity, store.recorded("ladder"),
           tuple(sorted((v.id, v.predecessor or 0) for v in versions)),
           tuple(sorted(inherit.items())))
    return _cached(key, lambda: _rate_ladder(store, [v.id for v in versions], inherit,
                                             identity))


def _identity(store: LeagueStore) -> str:
    """Which store this is: the SHA-256 of its ladder key (every store draws its own; the
    secret is not kept a second time)."""
    return hashlib.sha256((store.meta("ladder_key") or "").encode()).hexdigest()


@dataclass(frozen=True)
class _Settled:
    """The ladder's ratings after its settled matches (``LeagueStore.settled``): what the
    next ratings go on from, rating only the matches after them."""
    store: str
    """Which store (``_identity``) ..."""
    through: str
    recorded: Recorded
    """... and what it had recorded up to ``through`` (``LeagueStore.recorded``): another
    store put in its place differs in the first, a backup of it restored and played on
    in the second."""
    standings: tuple[Standing, ...]
    """Never changed (``rate_season`` copies what it starts from)."""
    inherit: dict[int, int]


_settled: Kept[str, _Settled] = Kept(_CACHE_SIZE)
"""By store path, the few last used."""


def _rate_ladder(store: LeagueStore, entrants: list[int], inherit: dict[int, int],
                 identity: str) -> Leaderboard:
    """``rate_season`` over every ladder result, each result read and rated once: the
    ratings after the settled matches are kept, and the next ratings start from them (at
    50,000 matches the ladder's page after a new result takes 69 ms rather than 1.4 s,
    ``benchmarks/league_pages.py``; the same figures, to the bit,
    ``tests/server/test_store_and_ladder.py``)."""
    through, recorded = store.settled("ladder")  # before the results: see ``settled``
    kept = _settled.get(str(store.path))
    if kept is not None and not (
            through is not None and kept.through <= through and kept.store == identity
            and store.recorded("ladder", kept.through) == kept.recorded
            and all(inherit.get(s.entrant_id) == kept.inherit.get(s.entrant_id)
                    for s in kept.standings if s.matches)):
        # Another store at that path, a backup of it restored, or settings that rate
        # differently: never again (not even once the store is as it was).
        _settled.drop(str(store.path), kept)
        kept = None
    start = kept.standings if kept is not None else ()
    new = outcomes(store.results("ladder", after=kept.through if kept else None))
    if through is not None and (kept is None or through > kept.through):
        settling = [o for o in new if o.match_id <= through]
        board = rate_season(settling, entrants, inherit=inherit, start=start)
        _settled.put(str(store.path), _Settled(identity, through, recorded,
                                               board.standings, dict(inherit)))
        start = board.standings
        new = [o for o in new if o.match_id > through]
    return rate_season(new, entrants, inherit=inherit, start=start)


@dataclass(frozen=True)
class LadderRow:
    rank: int | None
    """1-based among bots still entered, shared by equal ratings (None: withdrawn or
    disqualified; a retired bot has no row)."""
    version: Version
    standing: Standing
    versions: int
    """How many versions the bot has had."""


def ladder_rows(store: LeagueStore, board: Leaderboard) -> list[LadderRow]:
    """One row per bot with an active or rated version but retired ones, best first by
    mu - 3 sigma."""
    standings = {s.entrant_id: s for s in board.standings}
    by_bot: dict[int, list[Version]] = defaultdict(list)
    for version in store.versions():
        by_bot[version.bot_id].append(version)
    rows = []
    for versions in by_bot.values():
        active = [v for v in versions if v.status == "active"]
        rated = [v for v in versions if standings[v.id].matches]
        shown = max(active or rated, key=lambda v: v.number, default=None)
        if shown is None or shown.bot_state == "retired":  # retired: off the standings
            continue
        rows.append((shown, standings[shown.id], len(versions)))
    # Equal ratings share a rank (1, 1, 3) and are listed by submission (the version's id),
    # not by name: a name chosen to sort first ("0...", "AAA") would be shown at rank 1
    # among the unrated.
    rows.sort(key=lambda r: (r[0].bot_state != "entered", -r[1].conservative, r[0].id))
    ranked = []
    place = 0
    rank = 0
    previous: float | None = None
    for version, standing, count in rows:
        entered = version.bot_state == "entered"
        if entered:
            place += 1
            if standing.conservative != previous:
                rank, previous = place, standing.conservative
        ranked.append(LadderRow(rank if entered else None, version, standing, count))
    return ranked


def pick_tables(store: LeagueStore, league: League, board: Leaderboard, slots: int,
                salt: int) -> list[tuple[int, ...]]:
    """Up to ``slots`` new tables (version ids by seat) among the active versions of the
    bots still entered (``arena.server.matchmaking``); ``salt`` varies the seat order
    between calls."""
    settings = league.ladder
    standings = {s.entrant_id: s for s in board.standings}
    active = store.versions("WHERE v.status = 'active' AND b.state = 'entered'")
    running = store.running_counts()
    author_of = {v.id: v.author_id for v in store.versions()}
    author_running: dict[int, int] = defaultdict(int)
    counts = dict(_pair_counts(board))
    # A challenge running keeps its versions from the ladder (``running``) but takes no
    # author's ladder matches nor a pair's repeats.
    for match in store.matches("WHERE status = 'running' AND kind = 'ladder'"):
        for author in {author_of[v] for v in match.seats}:
            author_running[author] += 1
        for pair in itertools.combinations(sorted(set(match.seats)), 2):
            counts[pair] = counts.get(pair, 0) + 1
    made = store.count_matches("WHERE kind = 'ladder'")

    def entrant(version: Version) -> matchmaking.Entrant:
        standing = standings[version.id]
        last = _ladder_number(standing.history[-1][0]) if standing.history else 0
        return matchmaking.Entrant(version.id, version.author_id, standing.mu,
                                   standing.sigma, standing.matches + running.get(version.id, 0),
                                   made - last)

    constraints = matchmaking.Constraints(settings.table_size, settings.placement_matches,
                                          settings.same_author_matches,
                                          settings.max_running_per_author)
    return matchmaking.pick_tables(
        [entrant(v) for v in active if not running.get(v.id)], counts, constraints,
        author_running, slots, random.Random(salt),
        playing=[entrant(v) for v in active if running.get(v.id)])


def _ladder_number(match_id: str) -> int:
    """``n`` for the ladder match id ``ladder_id(n)``."""
    return int(match_id.lstrip("L~"))


_pairs: Kept[int, tuple[Leaderboard, dict[tuple[int, int], int]]] = Kept(2)
"""The rated matches of each pair of versions, by the leaderboard they are counted from
(kept with it, so that its id is not another's), for the latest two."""


def _pair_counts(board: Leaderboard) -> dict[tuple[int, int], int]:
    """The rated matches of each pair of versions (lower id first), from the versions'
    histories (what the ratings were computed from), counted once per leaderboard: not to
    be changed."""
    kept = _pairs.get(id(board))
    if kept is not None and kept[0] is board:
        return kept[1]
    seats: dict[str, list[int]] = defaultdict(list)
    for standing in board.standings:
        for match_id, _, _ in standing.history:
            seats[match_id].append(standing.entrant_id)
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for seated in seats.values():
        for pair in itertools.combinations(sorted(seated), 2):
            counts[pair] += 1
    counted = dict(counts)
    _pairs.put(id(board), (board, counted))
    return counted


def current_phase(store: LeagueStore, league: League,
                  now: dt.datetime | None = None) -> str:
    """The later of the phase the organiser set and the one the league file's times give."""
    stored = store.meta("phase") or "open"
    timed = league.phases.phase_at(now or dt.datetime.now(dt.UTC))
    return max(stored, timed, key=PHASES.index)


def advance(store: LeagueStore, league: League, phase: str) -> str:
    """Move the league on to ``phase`` (never back); the phase it is in afterwards."""
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}; the phases are {', '.join(PHASES)}")
    now = current_phase(store, league)
    if PHASES.index(phase) < PHASES.index(now):
        raise ValueError(f"the league is in the {now} phase already; phases only move on "
                         f"({' → '.join(PHASES)})")
    store.set_meta({"phase": phase})
    return phase


def final_entrants(store: LeagueStore) -> list[Version]:
    """The newest active version of each bot still entered, by bot name."""
    newest: dict[int, Version] = {}
    for version in store.versions("WHERE v.status = 'active' AND b.state = 'entered'"):
        if version.bot_id not in newest or version.number > newest[version.bot_id].number:
            newest[version.bot_id] = version
    return sorted(newest.values(), key=lambda v: v.bot)


class FinalTooLarge(ValueError):
    """A final whose schedule would be too large to make; the message says what to change."""


def final_schedule(league: League, entrants: Sequence[Version]
                   ) -> list[tuple[str, str, tuple[int, ...], int, int, int]]:
    """The final round robin (``arena.league.schedule``, as a season plays it):
    (match id, deal label, version ids by seat, group, deal, round) each. FinalTooLarge
    when it has more matches than a season may schedule (its entrants are every active
    bot: at tables of 3+ every group of them plays)."""
    oversized = too_large(len(entrants), league.ladder.table_size,
                          league.final.matches_per_group)
    if oversized:
        raise FinalTooLarge(f"the final cannot be scheduled: {oversized} (here, entrants "
                            "are the active bots)")
    planned = schedule(len(entrants), league.ladder.table_size,
                       league.final.matches_per_group, league.final.duplicate_deals)
    return [(f"final-{m.match_id}", f"final/{m.chance}",
             tuple(entrants[i].id for i in m.seats), m.group, m.deal, m.round)
            for m in planned]


def final_standings(store: LeagueStore) -> OfficialStandings | None:
    """The official standings over the final's results (None: no final scheduled)."""
    matches = store.matches("WHERE kind = 'final'")
    if not matches:
        return None
    deals = {m.match_id: m.label for m in matches}
    entrants = sorted({v for m in matches for v in m.seats})
    key = ("final", str(store.path), _identity(store), store.recorded("final"),
           tuple(entrants))

    def fitted() -> OfficialStandings:
        # Exact ties are listed by bot name, then version number.
        names = {v.id: f"{v.bot}/{v.number:09d}" for v in store.versions()}
        return official_standings(outcomes(store.results("final"), deals), entrants,
                                  names=names)

    return _cached(key, fitted)
