"""What the site shows, read from the season store and the match logs (no rendering)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.league.driver import leaderboard
from arena.league.store import SeasonStore, StoredResult
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
    rank: int = 0
    outranks_next: float | None = None
    results: list[StoredResult] = field(default_factory=list)
    seat_positions: dict[int, list[StoredResult]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


@dataclass
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


@dataclass
class HeadToHead:
    """The record of ``row`` against ``column``: matches where both sat at the table."""

    meetings: int = 0
    wins: float = 0.0
    """Times ``row`` finished ahead of ``column`` (ties count half)."""

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
    board: Leaderboard
    counts: dict[str, int]
    store_path: Path
    key_commitment: str | None = None
    """SHA-256 of the season key (published from the start)."""
    revealed_key: str | None = None
    """The season key itself, once the organiser has revealed it (`arena season reveal`)."""

    def bot(self, entrant_id: int) -> Bot:
        return self.bots[entrant_id]


def _slug(name: str, version: str, taken: set[str]) -> str:
    base = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in f"{name}-{version}")
    slug, number = base, 2
    while slug in taken:
        slug, number = f"{base}-{number}", number + 1
    taken.add(slug)
    return slug


def load_season_data(store_path: Path) -> SeasonData:
    store = SeasonStore(store_path)
    try:
        name = store.meta("name") or store_path.parent.name
        settings = json.loads(store.meta("settings") or "{}")
        taken: set[str] = set()
        bots = {
            e["id"]: Bot(e["id"], e["name"], e["version"], e["folder"], e["hash"],
                         e["manifest"], _slug(e["name"], e["version"], taken))
            for e in store.entrants()
        }
        results = store.results()
        board = leaderboard(store)
        counts = store.counts()
        raw_matches = store.matches()
        commitment = store.meta("key_commitment")
        # The key stays secret (bots could predict deals) until the organiser reveals it.
        revealed = store.meta("season_key") if store.meta("key_revealed_at") else None
    finally:
        store.close()
    by_match: dict[str, list[StoredResult]] = defaultdict(list)
    for result in results:
        by_match[result.match_id].append(result)
        bot = bots[result.entrant_id]
        bot.results.append(result)
        bot.seat_positions.setdefault(result.seat, []).append(result)
    for rank, (standing, above) in enumerate(
            zip(board.standings, board.outranks_next, strict=True), start=1):
        bot = bots[standing.entrant_id]
        bot.standing, bot.rank, bot.outranks_next = standing, rank, above
    ranked = [bots[s.entrant_id] for s in board.standings if s.matches or len(bots) < 50]
    matches = [
        MatchRow(m["match_id"], m["status"], m["chance"], m["seats"],
                 sorted(by_match.get(m["match_id"], []), key=lambda r: r.seat),
                 m["seconds"], m["decisions"], m["rounds"], bool(m["round_limit_reached"]),
                 m["log_path"], m["error"], m["finished_at"])
        for m in raw_matches
    ]
    head_to_head: dict[tuple[int, int], HeadToHead] = defaultdict(HeadToHead)
    for seats in by_match.values():
        for a in seats:
            for b in seats:
                if a.entrant_id == b.entrant_id:
                    continue
                record = head_to_head[(a.entrant_id, b.entrant_id)]
                record.meetings += 1
                record.wins += 1.0 if a.place < b.place else 0.5 if a.place == b.place else 0.0
    return SeasonData(name, settings, bots, ranked, matches, dict(head_to_head), board, counts,
                      store_path, commitment, revealed)


def read_match_log(path: Path) -> list[dict[str, Any]]:
    from arena.referee.log import read_log

    return list(read_log(path))
