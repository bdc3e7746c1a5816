"""The two-player schedule computed lazily: match k on its own, the same matches
as the eager list, a fingerprint with the stores' bytes, and a resume that does not record
an unchanged schedule again."""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
from pathlib import Path

import pytest

from arena.league import fingerprint
from arena.league.driver import open_store, season_schedule
from arena.league.schedule import (
    ScheduledMatch,
    TwoPlayerSchedule,
    circle_pair,
    circle_round,
    lazy_schedule,
    match_id,
    pair_index,
    schedule,
)
from arena.league.season import load_season
from arena.league.store import SeasonStore

ROOT = Path(__file__).resolve().parents[2]


def reference(entrants: int, per_pair: int, duplicate_deals: bool) -> list[ScheduledMatch]:
    """The schedule as the circle method lays it out, round by round from whole rounds
    (the eager construction: every round's pairs listed, then numbered)."""
    matches = []
    rounds_per_leg = entrants - 1 + entrants % 2
    total = math.comb(entrants, 2) * per_pair
    for leg in range(per_pair):
        for round_in_leg in range(rounds_per_leg):
            for a, b in circle_round(entrants, round_in_leg):
                index = len(matches)
                first, second = (a, b) if (a + b) % 2 else (b, a)
                if leg % 2:
                    first, second = second, first
                group = pair_index(entrants, a, b)
                identifier = match_id(index, total)
                deal, chance = ((leg // 2, f"deal/{group}/{leg // 2}") if duplicate_deals
                                else (leg, identifier))
                matches.append(ScheduledMatch(identifier, (first, second), chance, group, deal,
                                              leg * rounds_per_leg + round_in_leg + 1))
    return matches


@pytest.mark.parametrize("entrants", [2, 3, 4, 5, 8, 11, 20])
@pytest.mark.parametrize("duplicate_deals", [False, True])
def test_the_lazy_schedule_is_the_eager_one(entrants: int, duplicate_deals: bool) -> None:
    lazy = lazy_schedule(entrants, 2, 4, duplicate_deals)
    assert isinstance(lazy, TwoPlayerSchedule)
    eager = reference(entrants, 4, duplicate_deals)
    assert len(lazy) == len(eager)
    assert list(lazy) == eager == schedule(entrants, 2, 4, duplicate_deals)


@pytest.mark.parametrize("entrants", range(2, 42))
def test_a_circle_table_is_computed_on_its_own(entrants: int) -> None:
    for round_index in range(entrants - 1 + entrants % 2):
        pairs = circle_round(entrants, round_index)
        assert len(pairs) == entrants // 2
        for table, pair in enumerate(pairs):
            assert circle_pair(entrants, round_index, table) == pair


def test_match_k_of_a_200_entrant_season_on_its_own() -> None:
    """Any index, read in any order, without the matches before it."""
    lazy = lazy_schedule(200, 2, 4, True)
    assert len(lazy) == 19_900 * 4
    rng = random.Random(7)
    indices = [0, len(lazy) - 1, *rng.sample(range(len(lazy)), 50)]
    eager = reference(200, 4, True)
    for index in indices:
        assert lazy[index] == eager[index]
        assert lazy.index_of(eager[index].match_id) == index
    assert lazy[-1] == eager[-1]
    assert lazy[10:13] == eager[10:13]
    with pytest.raises(IndexError):
        lazy[len(lazy)]
    for wrong in ("m00000", "m79601", "t01-0001", "m1"):
        with pytest.raises(ValueError):
            lazy.index_of(wrong)


SEASON = """
[season]
name = "lazy"
table_size = 2
matches_per_group = 4
entrants = ["{bots}/random", "{bots}/greedy", "{bots}/strategist"]

[sandbox]
backend = "plain"

[output]
folder = "{folder}"
"""


def _season(tmp_path: Path) -> Path:
    """The season file, its bots copied into ``tmp_path`` (so a test may change one)."""
    for name in ("random", "greedy", "strategist"):
        shutil.copytree(ROOT / "sample_bots" / "python" / name, tmp_path / "bots" / name)
    path = tmp_path / "lazy.toml"
    path.write_text(SEASON.format(bots=tmp_path / "bots", folder=tmp_path / "out"))
    return path


def test_the_fingerprint_keeps_the_stores_bytes(tmp_path: Path) -> None:
    """Stores made before the schedule was lazy keep their fingerprint: the streamed hash
    is the hash of the one JSON text they were given."""
    season = load_season(_season(tmp_path))
    matches = list(season_schedule(season))
    data = {"entrants": [str(m.folder) for m in season.entrants],
            "matches": [(m.match_id, m.chance, m.seats) for m in matches],
            "rules": season.rules.to_dict()}
    before = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    assert fingerprint.season_fingerprint(season, season_schedule(season)) == before
    for chunk in (1, 5, len(matches), len(matches) + 1):  # chunk edges change nothing
        fingerprint.FINGERPRINT_CHUNK, saved = chunk, fingerprint.FINGERPRINT_CHUNK
        try:
            assert fingerprint.season_fingerprint(season, matches) == before
        finally:
            fingerprint.FINGERPRINT_CHUNK = saved
    assert fingerprint.season_fingerprint(season, []) == hashlib.sha256(json.dumps(
        {**data, "matches": []}, sort_keys=True).encode()).hexdigest()


def test_a_resume_records_an_unchanged_schedule_only_once(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    path = _season(tmp_path)
    season = load_season(path)
    store, ids, matches = open_store(season)
    store.close()
    assert isinstance(matches, TwoPlayerSchedule)
    written: list[int] = []
    original = SeasonStore.schedule

    def counting(self: SeasonStore, scheduled: list[ScheduledMatch], *args: object) -> None:
        scheduled = list(scheduled)
        written.append(len(scheduled))
        original(self, scheduled, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(SeasonStore, "schedule", counting)
    store, again, _ = open_store(season)
    store.close()
    assert again == ids and written == [], "an unchanged schedule was recorded again"
    # A bot folder that changed is a new entrant version: the matches still to play take it.
    (tmp_path / "bots" / "greedy" / "notes.txt").write_text("a change")
    store, changed, _ = open_store(season)
    try:
        assert written == [len(matches)], "new entrant versions: the schedule is recorded"
        assert changed != ids
        seats = {e for row in store.matches() for e in row["seats"]}
        assert seats == set(changed)
    finally:
        store.close()
