"""Small seasons, the ``arena`` command run as a user runs it, and helpers to damage files
and fill disks."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots" / "python"
KEY = bytes(range(32)).hex()
"""The season key of runs whose results are compared with another run's."""

SEASON = """\
[season]
name = "{name}"
table_size = 2
matches_per_group = {per_group}
duplicate_deals = false  # one match per pair: these tests count matches, not deals
parallelism = {parallelism}
entrants = [{entrants}]

[rules]
target_score = {target}

[sandbox]
backend = "{backend}"

[output]
folder = "{folder}"
report = "{report}"
"""


def write_season(where: Path, name: str = "small", *, per_group: int = 1, target: int = 100,
                 backend: str = "plain", parallelism: int = 2,
                 entrants: list[Path] | None = None, folder: Path | None = None) -> Path:
    """A season file of the sample Python bots (three of them: three matches per repeat)."""
    where.mkdir(parents=True, exist_ok=True)
    bots = entrants or [BOTS / "random", BOTS / "greedy", BOTS / "strategist"]
    path = where / f"{name}.toml"
    path.write_text(SEASON.format(
        name=name, per_group=per_group, target=target, backend=backend,
        parallelism=parallelism, entrants=", ".join(f'"{b}"' for b in bots),
        folder=folder or where / f"{name}-runs", report=where / f"{name}-site"))
    return path


def arena(*args: str | Path, cwd: Path = ROOT, timeout: float = 180
          ) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` as a user runs it: a process of its own, output captured."""
    return subprocess.run([sys.executable, "-m", "arena.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    for stream in (result.stdout, result.stderr):
        assert "Traceback" not in stream, (
            f"a traceback:\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")


def clean_error(result: subprocess.CompletedProcess[str], *words: str | Path) -> str:
    """A failed command that said why in one line naming ``words``; that line."""
    no_traceback(result)
    assert result.returncode != 0, f"exit code 0:\n{result.stdout}\n{result.stderr}"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"not one line:\n{result.stderr}"
    for word in words:
        assert str(word) in lines[0], f"{word!r} not in: {lines[0]}"
    return lines[0]


@pytest.fixture(scope="session")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small season played to the end (three matches); copy it before damaging it."""
    where = tmp_path_factory.mktemp("played")
    path = write_season(where)
    result = arena("season", "run", path)
    assert result.returncode == 0, result.stderr
    return path


def copy_played(played: Path, where: Path) -> Path:
    """A copy of the played season (file, store and logs) under ``where``."""
    shutil.copytree(played.parent, where, dirs_exist_ok=True)
    copy = where / played.name
    text = played.read_text().replace(str(played.parent), str(where))
    copy.write_text(text)
    store = where / "small-runs" / "season.sqlite"
    import sqlite3

    with contextlib.closing(sqlite3.connect(store)) as db, db:
        db.execute("UPDATE matches SET log_path = replace(log_path, ?, ?)",
                   (str(played.parent), str(where)))
    return copy


@contextlib.contextmanager
def tmpfs(where: Path, size: str, read_only: bool = False) -> Iterator[Path]:
    """A small tmpfs mounted at ``where`` (this suite runs as root, as CI does)."""
    where.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
