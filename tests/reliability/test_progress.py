"""A run whose output is not a terminal (a pipe, a log, CI) prints a plain progress line
every few seconds, and never wraps a line (paths stay whole)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from arena.cli import season as season_cli
from arena.league.driver import RunSummary

from .conftest import arena, write_season


def test_plain_progress_every_few_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(season_cli.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    progress = season_cli.PlainProgress(10, out)
    for done, seconds in ((1, 1.0), (2, 2.0), (3, season_cli.PROGRESS_SECONDS + 0.5),
                          (4, season_cli.PROGRESS_SECONDS + 1.0)):
        now[0] = 1000.0 + seconds
        progress.update(RunSummary(10, 0, done, 0, ()))
    now[0] += 1
    progress.update(RunSummary(10, 0, 9, 1, ()), force=True)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert re.fullmatch(r"\d\d:\d\d:\d\d 3/10 matches, 0 failed, 32\.7/min, about 0 min left",
                        lines[0]), lines[0]
    assert lines[1].endswith("10/10 matches, 1 failed, 85.7/min, about 0 min left")


def test_a_piped_run_prints_plain_whole_lines(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "and-deeper-still"
    path = write_season(deep, per_group=2)
    result = arena("season", "run", path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    folder = deep / "small-runs"
    assert any(line.startswith("season small: 3 entrants") and line.endswith(
        f"output {folder}") for line in lines), result.stdout
    assert f"played 6, failed 0, 0 were already done; store {folder / 'season.sqlite'}" in lines
    assert any(re.search(r"^\d\d:\d\d:\d\d 6/6 matches, 0 failed", line) for line in lines)
    assert not any(line.startswith("matches ") for line in lines), "no bar off a terminal"
