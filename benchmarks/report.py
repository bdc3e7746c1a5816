"""How long the static site takes for a season of 1,000 matches.

The season is the sample season's three Python bots at 2-player tables, 334 matches per
pair (1,002 matches), played through the real driver, store and referee (full match logs),
but with the bots as in-process policies so that it takes about a minute rather than a
quarter of an hour. Then, side by side:

1. a full render into an empty folder (the season 30 matches short of its end);
2. a re-render with nothing changed (match and replay pages are reused);
3. a re-render after the season's last 30 matches are played (the season is first stopped
   30 matches short, rendered, then resumed): only what they touch is rendered again;
4. the whole season of 1,002 matches into an empty folder.

Run: ``python -m benchmarks.report [--per-pair N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from arena.bots.policies import POLICIES
from arena.league import executor as executor_module
from arena.league.driver import run_season
from arena.league.executor import JobOutcome, MatchJob, play_job
from arena.league.preflight import ProbeJob
from arena.league.season import load_season
from arena.referee.match import InProcessSeat
from arena.report.render import render_site
from arena.rules.seeds import seat_seed
from arena.sandbox.manifest import BotManifest

ROOT = Path(__file__).resolve().parents[1]


class InProcessExecutor:
    """Plays jobs in this process, every seat an in-process policy named like its bot;
    stops after ``limit`` of them, as a season stopped part-way does."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit

    def probe(self, jobs: Sequence[ProbeJob]) -> list[str | None]:
        return [None for _ in jobs]  # the seats are in-process policies: nothing to start

    def run(self, jobs: Iterable[MatchJob]) -> Iterator[JobOutcome]:
        for index, job in enumerate(jobs):
            if index == self.limit:
                return
            yield play_job(job)

    def shutdown(self) -> None:
        pass


def in_process_seat(settings: Any, bot: BotManifest, log_dir: Path, label: str
                    ) -> tuple[InProcessSeat, dict[str, Any]]:
    seat = int(label.removeprefix("seat").split("-")[0])
    policy = POLICIES[bot.name](seat_seed(zlib.crc32(log_dir.name.encode()), seat))
    return InProcessSeat(policy, bot.name, bot.version), {"backend": "in-process"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-pair", type=int, default=334, help="matches per pair")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="arena-bench-report-"))
    base = load_season(ROOT / "sample_bots" / "season.toml")
    python = tuple(bot for bot in base.entrants if bot.language == "python")
    season = dataclasses.replace(base, entrants=python, matches_per_group=args.per_pair,
                                 folder=work / "season")
    executor_module.seat_launcher = in_process_seat  # type: ignore[assignment]

    started = time.perf_counter()
    summary = run_season(season, InProcessExecutor(limit=3 * args.per_pair - 30))
    print(f"season: {summary.played} of {summary.scheduled} matches played in-process through "
          f"the referee in {time.perf_counter() - started:.1f} s ({summary.failed} failed)")

    site = work / "site"
    started = time.perf_counter()
    full = render_site(season.store_path, site)
    first = time.perf_counter() - started
    print(f"full render:        {full.pages:5d} pages in {first:5.1f} s "
          f"({full.match_pages_rendered} matches rendered)")

    started = time.perf_counter()
    again = render_site(season.store_path, site)
    print(f"nothing changed:    {again.pages:5d} pages in {time.perf_counter() - started:5.1f} s"
          f" ({again.match_pages_reused} matches reused)")

    rest = run_season(season, InProcessExecutor())
    started = time.perf_counter()
    grown = render_site(season.store_path, site)
    seconds = time.perf_counter() - started
    print(f"{rest.played} more matches:    {grown.pages:5d} pages in {seconds:5.1f} s"
          f" ({grown.match_pages_rendered} matches rendered, "
          f"{grown.match_pages_reused} reused)")

    started = time.perf_counter()
    whole = render_site(season.store_path, work / "site-whole")
    print(f"the whole season into an empty folder: {whole.pages} pages in "
          f"{time.perf_counter() - started:.1f} s ({whole.match_pages_rendered} matches)")


if __name__ == "__main__":
    main()
