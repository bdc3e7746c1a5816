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


def spawn_pipe_open(pid: int) -> bool | None:
    """For a worker that multiprocessing spawned: whether the pipe on its command line,
    through which it is handed what it needs to start, is still open (it has not read it
    all yet); None for any other process. A driver killed with SIGKILL in that window (a
    few microseconds; SIGKILL cannot be caught) leaves the worker to fail reading it:
    Python's own start-up code then prints an EOFError as the worker exits."""
    with contextlib.suppress(OSError, IndexError):
        command = Path(f"/proc/{pid}/cmdline").read_bytes().decode()
        if "spawn_main" in command:
            pipe = command.split("pipe_handle=")[1].split(")")[0]
            return Path(f"/proc/{pid}/fd/{pipe}").exists()
    return None


def outside_spawn_handshakes(tree: Tree, timeout: float = 1.0) -> None:
    """Wait (up to ``timeout`` seconds) until no process of ``tree`` is a spawned worker
    started under ``HANDSHAKE`` seconds ago with its pipe still open: its driver writes
    what it hands it right after starting it, so a SIGKILL sent then tests everything but
    that window (``spawn_pipe_open``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = float(Path("/proc/uptime").read_text().split()[0])
        starting = [pid for pid in tree.sample() if spawn_pipe_open(pid)
                    and (ticks := start_ticks(pid)) is not None
                    and now - ticks / TICKS < HANDSHAKE]
        if not starting:
            return
        time.sleep(0.005)


HANDSHAKE = 0.25
"""Seconds from a spawned worker's start within which its driver may still be writing
to it (microseconds on an idle machine; a loaded one can hold the driver back)."""
TICKS = os.sysconf("SC_CLK_TCK")


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
