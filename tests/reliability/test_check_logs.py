"""``arena check .`` run from inside a bot folder writes nothing into it: its logs go
outside (a cache folder), the bot's content hash stays, a build does not copy its own
output (a copy made inside the folder it copies would copy itself again and again, until a
name is too long: Errno 36, after hundreds of files)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import load_manifest

from .conftest import BOTS, ROOT


def check_here(bot: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", "check", ".", "--matches", "1",
                           *args], cwd=bot, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache),
                               "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("build", [False, True])
def test_check_run_inside_the_bot_folder_leaves_it_alone(tmp_path: Path, build: bool) -> None:
    bot = tmp_path / "greedy"
    shutil.copytree(BOTS / "greedy", bot)
    if build:
        with (bot / "bot.toml").open("a") as manifest:
            manifest.write('build = ["sh", "-c", "echo built > built.txt"]\n')
    for path in [bot, *bot.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    before = sorted(p.relative_to(bot) for p in bot.rglob("*"))
    content = load_manifest(bot).content_hash()
    result = check_here(bot, tmp_path / "cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all checks passed" in result.stdout
    logs = tmp_path / "cache" / "uno-arena" / "check" / "greedy"
    assert f"its output goes to {logs}" in result.stdout
    assert list(logs.glob("*.stderr.log"))
    assert sorted(p.relative_to(bot) for p in bot.rglob("*") if "__pycache__" not in p.parts
                  ) == [p for p in before if "__pycache__" not in p.parts]
    assert load_manifest(bot).content_hash() == content


def test_logs_asked_for_inside_the_bot_folder_are_refused(tmp_path: Path) -> None:
    bot = tmp_path / "greedy"
    shutil.copytree(BOTS / "greedy", bot)
    result = check_here(bot, tmp_path / "cache", "--logs", "runs/check")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"arena check: --logs runs/check is inside the bot folder {bot}, whose content would "
        "then change; choose a folder outside it")
    assert not (bot / "runs").exists()


def test_check_wants_at_least_one_match(tmp_path: Path) -> None:
    result = check_here(BOTS / "greedy", tmp_path, "--matches", "0")
    assert result.returncode == 2
    assert result.stderr.strip() == "arena check: --matches must be an integer ≥ 1, not 0"
