"""The start-up sweep removes the empty cgroups and match folders of dead owners, and only
those: not a live owner's, not one a reused pid seems to own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from arena.processes import owner_tag, start_ticks
from arena.sandbox import cgroups
from arena.sandbox.sweep import sweep_cgroups, sweep_match_folders

from .conftest import arena, write_season


def dead_tag() -> str:
    """The tag of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    tag = owner_tag(child.pid)
    child.wait()
    return tag


def reused_tag() -> str:
    """A live pid with another start time: its process is not the owner."""
    pid = 1
    return f"{pid}.{(start_ticks(pid) or 0) + 1}"


def test_match_folders_of_dead_owners_are_swept(tmp_path: Path) -> None:
    dead, live, reused = dead_tag(), owner_tag(), reused_tag()
    folders = {name: tmp_path / f"arena-match-{tag}-abc123"
               for name, tag in (("dead", dead), ("live", live), ("reused", reused))}
    folders["untagged"] = tmp_path / "arena-match-x1y2z3"
    for folder in folders.values():
        folder.mkdir()
        (folder / "referee.sock").write_text("")
    removed = sweep_match_folders(tmp_path)
    assert sorted(removed) == sorted([folders["dead"], folders["reused"]])
    assert folders["live"].exists() and folders["untagged"].exists()


def test_empty_cgroups_of_dead_owners_are_swept() -> None:
    host = cgroups.detect()
    assert host is not None, "this suite runs as root, with cgroups it may delegate"
    parent = next(iter(host.parents.values()))
    made = {name: parent / f"arena-sweeptest-{tag}-1"
            for name, tag in (("dead", dead_tag()), ("live", owner_tag()),
                              ("reused", reused_tag()), ("busy", dead_tag()))}
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        for folder in made.values():
            folder.mkdir()
        (made["busy"] / "cgroup.procs").write_text(str(sleeper.pid))
        removed = sweep_cgroups()
        assert made["dead"] in removed and made["reused"] in removed
        assert not made["dead"].exists() and not made["reused"].exists()
        assert made["live"].exists(), "a live owner's cgroup stays"
        assert made["busy"].exists(), "a cgroup with processes in it stays"
    finally:
        sleeper.kill()
        sleeper.wait()
        for folder in made.values():
            if folder.exists():
                folder.rmdir()


def test_a_season_run_sweeps_at_start_up(tmp_path: Path) -> None:
    import tempfile

    left = Path(tempfile.gettempdir()) / f"arena-match-{dead_tag()}-leftover"
    left.mkdir()
    try:
        result = arena("season", "run", write_season(tmp_path))
        assert result.returncode == 0, result.stderr
        assert not left.exists()
    finally:
        if left.exists():
            left.rmdir()
