"""The league server's pages and API at size: a league store of 200 bots (three versions
each, one active, with 32 KiB build logs) with 10,000, 25,000 and 50,000 played ladder
matches (no bot runs: rows written straight into the store, as ``LeagueStore.record``
writes them), each page and API answer timed in-process (Starlette's test client, the app
without its background loops), the median of ``--repeats``; with each figure its growth
from 10k to 50k matches and the answer's size.

    python -m benchmarks.league_pages [--repeats 5] [--sizes 10000,25000,50000]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from starlette.testclient import TestClient

from arena.league.store import MatchRecord, SeatResult
from arena.server.app import COOKIE, create_app
from arena.server.config import load_league
from arena.server.store import LeagueStore

BOTS = 200
VERSIONS = 3
"""Versions of each bot (the older ones retired), each with a build log and a check
report of a compiled bot's size."""
BUILD_LOG = "   Compiling a-crate v1.0.0\n" * 1200  # 32 KiB
REPORT = "PASS a check of every decision kind\n" * 60  # 2 KiB
LEAGUE = """\
[league]
name = "bench-league"
data = "data"

[rules]
target_score = 100
"""


def build(folder: Path, matches: int) -> tuple[Path, str, int, str]:
    """A league with ``matches`` played ladder matches; (its file, an author's token, a
    version of theirs, a bot's name)."""
    folder.mkdir(parents=True)
    path = folder / "LEAGUE.toml"
    path.write_text(LEAGUE)
    league = load_league(path)
    league.data.mkdir(parents=True)
    store = LeagueStore(league.store_path)
    token = store.add_author("author")
    author = store.authenticate(token)
    assert author is not None
    versions: list[int] = []
    for number in range(BOTS):
        for label in range(1, VERSIONS + 1):  # the last active, the others retired
            added = store.add_version(author.id, f"bot{number:03d}", str(label),
                                      f"{number:062x}{label:02x}", "0" * 64,
                                      str(folder / "bots" / str(number)), BOTS)
            store.activate(added.id, 1)
        versions.append(added.id)
    with store.transaction() as db:
        db.execute("UPDATE versions SET build_log = ?, check_report = ?", (BUILD_LOG, REPORT))
    rng = random.Random(1)
    now = time.time()
    match_rows, result_rows = [], []
    for index in range(1, matches + 1):
        seats = rng.sample(versions, 2)
        match_id = f"L{index:06d}"
        match_rows.append((match_id, match_id, json.dumps(seats), now, now, now, 1.5, 900,
                           7, 0, f"/logs/{match_id}.jsonl.gz", "0" * 64))
        winner = rng.randrange(2)
        for seat, version in enumerate(seats):
            won = seat == winner
            result_rows.append((match_id, seat, version, 1 if won else 2,
                                100 if won else 0, 4 if won else 3, 0, 0, "[]"))
    with store.transaction() as db:
        db.executemany(
            "INSERT INTO matches (match_id, kind, label, seats, status, created_at, "
            "started_at, finished_at, seconds, decisions, rounds, round_limit_reached, "
            "log_path, log_sha256) VALUES (?, 'ladder', ?, ?, 'done', ?, ?, ?, ?, ?, ?, ?, "
            "?, ?)", match_rows)
        db.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", result_rows)
    store.close()
    return path, token, versions[len(versions) // 2], f"bot{BOTS // 2:03d}"


def measure(path: Path, token: str, version: int, bot: str, repeats: int
            ) -> dict[str, tuple[float, int]]:
    """Each page's median seconds and its size in bytes."""
    app = create_app(load_league(path), background=False)
    pages: dict[str, Callable[[TestClient], object]] = {
        "/ (the ladder)": lambda c: c.get("/"),
        "/matches (the newest page)": lambda c: c.get("/matches"),
        f"/bots/{bot}.html": lambda c: c.get(f"/bots/{bot}.html"),
        f"/me/versions/{version}": lambda c: c.get(f"/me/versions/{version}"),
        "/api/matches (first page)": lambda c: c.get("/api/matches"),
        "/api/matches/L000005": lambda c: c.get("/api/matches/L000005"),
        "/api/standings": lambda c: c.get("/api/standings"),
    }
    found: dict[str, tuple[float, int]] = {}
    store = LeagueStore(load_league(path).store_path)
    seats = [v.id for v in store.versions()][:2]

    def after_a_result(client: TestClient) -> object:
        match_id = store.start_ladder_match(seats)
        store.record(MatchRecord(match_id, 1.0, 900, 7, False, "/nowhere", (
            SeatResult(0, 1, 100, 4, 0, False, ()), SeatResult(1, 2, 0, 3, 0, False, ())),
            "0" * 64), seats)
        return client.get("/")

    pages["/ after a new result (ratings again)"] = after_a_result
    with TestClient(app) as client:
        client.cookies.set(COOKIE, token)
        client.headers["Authorization"] = f"Bearer {token}"
        started = time.perf_counter()
        client.get("/")  # the ladder's ratings, computed once and cached
        found["/ at the server's start (every result rated)"] = (
            time.perf_counter() - started, 0)
        for name, get in pages.items():
            times, size = [], 0
            for _ in range(repeats):
                started = time.perf_counter()
                response = get(client)
                times.append(time.perf_counter() - started)
                assert response.status_code == 200, (name, response.status_code)  # type: ignore[attr-defined]
                size = len(response.content)  # type: ignore[attr-defined]
            found[name] = (statistics.median(times), size)
    store.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default="10000,25000,50000")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    rows: dict[str, list[tuple[float, int]]] = {}
    with tempfile.TemporaryDirectory(prefix="arena-league-bench-") as scratch:
        for size in sizes:
            built = build(Path(scratch) / str(size), size)
            for name, figure in measure(*built, args.repeats).items():
                rows.setdefault(name.replace(built[3], "BOT").replace(str(built[2]), "V"),
                                []).append(figure)
    print(f"league server, {BOTS} bots, in-process, median of {args.repeats} (seconds, "
          "and the answer's size)")
    header = "".join(f"{size:>12,}" for size in sizes)
    print(f"{'played ladder matches':46}{header}   growth   (linear: {sizes[-1] / sizes[0]:.1f})")
    for name, figures in rows.items():
        cells = "".join(f"{seconds:>12.3f}" for seconds, _ in figures)
        growth = figures[-1][0] / figures[0][0] if figures[0][0] else float("nan")
        print(f"{name:46}{cells}   {growth:6.2f}   {figures[-1][1] / 1024:,.0f} KiB")


if __name__ == "__main__":
    main()
