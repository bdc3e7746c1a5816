"""The tie-break stage: entrants whose rank intervals overlap at the end play
extra matches a batch at a time, with a check of the standings after each batch and a cap;
the matches are stored like the others, so a stopped stage resumes where it was.

Matches are played in process by an executor that gives each bot the built-in policy its
name says (the driver, store, schedule and ratings are the real ones): three copies of the
strategist, which no number of matches separates, and random play.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pytest

from arena.bots.policies import POLICIES
from arena.bots.runner import play_match
from arena.league.driver import run_season, season_ratings
from arena.league.executor import JobOutcome, MatchJob
from arena.league.preflight import ProbeJob
from arena.league.season import load_season
from arena.league.store import MatchRecord, SeasonStore, SeatResult
from arena.league.tiebreak import is_tiebreak

KEY = bytes(range(32))
BOTS = {"twin-a": "strategist", "twin-b": "strategist", "twin-c": "strategist",
        "weak": "random"}


class InProcess:
    """Plays each job with its bots' policies in this process; ``stop_after``: raise
    KeyboardInterrupt (as Ctrl-C would) once that many matches are played."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.stop_after = stop_after
        self.played: list[str] = []

    def probe(self, jobs: Sequence[ProbeJob]) -> list[str | None]:
        return [None for _ in jobs]  # in-process policies always start

    def run(self, jobs: Iterable[MatchJob]) -> Iterator[JobOutcome]:
        for job in jobs:
            if self.stop_after is not None and len(self.played) >= self.stop_after:
                raise KeyboardInterrupt
            played = play_match([POLICIES[BOTS[bot.name]] for bot in job.bots], job.seed,
                                job.rules, build=True)
            self.played.append(job.match_id)
            yield JobOutcome(job.match_id, MatchRecord(
                job.match_id, 0.01, played.decisions, played.rounds,
                played.round_limit_reached, "",
                tuple(SeatResult(seat, played.places[seat], played.scores[seat], 0, 0, False,
                                 ()) for seat in range(len(job.bots)))))

    def shutdown(self) -> None:
        pass


def season_file(root: Path, name: str, tiebreak: str) -> Path:
    for bot in BOTS:
        folder = root / "bots" / bot
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "bot.toml").write_text(
            f'name = "{bot}"\nversion = "1.0"\nlanguage = "python"\nrun = ["python3", "x.py"]\n')
    path = root / f"{name}.toml"
    path.write_text(f"""
[season]
name = "{name}"
table_size = 2
matches_per_group = 4
entrants = ["bots/*"]
[rules]
target_score = 200
[sandbox]
backend = "plain"
{tiebreak}
[output]
folder = "{root / name}"
report = "{root / (name + '-site')}"
""")
    return path


TIEBREAK = "[tiebreak]\nenabled = true\nmax_matches = 24\nbatch = 2\n"


def stored(path: Path) -> tuple[list[tuple[object, ...]], list[str]]:
    store = SeasonStore(path)
    try:
        results = [(r.match_id, r.seat, r.entrant_id, r.place, r.score)
                   for r in store.results()]
        ids = [m["match_id"] for m in store.matches()]
    finally:
        store.close()
    return results, ids


def test_tied_entrants_play_extra_matches_until_the_cap(tmp_path: Path) -> None:
    season = load_season(season_file(tmp_path, "tied", TIEBREAK))
    executor = InProcess()
    summary = run_season(season, executor, key=KEY)
    assert summary.failed == 0
    store = SeasonStore(season.store_path)
    try:
        matches = store.matches()
        entrants = {int(e["id"]): str(e["name"]) for e in store.entrants()}
        official = season_ratings(store).official
    finally:
        store.close()
    extra = [m for m in matches if is_tiebreak(m["match_id"])]
    main = [m for m in matches if not is_tiebreak(m["match_id"])]
    assert len(main) == 24 and all(m["status"] == "done" for m in matches)
    # Batches of 3 pairs x 2 matches among the tied twins; the cap (24) allows four.
    assert 0 < len(extra) <= 24 and len(extra) % 6 == 0
    assert [m["match_id"] for m in matches] == sorted(m["match_id"] for m in matches)
    assert executor.played == [m["match_id"] for m in matches], "tie-break after the season"
    for match in extra:
        assert {entrants[e] for e in match["seats"]} <= {"twin-a", "twin-b", "twin-c"}
    # Each tie-break deal is played from both seats (duplicate deals, as the season).
    by_deal: dict[str, list[dict[str, object]]] = {}
    for match in extra:
        by_deal.setdefault(str(match["chance"]), []).append(match)
    assert all(len(pair) == 2 for pair in by_deal.values())
    # The stage stops when the twins are separated or the next batch would pass the cap;
    # the same algorithm three times is not separated: the standings declare a tie.
    twins = {e for e, n in entrants.items() if n.startswith("twin")}
    if len(extra) < 24:
        assert not any(twins & set(g) for g in official.groups), "stopped: separated"
    else:
        assert any(len(twins & set(g)) >= 2 for g in official.groups)
    assert entrants[official.rows[-1].entrant_id] == "weak"


def test_a_stopped_tiebreak_stage_resumes_to_the_same_results(tmp_path: Path) -> None:
    reference = load_season(season_file(tmp_path / "a", "season", TIEBREAK))
    run_season(reference, InProcess(), key=KEY)
    expected = stored(reference.store_path)
    assert any(is_tiebreak(i) for i in expected[1])

    season = load_season(season_file(tmp_path / "b", "season", TIEBREAK))
    with pytest.raises(KeyboardInterrupt):  # mid-stage: the first batch half played
        run_season(season, InProcess(stop_after=24 + 3), key=KEY)
    results, ids = stored(season.store_path)
    assert len([i for i in ids if is_tiebreak(i)]) == 6 and len(results) == 2 * 27
    resumed = InProcess()
    run_season(season, resumed)
    assert resumed.played[:3] == [i for i in ids if is_tiebreak(i)][3:], "the batch first"
    assert stored(season.store_path) == expected
    again = InProcess()
    run_season(season, again)
    assert again.played == [], "a finished stage plays nothing more"


def test_no_tiebreak_stage_unless_asked(tmp_path: Path) -> None:
    season = load_season(season_file(tmp_path, "plain", ""))
    run_season(season, InProcess(), key=KEY)
    _, ids = stored(season.store_path)
    assert len(ids) == 24 and not any(is_tiebreak(i) for i in ids)


def test_standings_command_says_which_bots_cannot_be_separated(tmp_path: Path) -> None:
    """`arena season standings`: shared ranks in the table, and the verdict in words."""
    import os
    import subprocess
    import sys

    path = season_file(tmp_path, "words", "")
    run_season(load_season(path), InProcess(), key=KEY)
    shown = subprocess.run([sys.executable, "-m", "arena.cli", "season", "standings",
                            str(path)], capture_output=True, text=True, timeout=120,
                           cwd=Path(__file__).resolve().parents[2],
                           env={**os.environ, "COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    rows = [line for line in shown.stdout.splitlines() if line.startswith("│")]
    twins = [line for line in rows if "twin-" in line]
    assert len(twins) == 3 and all("1\N{EN DASH}3" in line for line in twins), shown.stdout
    verdict = next(line for line in shown.stdout.splitlines() if "cannot be separated" in line)
    for name in ("twin-a 1.0", "twin-b 1.0", "twin-c 1.0"):
        assert name in verdict
    assert "weak 1.0" not in verdict
