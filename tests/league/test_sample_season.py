"""The sample season end to end: `arena season run` plays sample_bots/season.toml
(real bot processes, in the file's sandbox), the standings recover random < greedy < strategist,
export gives the stored rows, and a second run plays nothing.

The season file is the real one, copied with its entrants pointing at the sample bots and
its output inside the test's temporary folder.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.bots.policies import POLICIES
from arena.bots.runner import play_match
from arena.league.driver import leaderboard, season_ratings, season_schedule
from arena.league.season import Season, load_season
from arena.league.store import SeasonStore
from arena.rules.seeds import MatchSeed

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_bots" / "season.toml"


def copy_sample_season(folder: Path) -> Path:
    text = SAMPLE.read_text()
    replacements = {
        "entrants": json.dumps([str(ROOT / "sample_bots" / "python" / "*")]),
        "folder": json.dumps(str(folder / "out")),
        "report": json.dumps(str(folder / "report")),
    }
    for key, value in replacements.items():
        text, count = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.MULTILINE)
        assert count == 1, f"sample season has no single {key} line to redirect"
    path = folder / "season.toml"
    path.write_text(text)
    return path


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # A wide console, so rich does not wrap the lines checked below.
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd, env={**os.environ, "COLUMNS": "250"})


@dataclass(frozen=True)
class SampleRun:
    path: Path
    season: Season
    run: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRun:
    folder = tmp_path_factory.mktemp("sample-season")
    path = copy_sample_season(folder)
    season = load_season(path)
    return SampleRun(path, season, arena("season", "run", str(path), cwd=folder))


@pytest.fixture
def store(sample: SampleRun) -> Iterator[SeasonStore]:
    opened = SeasonStore(sample.season.store_path)
    yield opened
    opened.close()


def names(store: SeasonStore) -> dict[int, str]:
    return {int(e["id"]): str(e["name"]) for e in store.entrants()}


def test_the_season_runs_to_the_end(sample: SampleRun, store: SeasonStore) -> None:
    scheduled = len(season_schedule(sample.season))
    per_pair = sample.season.matches_per_group
    assert scheduled == 3 * per_pair, f"3 Python sample bots, every pair {per_pair} times"
    assert sample.run.returncode == 0, sample.run.stdout + sample.run.stderr
    assert f"played {scheduled}, failed 0, 0 were already done" in sample.run.stdout
    assert store.counts() == {"scheduled": 0, "done": scheduled, "failed": 0}
    assert sorted(names(store).values()) == ["greedy", "random", "strategist"]
    for match in store.matches():
        assert Path(match["log_path"]).is_file(), "a recorded match has its log on disk"


def test_status_says_all_done(sample: SampleRun) -> None:
    status = arena("season", "status", str(sample.path), cwd=sample.path.parent)
    assert status.returncode == 0, status.stderr
    total = len(season_schedule(sample.season))
    assert f"season sample: {total} done, 0 failed, 0 to play, of {total}" in status.stdout


def test_standings_put_random_play_last(store: SeasonStore) -> None:
    """The deals come from a fresh secret key each run: what must hold for any key is that
    both heuristic bots finish above random play (they win ~99% of matches against it),
    in the live rating and in the official standings, where random has a rank of its own;
    strategist and greedy are too close for this many matches to order them every time."""
    board = leaderboard(store)
    by_id = names(store)
    order = [by_id[s.entrant_id] for s in board.standings]
    ratings = {by_id[s.entrant_id]: round(s.conservative, 2) for s in board.standings}
    assert order[-1] == "random", ratings
    official = season_ratings(store).official
    assert by_id[official.rows[-1].entrant_id] == "random"
    assert official.rows[-1].rank_label == "3"


def test_standings_command_prints_the_leaderboard(sample: SampleRun, store: SeasonStore) -> None:
    shown = arena("season", "standings", str(sample.path), cwd=sample.path.parent)
    assert shown.returncode == 0, shown.stderr
    by_id = names(store)
    expected = [by_id[r.entrant_id] for r in season_ratings(store).official.rows]
    rows = [line for line in shown.stdout.splitlines() if " 1.0 " in line and line.startswith("│")]
    assert [next(n for n in expected if f" {n} 1.0 " in line) for line in rows] == expected


def test_results_are_those_of_the_same_matches_played_in_process(store: SeasonStore) -> None:
    """The bots over gRPC, in worker processes, reproduce the in-process policies on the
    same seeds: seeds, seat order and places all reach the store unchanged."""
    by_id = names(store)
    stored: dict[str, list[tuple[int, int]]] = {}
    for r in store.results():
        stored.setdefault(r.match_id, []).append((r.place, r.score))
    key = bytes.fromhex(store.meta("season_key") or "")
    for match in store.matches():
        seats = [by_id[entrant] for entrant in match["seats"]]
        chance = MatchSeed.keyed(key, match["chance"])
        played = play_match([POLICIES[name] for name in seats], chance, build=True)
        assert stored[match["match_id"]] == list(zip(played.places, played.scores,
                                                     strict=True)), match["match_id"]


def test_export_csv_gives_the_stored_results(sample: SampleRun, store: SeasonStore) -> None:
    exported = arena("season", "export", str(sample.path), "--format", "csv",
                     cwd=sample.path.parent)
    assert exported.returncode == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    by_id = names(store)
    assert rows == [
        {"match_id": r.match_id, "seat": str(r.seat), "bot": by_id[r.entrant_id],
         "version": "1.0", "place": str(r.place), "score": str(r.score),
         "rounds_won": str(r.rounds_won), "strikes": str(r.strikes),
         "disqualified": str(int(r.disqualified))}
        for r in store.results()]
    assert len(rows) == 2 * len(season_schedule(sample.season))


def test_export_json_gives_the_stored_results_and_ratings(sample: SampleRun,
                                                          store: SeasonStore,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "export.json"
    exported = arena("season", "export", str(sample.path), "--format", "json", "--out",
                     str(out), cwd=sample.path.parent)
    assert exported.returncode == 0, exported.stderr
    data = json.loads(out.read_text())
    by_id = names(store)
    assert data["season"] == "sample"
    assert data["results"] == [
        {"match_id": r.match_id, "seat": r.seat, "bot": by_id[r.entrant_id], "version": "1.0",
         "place": r.place, "score": r.score, "rounds_won": r.rounds_won, "strikes": r.strikes,
         "disqualified": r.disqualified, "faults": list(r.faults)}
        for r in store.results()]
    board = leaderboard(store)
    assert [(row["bot"], row["mu"], row["sigma"], row["conservative"], row["matches"],
             row["wins"], row["average_place"], row["average_score"], row["faults"])
            for row in data["ratings"]] == [
        (by_id[s.entrant_id], s.mu, s.sigma, s.conservative, s.matches, s.wins,
         s.average_place, s.average_score, s.faults) for s in board.standings]
    # The official standings, with their ranks and intervals.
    official = season_ratings(store).official
    assert [(row["bot"], row["rank"], row["rank_interval"], row["matches"])
            for row in data["standings"]] == [
        (by_id[r.entrant_id], r.rank_label, list(r.interval), r.matches) for r in official.rows]
    assert data["unrated"] == []
    assert data["cannot_separate"] == [[by_id[e] for e in g] for g in official.groups]


def test_running_again_plays_nothing_and_changes_no_row(sample: SampleRun,
                                                        store: SeasonStore) -> None:
    def snapshot() -> tuple[object, ...]:
        logs = sorted((p, p.stat().st_mtime_ns) for p in sample.season.logs.rglob("*"))
        return store.matches(), store.results(), store.entrants(), logs

    before = snapshot()
    again = arena("season", "run", str(sample.path), cwd=sample.path.parent)
    assert again.returncode == 0, again.stdout + again.stderr
    total = len(season_schedule(sample.season))
    assert f"played 0, failed 0, {total} were already done" in again.stdout
    assert snapshot() == before
