"""Watching a run's process tree, and what it leaves behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

from arena.processes import start_ticks
from arena.sandbox import cgroups


def parents() -> dict[int, int]:
    """pid -> parent pid of every process."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path(entry.path, "stat").read_text()
            found[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
    return found


def descendants(root: int) -> set[int]:
    """Every live process below ``root``."""
    tree = parents()
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in tree.items() if parent in frontier} - found
        found |= frontier
    return found


class Tree:
    """The processes a run started, sampled while it runs (pid and start time, so a reused
    pid is not mistaken for one of them)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, int] = {}

    def sample(self) -> set[int]:
        pids = descendants(self.root)
        for pid in pids:
            ticks = start_ticks(pid)
            if ticks is not None:
                self.seen.setdefault(pid, ticks)
        return pids

    def alive(self) -> list[int]:
        return [pid for pid, ticks in self.seen.items() if start_ticks(pid) == ticks]

    def wait_gone(self, timeout: float = 10.0) -> list[int]:
        """The run's processes still alive after ``timeout`` seconds (none, hopefully)."""
        deadline = time.monotonic() + timeout
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        return [pid for pid in self.alive() if pid != self.root]

    def leftovers(self) -> list[Path]:
        """Match folders and bot cgroups named after one of the run's processes."""
        owners = {f"{pid}.{ticks}" for pid, ticks in self.seen.items()}
        owners.add(f"{self.root}.{self.seen.get(self.root, start_ticks(self.root) or 0)}")
        found = [p for p in Path(tempfile.gettempdir()).glob("arena-match-*")
                 if any(f"-{owner}-" in p.name for owner in owners)]
        host = cgroups.detect()
        if host is not None:
            for parent in set(host.parents.values()):
                found += [p for p in parent.glob("arena-*")
                          if any(f"-{owner}-" in p.name for owner in owners)]
        return found
