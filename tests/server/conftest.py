"""A league (the test league file) and its store, without a server; a browser for the
browser tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from league_servers import chromium, write_league

from arena.server.config import League, load_league
from arena.server.store import LeagueStore


@pytest.fixture
def league(tmp_path: Path) -> League:
    return load_league(write_league(tmp_path))


@pytest.fixture
def store(league: League) -> LeagueStore:
    return LeagueStore(league.store_path)


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Chromium under Playwright (``league_servers.chromium``)."""
    with chromium() as launched:
        yield launched
