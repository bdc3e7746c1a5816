"""kill -9 during the ladder, then a restart: nothing recorded is lost, nothing is counted
twice, the matches that were being played are discarded (never half-counted), the match
workers died with the server, and the ladder goes on (as it does when one match worker is
killed: that match is recorded failed, with why); kill -9 during the final: the match
being played is played again, and the final completes with each match once."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from league_servers import SAMPLES, Server, copy_bot, free_port, write_league

from arena.server import ladder
from arena.server.config import load_league
from arena.server.store import LeagueStore
from arena.server.uploads import pack


def _children(root: int) -> set[int]:
    """Every live process below ``root`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(entry.path, "stat").read_text()
                parents[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat[stat.rindex(")") + 2:].split()[1])


def _started(pid: int) -> int:
    """When the process started (clock ticks since boot)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat[stat.rindex(")") + 2:].split()[19])


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _survivors(pids: set[int], grace: float = 15) -> list[int]:
    """Those of ``pids`` still alive after ``grace`` seconds (a worker told by the kernel
    that its parent died, and multiprocessing's resource tracker, end within moments)."""
    deadline = time.monotonic() + grace
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [pid for pid in pids if _alive(pid)]


def _snapshot(store: Path) -> tuple[dict[str, str], dict[str, list[tuple[object, ...]]]]:
    """Every match's status, and every result row by match."""
    with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
        statuses = dict(db.execute("SELECT match_id, status FROM matches"))
        results: dict[str, list[tuple[object, ...]]] = {}
        for row in db.execute("SELECT * FROM results ORDER BY match_id, seat"):
            results.setdefault(row[0], []).append(row)
    return statuses, results


def _kill_server_mid_match(server: Server, store: Path, ours: Callable[[str], bool],
                           tries: int = 5) -> set[str]:
    """kill -9 the server while one of ``ours`` matches is running, and return the matches
    the store shows running then. A match can end between seeing it run and the kill: then
    nothing was caught mid-match, so the server is started again and the kill retried."""
    for _ in range(tries):
        deadline = time.monotonic() + 60
        while not any(ours(m) and s == "running" for m, s in _snapshot(store)[0].items()):
            assert time.monotonic() < deadline, "no match was played"
            time.sleep(0.02)
        assert server.process is not None
        workers = _children(server.process.pid)
        assert workers  # the match and validation workers, and the bots
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        if server.process.stderr:
            server.process.stderr.close()
        server.process = None
        assert not _survivors(workers), "workers outlived the server"
        running = {m for m, s in _snapshot(store)[0].items() if ours(m) and s == "running"}
        if running:
            return running
        server.start()
    raise AssertionError(f"no kill in {tries} caught a match being played")


def test_kill_9_during_the_ladder_and_the_final_loses_and_doubles_nothing(tmp_path: Path) -> None:
    server = Server(write_league(tmp_path / "league"), free_port())
    server.start()
    try:
        server.add_author("alice")
        server.add_author("bob")
        for author, bot in (("alice", "greedy"), ("bob", "random")):
            response = server.submit(author, pack(copy_bot(SAMPLES / bot, tmp_path / bot)))
            assert response.status_code == 201, response.text
        store = server.data / "league.sqlite"

        def playing() -> bool:
            statuses, _ = _snapshot(store)
            done = sum(s == "done" for s in statuses.values())
            return done >= 3 and "running" in statuses.values()

        server.wait_for(playing, timeout=90, what="a match being played after 3 done")

        # A match worker killed mid-match (the OOM killer): that match is recorded failed
        # with the reason, a new worker takes over, and the ladder goes on.
        assert server.process is not None
        server_pid = server.process.pid
        # The server's worker processes by start: the validation worker came first (the
        # match workers only once two versions were active).
        workers = server.wait_for(lambda: (lambda found: found if len(found) >= 2 else None)(
            sorted((pid for pid in _children(server_pid) if _parent(pid) == server_pid
                    and "spawn_main" in _command(pid)), key=_started)),
            what="the validation worker and a match worker")
        before_kill = {m for m, s in _snapshot(store)[0].items() if s == "done"}
        os.kill(workers[-1], signal.SIGKILL)
        server.wait_for(lambda: "failed" in _snapshot(store)[0].values(),
                        what="the killed match recorded failed")
        server.wait_for(lambda: len({m for m, s in _snapshot(store)[0].items()
                                     if s == "done"} - before_kill) >= 2,
                        what="the ladder after a worker died")
        with contextlib.closing(LeagueStore(store)) as reading:
            failed = reading.matches("WHERE status = 'failed'")
        assert failed and all("worker failed" in str(m.error) for m in failed)
        running = sorted(_kill_server_mid_match(server, store, lambda m: True))
        before, results_before = _snapshot(store)
        assert all(m not in results_before for m in running)

        server.start()
        after, results_after = _snapshot(store)
        for match_id in running:
            assert after[match_id] == "discarded"
        for match_id, status in before.items():
            if status == "done":
                assert after[match_id] == "done"
                assert results_after[match_id] == results_before[match_id]

        # The ladder goes on under new ids; each done match counted once, with both seats.
        done_before = sum(s == "done" for s in before.values())
        server.wait_for(lambda: sum(s == "done" for s in _snapshot(store)[0].values())
                        >= done_before + 2, timeout=60, what="more ladder matches")
        with server.client("alice") as client:
            listed = {m["match_id"] for m in client.get("/api/matches").json()["matches"]}
        assert server.process is not None
        workers = _children(server.process.pid)
        server.stop()  # SIGTERM: a clean stop, then the store is still
        assert not _survivors(workers), "workers outlived a clean stop"
        statuses, results = _snapshot(store)
        assert set(statuses) >= listed
        assert set(results) == {m for m, s in statuses.items() if s == "done"}
        assert all(len(rows) == 2 and {r[1] for r in rows} == {0, 1}
                   for rows in results.values())

        # The final, killed while a final match is played: after the restart that match is
        # played again from its deal, and the final completes with each match once.
        league = load_league(server.league)
        with contextlib.closing(LeagueStore(league.store_path)) as league_store:
            ladder.advance(league_store, league, "final")
        server.start()
        killed = _kill_server_mid_match(server, store, lambda m: m.startswith("final-"))
        server.start()
        with server.client() as client:
            final = server.wait_for(lambda: (lambda f: f if f["complete"] else None)(
                client.get("/api/final").json()), what="the final after the restart")
        statuses, results = _snapshot(store)
        finals = {m: s for m, s in statuses.items() if m.startswith("final-")}
        assert killed and killed <= set(finals)
        assert set(finals.values()) == {"done"}
        assert all(len(results[m]) == 2 for m in finals)
        assert final["matches"] == {"done": len(finals)}
        assert len(final["standings"]) == 2
    finally:
        server.stop()
