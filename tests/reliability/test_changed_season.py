"""A season file changed after its season started: status, standings, export and report
say what changed and what to do, instead of a traceback or the old store shown silently."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import BOTS, arena, clean_error, copy_played, no_traceback, write_season

READERS = (("season", "status"), ("season", "standings"), ("season", "export"), ("report",))


@pytest.mark.parametrize(("change", "said"), [
    (("target_score = 100", "target_score = 200"), "the rules changed (target_score 100 -> 200)"),
    (("matches_per_group = 1", "matches_per_group = 2"),
     "the schedule changed (matches_per_group 1 -> 2)"),
    (("table_size = 2", "table_size = 3"), "the schedule changed (table_size 2 -> 3)"),
    ((f'"{BOTS / "random"}", ', ""), f"the entrants changed (removed {BOTS / 'random'})"),
])
def test_a_changed_season_file_is_named_by_every_reader(played: Path, tmp_path: Path,
                                                        change: tuple[str, str],
                                                        said: str) -> None:
    path = copy_played(played, tmp_path)
    text = path.read_text()
    assert change[0] in text
    path.write_text(text.replace(*change))
    for command in (*READERS, ("season", "run")):
        result = arena(*command, path)
        line = clean_error(result, path, said, "restore the season file",
                           "give the changed season a new [output] folder")
        assert result.returncode == 2, line


def test_a_changed_bot_is_noted_and_the_season_still_shown(tmp_path: Path) -> None:
    bots = []
    for name in ("random", "greedy", "strategist"):
        shutil.copytree(BOTS / name, tmp_path / "bots" / name)
        bots.append(tmp_path / "bots" / name)
    path = write_season(tmp_path, entrants=bots)
    assert arena("season", "run", path).returncode == 0
    with (tmp_path / "bots" / "greedy" / "bot.py").open("a") as bot:
        bot.write("# tuned\n")
    for command in READERS:
        result = arena(*command, path)
        no_traceback(result)
        assert result.returncode == 0, result.stderr
        assert (f"note: bot greedy 1.0 ({tmp_path / 'bots' / 'greedy'}) changed since the "
                "last run") in result.stderr
        assert "restore the folder to keep the old one" in result.stderr
