"""The check that a store belongs to its season file, made without walking the schedule
when the store holds the same fingerprint inputs (a 79,600-match schedule took over a
second at every reader), and in full when they differ or are missing."""

from __future__ import annotations

import dataclasses
import shutil
import types
from collections.abc import Iterable
from pathlib import Path

import pytest

from arena.league import driver, fingerprint
from arena.league.driver import open_store
from arena.league.fingerprint import INPUTS_KEY, SeasonChanged, read_store
from arena.league.schedule import ScheduledMatch
from arena.league.season import Season, load_season
from arena.league.store import SeasonStore

ROOT = Path(__file__).resolve().parents[2]

SEASON = """
[season]
name = "checked"
table_size = 2
matches_per_group = 2
entrants = ["{bots}/random", "{bots}/greedy", "{bots}/strategist"]

[rules]
target_score = 100

[sandbox]
backend = "plain"

[output]
folder = "{folder}"
"""


def _started(tmp_path: Path, walks: list[int]) -> Season:
    """A season whose store a run has opened (and so recorded the fingerprint inputs);
    ``walks`` emptied after that run's."""
    for name in ("random", "greedy", "strategist"):
        shutil.copytree(ROOT / "sample_bots" / "python" / name, tmp_path / "bots" / name)
    path = tmp_path / "checked.toml"
    path.write_text(SEASON.format(bots=tmp_path / "bots", folder=tmp_path / "out"))
    season = load_season(path)
    store, _, _ = open_store(season)
    store.close()
    assert walks == [6]  # a new store: computed once
    walks.clear()
    return season


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The fingerprints computed over a whole schedule, by the number of matches walked."""
    counted: list[int] = []
    original = fingerprint.season_fingerprint

    def counting(season: Season, matches: Iterable[ScheduledMatch]) -> str:
        matches = list(matches)
        counted.append(len(matches))
        return original(season, matches)

    monkeypatch.setattr(fingerprint, "season_fingerprint", counting)
    monkeypatch.setattr(driver, "season_fingerprint", counting)  # a run's check
    return counted


def _read(season: Season) -> None:
    store, _ = read_store(season)
    store.close()


def test_an_unchanged_season_is_read_without_walking_its_schedule(tmp_path: Path,
                                                                   walks: list[int]) -> None:
    season = _started(tmp_path, walks)
    _read(season)
    _read(load_season(season.path))
    assert walks == [], "the schedule was walked though the inputs were the same"


@pytest.mark.parametrize("change", ["rules", "entrants", "schedule"])
def test_a_changed_season_file_is_still_refused(tmp_path: Path, walks: list[int],
                                                change: str) -> None:
    season = _started(tmp_path, walks)
    if change == "rules":
        changed = dataclasses.replace(
            season, rules=dataclasses.replace(season.rules, target_score=200))
    elif change == "entrants":
        changed = dataclasses.replace(season, entrants=season.entrants[1:])
    else:
        changed = dataclasses.replace(season, matches_per_group=4)
    with pytest.raises(SeasonChanged, match=f"the {change} changed"):
        _read(changed)
    assert walks, "refused without computing the fingerprint"


def test_a_store_without_the_inputs_is_checked_in_full_and_not_written(
        tmp_path: Path, walks: list[int]) -> None:
    """A store made by an older version: each reader walks the schedule and leaves the
    store as it is (a run may be writing it); the next run records the inputs."""
    season = _started(tmp_path, walks)
    store = SeasonStore(season.store_path)
    store.db.execute("DELETE FROM meta WHERE key = ?", (INPUTS_KEY,))
    store.close()
    _read(season)
    _read(season)
    assert walks == [6, 6]
    store = SeasonStore(season.store_path, read_only=True)
    assert store.meta(INPUTS_KEY) is None
    store.close()
    store, _, _ = open_store(season)
    store.close()
    assert walks == [6, 6, 6]
    _read(season)
    assert walks == [6, 6, 6], "the run did not record the inputs"


def test_changed_schedule_code_is_checked_in_full(tmp_path: Path, walks: list[int],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Another version of the scheduler could order the same season's matches otherwise:
    its source is one of the inputs."""
    season = _started(tmp_path, walks)
    edited = tmp_path / "schedule.py"
    edited.write_text(Path(fingerprint.schedule.__file__ or "").read_text() + "\n# edited\n")
    stand_in = types.ModuleType("arena.league.schedule")
    stand_in.__file__ = str(edited)
    monkeypatch.setattr(fingerprint, "schedule", stand_in)
    _read(season)
    assert walks == [6], "a change to the scheduler's code went unchecked"
