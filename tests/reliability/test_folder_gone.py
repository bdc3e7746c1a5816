"""A bot's folder removed while matches are played (by hand, a full clean-up, a botched
deploy) is the host's trouble, not the bot's: the matches it cannot start, and the one it
could not go on with, count for no one and say why; the next run plays them."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from arena.league.executor import MatchJob, play_job
from arena.league.season import SandboxSettings
from arena.referee.limits import Limits
from arena.rules.options import RuleOptions
from arena.sandbox import load_manifest

from .conftest import BOTS

VANISHING = """
import shutil, sys
shutil.rmtree(sys.path[0])  # its own folder, as a clean-up on the host would
sys.exit(1)
"""


def _job(tmp_path: Path, seat0: Path) -> MatchJob:
    bots = (load_manifest(seat0), load_manifest(BOTS / "greedy"))
    return MatchJob("m00001", 5, bots, RuleOptions(target_score=50), Limits(hello_timeout=10),
                    SandboxSettings(backend="plain"), tmp_path / "m00001.jsonl.gz",
                    tmp_path / "m00001")


def test_a_match_whose_bot_folder_is_gone_counts_for_no_one(tmp_path: Path) -> None:
    folder = tmp_path / "random"
    shutil.copytree(BOTS / "random", folder)
    job = _job(tmp_path, folder)
    shutil.rmtree(folder)
    outcome = play_job(job)
    assert outcome.record is None and outcome.error is not None
    assert f"bot random 1.0's folder {folder} is gone" in outcome.error
    assert "restore the folder, then run again" in outcome.error


def test_a_folder_removed_during_the_match_does_not_count_against_its_bot(
        tmp_path: Path) -> None:
    folder = tmp_path / "vanishing"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "vanishing"\nversion = "1"\nlanguage = "python"\n'
                                     f'run = ["{sys.executable}", "bot.py"]\n')
    (folder / "bot.py").write_text(VANISHING)
    outcome = play_job(_job(tmp_path, folder))
    assert not folder.exists()
    assert outcome.record is None, "the bot's exit before hello was counted against it"
    assert outcome.error is not None and "vanishing 1's folder" in outcome.error


def test_a_bot_that_fails_with_its_folder_in_place_still_loses(tmp_path: Path) -> None:
    folder = tmp_path / "crashing"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "crashing"\nversion = "1"\nlanguage = "python"\n'
                                     f'run = ["{sys.executable}", "bot.py"]\n')
    (folder / "bot.py").write_text("import sys\nsys.exit(1)\n")
    outcome = play_job(_job(tmp_path, folder))
    assert outcome.record is not None, outcome.error
    assert outcome.record.seats[0].disqualified
