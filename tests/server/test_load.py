"""A league server under load, over real HTTP on loopback: sixteen uploads whose bodies
arrive a byte every half second (two each from eight authors) and forty uploads at once
do not keep an honest author's upload out, and the ladder's JSON stays quick while
archives are unpacked one at a time."""

from __future__ import annotations

import concurrent.futures
import select
import socket
import statistics
import threading
import time
from pathlib import Path

import httpx
from league_servers import SAMPLES, Server, copy_bot, free_port, write_league

from arena.server.routes.submissions import body_deadline
from arena.server.store import LeagueStore
from arena.server.uploads import pack

SLOW_AUTHORS = 8
BUSY_AUTHORS = 20
STANDINGS_MOST_SECONDS = 1.0


def trickle(server: Server, token: str, stop: threading.Event, answers: list[bytes]) -> None:
    """An upload whose body never finishes: a byte every half second until the server
    answers (its first line goes to ``answers``) or ``stop``."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall((f"POST /api/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            f"Authorization: Bearer {token}\r\n"
                            "Content-Type: application/gzip\r\nContent-Length: 100000\r\n"
                            "\r\n").encode())
        while not stop.wait(0.5):
            if select.select([connection], [], [], 0)[0]:
                answers.append(connection.recv(4096).split(b"\r\n", 1)[0])
                return
            try:
                connection.sendall(b"\0")
            except OSError:
                return


def receiving(server: Server) -> int:
    """Uploads whose bodies are still arriving, as the store counts them."""
    store = LeagueStore(server.data / "league.sqlite")
    try:
        return int(store.db.execute(
            "SELECT COUNT(*) FROM uploads WHERE outcome = 'receiving'").fetchone()[0])
    finally:
        store.close()


def test_slow_and_many_uploads_leave_room_for_an_honest_one(tmp_path: Path) -> None:
    server = Server(write_league(tmp_path / "league", per_hour=10), free_port())
    server.start()
    stop = threading.Event()
    try:
        slow = [server.add_author(f"slow{i}") for i in range(SLOW_AUTHORS)]
        busy = [server.add_author(f"busy{i}") for i in range(BUSY_AUTHORS)]
        server.add_author("honest")
        archives = {token: pack(copy_bot(SAMPLES / "random", tmp_path / f"random{i}",
                                         name=f"busy-bot-{i}"))
                    for i, token in enumerate(busy)}
        honest = pack(copy_bot(SAMPLES / "greedy", tmp_path / "greedy", name="honest-bot"))
        answers: list[bytes] = []
        trickles = [threading.Thread(target=trickle, args=(server, token, stop, answers),
                                     daemon=True) for token in slow for _ in range(2)]
        for thread in trickles:
            thread.start()
        time.sleep(2)  # every slow body has started, and counts against its author
        assert receiving(server) == 2 * SLOW_AUTHORS

        def upload(token: str) -> int:
            with httpx.Client(base_url=server.url, timeout=300) as client:
                return client.post("/api/submissions", content=archives[token], headers={
                    "Authorization": f"Bearer {token}",
                    "Content-Type": "application/gzip"}).status_code

        with concurrent.futures.ThreadPoolExecutor(2 * BUSY_AUTHORS) as pool:
            busy_uploads = [pool.submit(upload, token) for token in busy for _ in range(2)]
            time.sleep(0.5)
            seconds = []
            with httpx.Client(base_url=server.url, timeout=60) as client:
                for _ in range(5):
                    started = time.perf_counter()
                    assert client.get("/api/standings").status_code == 200
                    seconds.append(time.perf_counter() - started)
                    time.sleep(0.2)
            with httpx.Client(base_url=server.url, timeout=300) as client:  # its turn comes
                answer = client.post("/api/submissions", content=honest, headers={
                    "Authorization": f"Bearer {server.tokens['honest']}",
                    "Content-Type": "application/gzip"})
            statuses = [future.result() for future in busy_uploads]
        assert answer.status_code == 201, answer.text
        assert statuses.count(201) >= BUSY_AUTHORS, statuses  # each author's first, at least
        assert set(statuses) <= {201, 429}, statuses
        print(f"\n/api/standings under load: median {statistics.median(seconds):.3f} s, "
              f"most {max(seconds):.3f} s")
        assert statistics.median(seconds) <= STANDINGS_MOST_SECONDS, seconds
        # A body that never ends is refused at its deadline, and its place freed.
        deadline = time.monotonic() + body_deadline(200_000) + 30
        for thread in trickles:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        assert answers == [b"HTTP/1.1 408 Request Timeout"] * len(trickles), answers
        assert receiving(server) == 0
    finally:
        stop.set()
        server.stop()
