"""One run per season at a time: an exclusive lock on the season's output folder.

``arena season run`` holds ``flock`` on ``<output folder>/season.lock`` for the whole run
and writes who it is into that file (pid, start time, host, when), so a second run says who
holds the season instead of playing the same matches and deleting the first run's partial
logs. The kernel releases the lock when the holder dies, however it dies. Readers (status,
standings, export, report) take no lock: they open the store read-only and may read while a
run writes; ``holder()`` tells them whether a run is in progress.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

from arena.formats import json_value
from arena.processes import owner_tag, tag_is_alive

LOCK_FILE = "season.lock"


class SeasonBusy(Exception):
    """Another run holds the season; the message says which and what to do."""


@dataclass(frozen=True)
class Holder:
    """The run holding a season's lock, as it wrote itself into the lock file."""

    pid: int
    host: str
    since: float
    tag: str

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"pid {self.pid} on {self.host}, since {when}"

    @property
    def local(self) -> bool:
        return self.host == socket.gethostname()


def read_holder(folder: Path) -> Holder | None:
    """Who wrote itself into the season's lock file last (None: nobody, or unreadable)."""
    try:
        data = json_value((folder / LOCK_FILE).read_text())
        return Holder(int(data["pid"]), str(data["host"]), float(data["since"]),
                      str(data["tag"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def holder(folder: Path) -> Holder | None:
    """The run playing the season now, if one is (on this host: checked by pid and start
    time; on another host sharing the folder: as the lock file says)."""
    found = read_holder(folder)
    if found is None or (found.local and not tag_is_alive(found.tag)):
        return None
    return found


class SeasonLock:
    """``with SeasonLock(folder):`` hold the season's output folder, or raise SeasonBusy."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / LOCK_FILE
        self.file: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock (creating the folder); SeasonBusy if another run holds it. An
        OSError (an unwritable folder) is left to the caller to explain."""
        self.folder.mkdir(parents=True, exist_ok=True)
        file = open(self.path, "a+")  # noqa: SIM115 - held until release()
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.close()
            # The holder writes itself in just after taking the lock: give it a moment.
            found = None
            for _ in range(20):
                found = read_holder(self.folder)
                if found is not None:
                    break
                time.sleep(0.05)
            who = found.describe() if found else "a process that has not said who it is"
            stop = f"; or stop it: kill -INT {found.pid}" if found and found.local else ""
            raise SeasonBusy(
                f"{self.folder}: another `arena season run` is playing this season ({who}); "
                f"wait for it to finish{stop}, then run again") from None
        except BaseException:
            file.close()
            raise
        file.seek(0)
        file.truncate()
        json.dump({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
                   "tag": owner_tag()}, file)
        file.write("\n")
        file.flush()
        self.file = file

    def release(self) -> None:
        file, self.file = self.file, None
        if file is None:
            return
        with contextlib.suppress(OSError):
            file.seek(0)
            file.truncate()  # nobody holds it now (the file stays: others may have it open)
        file.close()

    def __enter__(self) -> SeasonLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release()
