"""A disk that fills up during a match or while the store is written: the run stops with
one clear line, nothing half-written is trusted, and once there is space again the rerun
gives exactly the results of a run that never met a full disk."""

from __future__ import annotations

import hashlib
import io
import subprocess
from pathlib import Path

import pytest

from arena.league.store import SeasonStore

from .conftest import KEY, arena, clean_error, tmpfs, write_season


def results(folder: Path) -> list[tuple[object, ...]]:
    store = SeasonStore(folder / "season.sqlite", read_only=True)
    try:
        assert store.counts()["scheduled"] == 0 and store.counts()["failed"] == 0
        return [(r.match_id, r.seat, r.place, r.score, r.rounds_won) for r in store.results()]
    finally:
        store.close()


def logs_whole(folder: Path) -> None:
    """Every recorded match has its log, as recorded; no partial log is left."""
    store = SeasonStore(folder / "season.sqlite", read_only=True)
    try:
        for match in store.matches():
            if match["status"] == "done":
                content = Path(match["log_path"]).read_bytes()
                assert hashlib.sha256(content).hexdigest() == match["log_sha256"]
    finally:
        store.close()
    assert not list((folder / "logs").glob("*.partial"))


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[object, ...]]:
    """The results of the same season run on a disk with room (one run for the module's
    tests: a season's results do not depend on where it is written)."""
    where = tmp_path_factory.mktemp("reference")
    path = write_season(where, per_group=4)
    result = arena("season", "run", path, "--key", KEY)
    assert result.returncode == 0, result.stderr
    return results(where / "small-runs")


def remount(where: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(where)], check=True)


def test_disk_full_while_writing_match_logs(tmp_path: Path,
                                             expected: list[tuple[object, ...]]) -> None:
    path = write_season(tmp_path / "full", per_group=4)
    folder = tmp_path / "full" / "small-runs"
    with tmpfs(folder / "logs", "24k") as logs:  # the 12 logs take about 32 KiB
        line = clean_error(arena("season", "run", path, "--key", KEY), logs, "the disk is full",
                           "run the same command again to resume")
        assert "stopped after recording" in line
        logs_whole(folder)
        remount(logs, "16m")
        again = arena("season", "run", path, "--key", KEY)
        assert again.returncode == 0, again.stdout + again.stderr
        assert results(folder) == expected
        logs_whole(folder)


@pytest.mark.parametrize("size", ["64k", "160k", "256k"])  # at creation, mid-run, near the end
def test_disk_full_while_writing_the_store(tmp_path: Path, size: str,
                                           expected: list[tuple[object, ...]]) -> None:
    path = write_season(tmp_path / "full", per_group=4)
    folder = tmp_path / "full" / "small-runs"
    (tmp_path / "full" / "logs").mkdir()
    with tmpfs(folder, size):
        (folder / "logs").symlink_to(tmp_path / "full" / "logs")
        line = clean_error(arena("season", "run", path, "--key", KEY), folder / "season.sqlite",
                           "the disk is full", "run the same command again")
        assert "nothing of the last change was recorded" in line
        remount(folder, "16m")
        again = arena("season", "run", path, "--key", KEY)
        assert again.returncode == 0, again.stdout + again.stderr
        assert results(folder) == expected
        logs_whole(folder)


def test_bot_output_on_a_full_disk_is_drained_without_a_traceback(tmp_path: Path) -> None:
    """A bot's output copied to a full disk: the copy stops, the pipe is still drained (a
    bot blocked on a full pipe would stall its match), and no thread dies with a trace."""
    from arena.sandbox.plain import copy_capped

    source = io.BytesIO(b"chatty bot\n" * 50_000)
    with tmpfs(tmp_path / "small", "16k") as small:
        copy_capped(source, small / "bot.stdout.log", 1 << 20)
        assert source.closed
        assert 0 < (small / "bot.stdout.log").stat().st_size <= 16 * 1024
