"""One run per season at a time; readers may look while it plays, and write nothing."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from arena.league.lock import SeasonLock, holder

from .conftest import ROOT, arena, clean_error, copy_played, write_season


def fingerprint(folder: Path) -> dict[str, str]:
    """The store's bytes, its write-ahead log included (SQLite's shared-memory index, and
    the empty log a read-only reader may create, hold no data)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("season.sqlite*"))
            if not p.name.endswith("-shm") and p.stat().st_size}


def test_a_second_run_is_refused_and_says_who_holds_the_season(tmp_path: Path) -> None:
    path = write_season(tmp_path, per_group=10, target=500)
    folder = tmp_path / "small-runs"
    first = subprocess.Popen([sys.executable, "-m", "arena.cli", "season", "run", str(path)],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.monotonic() + 60
        while holder(folder) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert holder(folder) is not None, "the first run never took the season"
        second = arena("season", "run", path)
        line = clean_error(second, folder, f"pid {first.pid}", "kill -INT")
        assert "another `arena season run`" in line
        # Readers may look meanwhile; status says who plays (asked first: the slower
        # readers may outlast the run).
        assert f"pid {first.pid}" in arena("season", "status", path).stdout
        for command in (("season", "standings"), ("season", "export"), ("report",)):
            result = arena(*command, path)
            assert result.returncode == 0, result.stderr
    finally:
        out, err = first.communicate(timeout=300)
    assert first.returncode == 0, out + err
    assert "played 30, failed 0, 0 were already done" in " ".join(out.split())
    assert len(list((folder / "logs").glob("*.jsonl.gz"))) == 30
    assert holder(folder) is None


def test_readers_write_nothing_while_a_run_holds_the_season(played: Path,
                                                           tmp_path: Path) -> None:
    path = copy_played(played, tmp_path)
    folder = tmp_path / "small-runs"
    before = fingerprint(folder)
    with SeasonLock(folder):
        clean_error(arena("season", "run", path), f"pid {os.getpid()}")
        for command in (("season", "status"), ("season", "standings"), ("season", "export"),
                        ("season", "export", "--format", "json"), ("report",)):
            result = arena(*command, path)
            assert result.returncode == 0, result.stderr
        assert fingerprint(folder) == before
    assert holder(folder) is None
    # Released: the season is free again (nothing left to play).
    again = arena("season", "run", path)
    assert again.returncode == 0, again.stderr
    assert "played 0, failed 0, 3 were already done" in " ".join(again.stdout.split())
