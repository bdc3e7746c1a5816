"""A season mixing every language (Python, JavaScript, C++, stdio-json bash) runs to the end
in the sandbox with no faults: builds once per entrant, then plays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.league.driver import run_season
from arena.league.executor import LocalExecutor
from arena.league.season import load_season
from arena.league.store import SeasonStore
from arena.sandbox import load_manifest
from arena.sandbox.build import CACHE_VARIABLE
from arena.sandbox.fetch import ecosystems_of
from arena.sandbox.pipeline import ready_key

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "sample_bots"


@pytest.mark.slow
def test_a_mixed_language_season_completes_without_faults(tmp_path: Path) -> None:
    path = tmp_path / "mixed.toml"
    path.write_text(f"""
[season]
name = "mixed"
table_size = 4
matches_per_group = 2
parallelism = 2
entrants = ["{BOTS}/python/strategist", "{BOTS}/javascript", "{BOTS}/cpp", "{BOTS}/bash"]

[rules]
target_score = 200

[sandbox]
backend = "bubblewrap"


[output]
folder = "{tmp_path / 'out'}"
""")
    season = load_season(path)
    summary = run_season(season, LocalExecutor(2))
    assert summary.failed == 0, summary.failures
    assert summary.played == 2
    store = SeasonStore(season.store_path)
    try:
        results = store.results()
        assert len(results) == 8
        assert all(not r.faults and not r.disqualified for r in results)
        names = {e["name"] for e in store.entrants()}
        assert names == {"strategist", "javascript-strategist", "cpp-strategist",
                         "bash-greedy"}
    finally:
        store.close()
    # Each entrant with a build step or a lockfile was made ready (by this season, or
    # earlier in this session) into the build cache, under its key.
    cache = Path(os.environ[CACHE_VARIABLE])
    built = [m for m in season.entrants if m.build or ecosystems_of(m)]
    assert sorted(m.name for m in built) == ["cpp-strategist", "javascript-strategist"]
    for manifest in built:
        assert load_manifest(cache / ready_key(manifest)).name == manifest.name
