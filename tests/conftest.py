"""For the whole suite: every subprocess the tests start (``python -m arena.cli``, bots run
without a sandbox) imports this checkout's ``arena`` package, whatever else is installed or
wherever the subprocess runs; and builds go to a build cache of the test run's own."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])

CACHE_VARIABLE = "ARENA_BUILD_CACHE"  # arena.sandbox.build.CACHE_VARIABLE


@pytest.fixture(autouse=True, scope="session")
def build_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Builds go to a cache of this test run (shared by its tests, its workers and the
    processes they start), not the user's: what a test builds is what the code under test
    built."""
    previous = os.environ.get(CACHE_VARIABLE)
    # Parallel workers (pytest-xdist, `.ci/test`) share the run's cache: the build's lock
    # makes one of them build a bot and the others reuse it.
    base = tmp_path_factory.getbasetemp()
    cache = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "build-cache"
    cache.mkdir(exist_ok=True)
    os.environ[CACHE_VARIABLE] = str(cache)
    yield
    if previous is None:
        os.environ.pop(CACHE_VARIABLE, None)
    else:
        os.environ[CACHE_VARIABLE] = previous


LONGEST_FIRST = ("tests/server/test_every_language.py", "tests/test_starter_kits.py",
                 "tests/reliability/test_fault_injection.py", "tests/test_language_bots.py",
                 "tests/server/test_load.py")
"""Files that run for minutes, in this order: collected first (and handed out in collection
order, ``--no-loadscope-reorder`` in ``.ci/test``), so that a worker starts them while the
other works through the rest, rather than one running alone at the end."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def longest_first(item: pytest.Item) -> int:
        path = item.nodeid.split("::")[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=longest_first)  # stable: the rest keep their order
