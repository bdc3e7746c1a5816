"""Start-up sweep: what killed runs left behind, and only that.

A run killed at the wrong moment (SIGKILL, a power cut) can leave empty bot cgroups
(``arena-<label>-<PID.START>-<n>``) and match folders in the temp folder
(``arena-match-<PID.START>-...``). Both are named after their owner, its pid and start time
(``arena.processes``): the sweep removes one only when that process has ended (a live
process that merely reuses the pid is not the owner), and a cgroup only when it is empty.
A cgroup named without a start time (``arena-<label>-<PID>-<n>``) is removed only when its
pid is gone altogether.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

from arena.processes import is_alive
from arena.sandbox import cgroups
from arena.sandbox.trees import remove_tree

CGROUP = re.compile(r"arena-.*-(\d+)\.(\d+)-\d+")
OLD_CGROUP = re.compile(r"arena-.*-(\d+)-\d+")
MATCH_FOLDER = re.compile(r"arena-match-(\d+)\.(\d+)-.*")


def _owner_gone(name: str, tagged: re.Pattern[str], untagged: re.Pattern[str] | None) -> bool:
    match = tagged.fullmatch(name)
    if match is not None:
        return not is_alive(int(match[1]), int(match[2]))
    match = untagged.fullmatch(name) if untagged is not None else None
    if match is not None:
        return not Path(f"/proc/{match[1]}").exists()
    return False


def sweep_cgroups() -> list[Path]:
    """Remove the empty bot cgroups whose owner is gone; the ones removed."""
    host = cgroups.detect()
    if host is None:
        return []
    removed = []
    for parent in dict.fromkeys(host.parents.values()):
        with contextlib.suppress(OSError):
            for entry in os.scandir(parent):
                if not entry.is_dir(follow_symlinks=False) or not _owner_gone(
                        entry.name, CGROUP, OLD_CGROUP):
                    continue
                folder = Path(entry.path)
                with contextlib.suppress(OSError):
                    if (folder / "cgroup.procs").read_text().strip():
                        continue  # not empty: someone's processes are still in it
                    folder.rmdir()  # the kernel refuses a cgroup that is not empty
                    removed.append(folder)
    return removed


def sweep_match_folders(temp: Path | None = None) -> list[Path]:
    """Remove the match folders in the temp folder whose owner is gone; the ones removed."""
    temp = Path(tempfile.gettempdir()) if temp is None else temp
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(temp):
            if entry.is_dir(follow_symlinks=False) and _owner_gone(entry.name, MATCH_FOLDER,
                                                                   None):
                remove_tree(Path(entry.path))
                removed.append(Path(entry.path))
    return removed


def sweep_leftovers() -> list[Path]:
    """Both sweeps; what they removed."""
    return sweep_cgroups() + sweep_match_folders()
