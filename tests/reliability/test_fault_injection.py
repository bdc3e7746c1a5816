"""Fault injection: a small season's driver is killed ten times at random points (SIGKILL,
SIGTERM, SIGINT; during start-up, mid-match, mid-write), then resumed: the results, match
by match, and the games in the logs equal those of an uninterrupted run; nothing is
recorded twice; no process, cgroup or match folder of any run is left."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from arena.league.driver import leaderboard
from arena.league.store import SeasonStore
from arena.referee.log import read_log

from .conftest import KEY, ROOT, write_season
from .processes import Tree, kill_outside_spawn_handshakes

PER_GROUP = 8
MATCHES = 3 * PER_GROUP
"""Three Python bots, eight matches per pair, to 100 points, in the bubblewrap sandbox
(ten kills end well before the last: about half of them were recorded by then)."""
KILLS = 10
SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)


def start(path: Path) -> subprocess.Popen[bytes]:
    # As an organiser starts it from a terminal: SIGINT not ignored (a shell ignores it
    # for the jobs it puts in the background, tests run so among them, and a child
    # inherits that; a run that ignores SIGINT is not interrupted, by design).
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen([sys.executable, "-m", "arena.cli", "season", "run",
                                 str(path), "--key", KEY],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, before)


def done(folder: Path) -> int:
    path = folder / "season.sqlite"
    if not path.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True,
                                                timeout=5)) as db:
            return int(db.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'"
                                  ).fetchone()[0])
    except sqlite3.Error:
        return 0


def snapshot(folder: Path) -> tuple[object, ...]:
    """Every match's result and its log's game (events and faults: no timings), ratings."""
    store = SeasonStore(folder / "season.sqlite", read_only=True)
    try:
        assert store.counts() == {"scheduled": 0, "done": MATCHES, "failed": 0}
        results = [(r.match_id, r.seat, r.entrant_id, r.place, r.score, r.rounds_won,
                    r.strikes, r.disqualified, r.faults) for r in store.results()]
        games = {m["match_id"]: [r for r in read_log(Path(m["log_path"]))
                                 if r["type"] in ("event", "fault", "result")]
                 for m in store.matches()}
        ratings = [(s.entrant_id, round(s.mu, 9), round(s.sigma, 9))
                   for s in leaderboard(store).standings]
    finally:
        store.close()
    return results, games, ratings


def test_killed_ten_times_then_resumed_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    reference = write_season(tmp_path / "reference", per_group=PER_GROUP, backend="bubblewrap")
    run = start(reference)
    trees = [Tree(run.pid)]
    _, err = run.communicate(timeout=300)
    assert run.returncode == 0, err.decode()
    expected = snapshot(tmp_path / "reference" / "small-runs")

    path = write_season(tmp_path / "killed", per_group=PER_GROUP, backend="bubblewrap")
    folder = tmp_path / "killed" / "small-runs"
    rng = random.Random(17)
    kills: list[tuple[str, str, int]] = []
    for number in range(KILLS):
        sig = SIGNALS[number % len(SIGNALS)]
        run = start(path)
        tree = Tree(run.pid)
        trees.append(tree)
        if number % 4 == 0:  # each signal once during start-up: lock, store, probe...
            moment = "start-up"
            until = time.monotonic() + rng.uniform(0.05, 1.5)
            while time.monotonic() < until and run.poll() is None:
                tree.sample()
                time.sleep(0.01)
        else:  # after a random number of matches, then part of one: mid-match, mid-write
            moment = "mid-season"
            target = done(folder) + rng.randint(0, 1)  # ten kills well before its end
            deadline = time.monotonic() + 120
            while done(folder) < target and run.poll() is None and time.monotonic() < deadline:
                tree.sample()
                time.sleep(0.01)
            until = time.monotonic() + rng.uniform(0.0, 0.4)
            while time.monotonic() < until and run.poll() is None:
                tree.sample()
                time.sleep(0.01)
        tree.sample()
        if run.poll() is not None:
            break  # the season finished before this kill
        if sig == signal.SIGINT:
            os.killpg(run.pid, sig)  # Ctrl-C at a terminal: the whole foreground group
        elif sig == signal.SIGKILL:  # the driver alone: its workers must follow it, but
            kill_outside_spawn_handshakes(tree, run.pid)  # not in the one window it cannot mend
        else:
            os.kill(run.pid, sig)  # the driver alone: its workers must follow it
        _, err = run.communicate(timeout=60)
        text = err.decode()
        if run.returncode == 0 and done(folder) == MATCHES:
            break  # the season finished as the signal was sent
        assert "Traceback" not in text, f"{signal.Signals(sig).name} at {moment}:\n{text}"
        if sig != signal.SIGKILL:  # 128 + signal: it stopped itself; -signal: it was killed
            # by the signal's default action, before it set a handler (nothing started yet)
            assert run.returncode in (128 + sig, -sig), (run.returncode, text)
        assert tree.wait_gone() == [], f"{signal.Signals(sig).name} at {moment}: processes left"
        kills.append((signal.Signals(sig).name, moment, done(folder)))
    print("kills (signal, when, matches recorded after it):", kills)
    assert len(kills) == KILLS, f"the season ended before its tenth kill: {kills}"
    assert done(folder) < MATCHES, kills

    final = start(path)
    trees.append(Tree(final.pid))
    _, err = final.communicate(timeout=300)
    assert final.returncode == 0, err.decode()
    assert snapshot(folder) == expected, kills
    logs = folder / "logs"
    assert len(list(logs.glob("*.jsonl.gz"))) == MATCHES
    assert not list(logs.glob("*.partial"))
    for tree in trees:
        assert tree.wait_gone(timeout=5) == []
        assert tree.leftovers() == [], "cgroups or match folders left behind"
