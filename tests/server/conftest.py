"""A league (the test league file) and its store, without a server."""

from __future__ import annotations

from pathlib import Path

import pytest
from league_servers import write_league

from arena.server.config import League, load_league
from arena.server.store import LeagueStore


@pytest.fixture
def league(tmp_path: Path) -> League:
    return load_league(write_league(tmp_path))


@pytest.fixture
def store(league: League) -> LeagueStore:
    return LeagueStore(league.store_path)
