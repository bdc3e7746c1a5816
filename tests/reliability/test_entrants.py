"""Entrants that cannot play are found before the first match (built, then started once
and asked for hello), and the season is refused with one line naming every one of them;
a bot that is merely slow to start plays."""

from __future__ import annotations

import json
import shutil
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from arena.league.driver import RunStopped, run_season
from arena.league.executor import LocalExecutor
from arena.league.season import load_season
from arena.league.store import SeasonStore

from .conftest import BOTS, arena, clean_error, write_season


def bot(where: Path, name: str, run: list[str], *, source: str = "greedy",
        build: list[str] | None = None, mode: int = 0o755) -> Path:
    folder = where / name
    shutil.copytree(BOTS / source, folder)
    lines = [f'name = "{name}"', 'version = "1.0"', 'language = "python"',
             f"run = {json.dumps(run)}"]
    if build:
        lines.append(f"build = {json.dumps(build)}")
    (folder / "bot.toml").write_text("\n".join(lines) + "\n")
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    folder.chmod(mode)
    return folder


SLOW = """
import time
time.sleep(1.5)  # a heavy runtime warming up
exec(open("bot.py").read())
"""


def test_broken_entrants_refuse_the_season_in_one_line(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    entrants = [
        bot(bots, "fine", ["python3", "bot.py"]),
        bot(bots, "no-command", ["./does-not-exist"]),
        bot(bots, "crasher", ["python3", "-c", "raise SystemExit('missing model file')"]),
        bot(bots, "locked", ["python3", "bot.py"], mode=0o700),
        bot(bots, "unbuildable", ["python3", "bot.py"], build=["sh", "-c", "exit 3"]),
    ]
    path = write_season(tmp_path, entrants=entrants, backend="bubblewrap")
    line = clean_error(arena("season", "run", path), path, "3 entrant(s) cannot play",
                       "no match was played")
    for name in ("no-command", "crasher", "unbuildable"):
        assert f"{name} 1.0 ({bots / name})" in line
    # A folder only its owner may read plays all the same: a bot plays
    # from a copy of exactly its sources, readable by the sandbox's uid.
    assert "fine 1.0" not in line and "locked 1.0" not in line
    assert "missing model file" in line, "the bot's last words say why"
    assert "does-not-exist" in line
    assert "exit code 3" in line
    store = SeasonStore(tmp_path / "small-runs" / "season.sqlite", read_only=True)
    try:
        assert store.counts()["done"] == 0 and store.counts()["failed"] == 0
    finally:
        store.close()


def test_a_slow_starter_is_not_refused(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    slow = bot(bots, "slow", ["python3", "slow.py"])
    (slow / "slow.py").write_text(SLOW)
    (slow / "slow.py").chmod(0o644)
    entrants = [slow, bot(bots, "quick", ["python3", "bot.py"], source="random")]
    path = write_season(tmp_path, entrants=entrants, backend="bubblewrap")
    path.write_text(path.read_text() + "\n[limits]\nhello_timeout = 3.0\n")
    result = arena("season", "run", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "played 1, failed 0" in " ".join(result.stdout.split())


def test_a_probe_that_cannot_run_stops_the_run_cleanly(tmp_path: Path) -> None:
    """The probe's worker killed (the OOM killer...): the run stops, saying so, nothing
    played, and the season may be run again."""
    class ProbeDies(LocalExecutor):
        def probe(self, jobs: object) -> list[str | None]:
            raise BrokenProcessPool("a process in the process pool was terminated abruptly")

    season = load_season(write_season(tmp_path))
    with pytest.raises(RunStopped, match="the entrants could not be checked"):
        run_season(season, ProbeDies(2))
    summary = run_season(season, LocalExecutor(2))
    assert summary.played == 3 and summary.failed == 0
