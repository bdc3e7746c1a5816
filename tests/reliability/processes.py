"""Watching a run's process tree, and what it leaves behind."""

from __future__ import annotations

import contextlib
import os
import signal
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
    Python's own start-up code then prints an EOFError as the worker exits.

    The worker closes the pipe once read, and its number is soon reused (a socket, a
    bot's pipe...): the pipe is its own while its parent, the driver, holds the other end
    (it keeps it for the worker's life)."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        command = Path(f"/proc/{pid}/cmdline").read_bytes().decode()
        if "spawn_main" not in command:
            return None
        pipe = command.split("pipe_handle=")[1].split(")")[0]
        try:
            target = os.readlink(f"/proc/{pid}/fd/{pipe}")
        except FileNotFoundError:
            return False
        if not target.startswith("pipe:"):
            return False
        stat = Path(f"/proc/{pid}/stat").read_text()
        parent = int(stat[stat.rindex(")") + 2:].split()[1])
        return target in _links(Path(f"/proc/{parent}/fd"))
    return None


def _links(folder: Path) -> set[str]:
    """What the open files in a /proc/<pid>/fd folder are (those still open as it is read)."""
    found = set()
    for fd in folder.iterdir():
        with contextlib.suppress(OSError):
            found.add(os.readlink(fd))
    return found


def kill_outside_spawn_handshakes(tree: Tree, pid: int, timeout: float = 15.0) -> None:
    """SIGKILL ``pid`` (the run's driver) at a moment when no spawned worker of ``tree`` is
    still being handed what it needs to start (``spawn_pipe_open``). The driver is stopped
    (SIGSTOP) while its workers are looked at, so none can start between the look and the
    kill (looking first and killing after would leave the gap of a /proc scan, in which a
    driver starting its pool can spawn one). While a worker's pipe is
    open the driver runs on a few milliseconds and is looked at again; after ``timeout``
    seconds a worker whose pipe has been open longer than ``HANDSHAKE`` is taken to have
    been written to (it is importing: the pipe closes after that)."""
    deadline = time.monotonic() + timeout
    while True:
        os.kill(pid, signal.SIGSTOP)
        if not _stopped(pid):
            return  # it ended by itself
        now = float(Path("/proc/uptime").read_text().split()[0])
        starting = [worker for worker in tree.sample() if spawn_pipe_open(worker)]
        if time.monotonic() > deadline:
            starting = [worker for worker in starting
                        if (ticks := start_ticks(worker)) is not None
                        and now - ticks / TICKS < HANDSHAKE]
        if not starting:
            os.kill(pid, signal.SIGKILL)
            return
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.005)


def _stopped(pid: int, timeout: float = 5.0) -> bool:
    """Wait until ``pid`` is stopped; False if it is gone (or a zombie) first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        state = stat[stat.rindex(")") + 2:].split()[0]
        if state in ("T", "t"):
            return True
        if state in ("Z", "X"):
            return False
        time.sleep(0.001)
    raise AssertionError(f"process {pid} did not stop within {timeout} s of SIGSTOP")


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
