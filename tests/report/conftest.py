"""A real (small) season, played and rendered once per test session.

The three sample bots meet in a round robin at two-player tables, twice per pair, to 200
points, in plain processes; then ``arena report`` renders the site. Every report test
checks the pages against this season's store and logs.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from season_data import BOTS, ROOT, SAMPLES, SEASON, SeasonRun, StoreView, read_store


def _arena(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, (
        f"arena {' '.join(args)} exited {result.returncode}\n"
        f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result


@pytest.fixture(scope="session")
def season(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeasonRun]:
    """Run the season with `arena season run`, render it with `arena report`."""
    base = tmp_path_factory.mktemp("report-season")
    folder, report = base / "runs", base / "site"
    toml = base / "season.toml"
    entrants = ", ".join(f'"{SAMPLES / name}"' for name in BOTS)
    toml.write_text(SEASON.format(entrants=entrants, folder=folder, report=report))
    # One key for every run: the pages' tests check details of particular deals.
    _arena("season", "run", str(toml), "--key", bytes(range(32)).hex())
    output = _arena("report", str(toml)).stdout
    store = folder / "season.sqlite"
    assert store.is_file(), f"no season store at {store}"
    assert (report / "index.html").is_file(), f"arena report wrote no index.html in {report}"
    yield SeasonRun(toml, folder, store, report, output)


@pytest.fixture(scope="session")
def view(season: SeasonRun) -> StoreView:
    data = read_store(season.store)
    assert len(data.entrants) == len(BOTS)
    assert data.counts == {"scheduled": 0, "done": 6, "failed": 0}, data.counts
    return data
