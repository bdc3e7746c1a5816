"""Ctrl-C, SIGTERM and SIGKILL: a run stops cleanly, says what to do, and leaves no
process, cgroup or match folder behind; workers die with their driver."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT, write_season
from .processes import Tree, kill_outside_spawn_handshakes, spawn_pipe_open


def start(path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "arena.cli", "season", "run", str(path)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def done(folder: Path) -> int:
    """Matches recorded so far (read while the season runs)."""
    path = folder / "season.sqlite"
    if not path.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True,
                                                timeout=5)) as db:
            return int(db.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'"
                                  ).fetchone()[0])
    except sqlite3.Error:  # being created
        return 0


@pytest.mark.parametrize(("how", "code"), [("SIGINT to the group", 130),
                                           ("SIGTERM to the driver", 143),
                                           ("SIGTERM to the group", 143)])
def test_a_stopped_run_says_what_to_do_and_leaves_nothing(tmp_path: Path, how: str,
                                                          code: int) -> None:
    # 12 matches: stopped after 2, with the rest in play or to play.
    path = write_season(tmp_path, per_group=4, target=300, backend="bubblewrap")
    run = start(path)
    tree = Tree(run.pid)
    deadline = time.monotonic() + 120
    while done(tmp_path / "small-runs") < 2 and time.monotonic() < deadline:
        tree.sample()
        time.sleep(0.02)
    tree.sample()
    sig = signal.SIGINT if "SIGINT" in how else signal.SIGTERM
    if "group" in how:  # as the terminal does on Ctrl-C, or a service manager
        os.killpg(run.pid, sig)
    else:
        os.kill(run.pid, sig)
    out, err = run.communicate(timeout=60)
    assert run.returncode == code, out + err
    for stream in (out, err):
        assert "Traceback" not in stream and "Event loop is closed" not in stream, stream
    said = " ".join(out.split())
    assert f"stopped by {signal.Signals(sig).name}" in said
    assert "run the same command again to resume" in said
    assert tree.wait_gone() == [], "processes outlived the run"
    assert tree.leftovers() == []
    assert not list((tmp_path / "small-runs" / "logs").glob("*.partial"))
    # Resuming plays the rest.
    rest = subprocess.run([sys.executable, "-m", "arena.cli", "season", "run", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rest.returncode == 0, rest.stdout + rest.stderr
    assert done(tmp_path / "small-runs") == 12


def started(pid: int) -> bool:
    """A worker process that has read what multiprocessing hands it to start: from then on
    it is importing and initialising (see ``spawn_pipe_open``)."""
    return spawn_pipe_open(pid) is False


@pytest.mark.parametrize(("how", "delay"), [("SIGKILL to the driver", 0.0),
                                            ("SIGKILL to the driver", 0.15),
                                            ("SIGKILL to the driver", 0.4),
                                            ("SIGINT to the group", 0.0),
                                            ("SIGINT to the group", 0.15)])
def test_workers_die_with_a_driver_killed_while_they_start(tmp_path: Path, how: str,
                                                           delay: float) -> None:
    """SIGKILL the driver just after it has started its workers (or press Ctrl-C): nothing
    of the run is left, and nothing prints a traceback into the terminal, then or later."""
    path = write_season(tmp_path, per_group=10, target=300)
    run = start(path)
    tree = Tree(run.pid)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = [pid for pid in tree.sample() if started(pid)]
        if workers:
            break
        time.sleep(0.005)
    assert workers, "no worker started"
    time.sleep(delay)
    tree.sample()
    stopped = time.time()
    if how.startswith("SIGKILL"):  # not in the one window a SIGKILL cannot mend
        kill_outside_spawn_handshakes(tree, run.pid)
    else:
        os.killpg(run.pid, signal.SIGINT)
    run.wait(timeout=60)
    # Whatever the orphans write goes to the pipes the test still reads: read to the end,
    # which comes when the last process holding them has gone.
    assert run.stdout is not None and run.stderr is not None
    late = ""
    selector = selectors.DefaultSelector()
    for stream in (run.stdout, run.stderr):
        selector.register(stream, selectors.EVENT_READ)
    deadline = time.monotonic() + 15
    while selector.get_map() and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.2):
            chunk = os.read(key.fd, 65536)
            if chunk:
                late += chunk.decode(errors="replace")
            else:
                selector.unregister(key.fileobj)
    assert not selector.get_map(), f"processes outlived the driver: {tree.alive()}"
    assert "Traceback" not in late, late
    assert tree.wait_gone() == []
    # No orphan went on to play a match that nobody would record (on a fast machine a
    # match may end just before the kill; a match takes longer than the margin).
    late_logs = [log for log in (tmp_path / "small-runs" / "logs").glob("*.jsonl.gz*")
                 if log.stat().st_mtime > stopped + 0.2]
    assert not late_logs
