"""Live updates over real HTTP against a running league server: the event streams say when
a version changes stage and when a ladder match finishes; an author's stream needs their
session and carries nothing of another author's; streams past the cap are refused; a
stream ends when the server stops; and a ladder match in play is shown as anyone at the
table sees it, never a card in a hand before its round is over."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from league_servers import SAMPLES, Server, copy_bot, league_server

from arena.server import live
from arena.server.live_match import FACE_DOWN
from arena.server.uploads import pack

SLOW_BOT = '''"""Plays at random, slowly: its matches last long enough to be watched in play."""
import time

from arena.bots.sdk import Turn, run


def decide(turn: Turn) -> int:
    time.sleep(0.01)
    return turn.rng.choice(turn.legal_actions)


if __name__ == "__main__":
    run(decide, name="slowpoke", version="1.0")
'''
PUBLIC_FIELDS = {"what", "match", "kind", "status", "bots", "versions", "bot", "number"}


class Listener:
    """An event stream read in a thread of its own: its events, parsed, as they come."""

    def __init__(self, server: Server, path: str, author: str | None = None) -> None:
        self.client = server.client(author)
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.status: int | None = None
        self.ended = threading.Event()
        self.opened = threading.Event()
        self.socket: socket.socket | None = None
        self.thread = threading.Thread(target=self._read, args=(path,), daemon=True)
        self.thread.start()
        assert self.opened.wait(10), f"{path}: no answer"

    def _read(self, path: str) -> None:
        try:
            with self.client.stream("GET", path, timeout=httpx.Timeout(30, read=None)) as answer:
                self.status = answer.status_code
                self.socket = answer.extensions["network_stream"].get_extra_info("socket")
                self.opened.set()
                if answer.status_code != 200:
                    return
                name, data = "message", ""
                for line in answer.iter_lines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: "):
                        data = line[6:]
                    elif line == "" and data:
                        self.events.append((name, json.loads(data)))
                        name, data = "message", ""
        except httpx.HTTPError:
            pass
        finally:
            self.opened.set()
            self.ended.set()

    def wait_for(self, test: Any, timeout: float = 60, what: str = "an event"
                 ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((data for _, data in list(self.events) if test(data)), None)
            if found is not None:
                return found
            assert not self.ended.is_set(), f"the stream ended before {what}"
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}: {self.events}")

    def close(self) -> None:
        """Hang up (the socket shut: a read blocked in the thread returns at once)."""
        if self.socket is not None:
            with contextlib.suppress(OSError):
                self.socket.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=10)
        self.client.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("live")
    with league_server(folder / "league") as running:
        for name in ("alice", "bob", "carol"):
            running.add_author(name)
        yield running


def test_the_streams_tell_a_version_changing_stage_and_a_ladder_match_finishing(
        server: Server) -> None:
    ladder = Listener(server, "/live/ladder")
    mine = Listener(server, "/live/me", "alice")
    theirs = Listener(server, "/live/me", "bob")
    try:
        assert (ladder.status, mine.status, theirs.status) == (200, 200, 200)
        submit_slow_bot(server)  # with greedy and random; slowpoke for a match in play
        queued = mine.wait_for(lambda e: e["what"] == "version", what="alice's version queued")
        assert (queued["bot"], queued["number"]) == ("greedy", 1)
        mine.wait_for(lambda e: e["what"] == "version" and e["status"] == "active",
                      what="alice's version active")
        ladder.wait_for(lambda e: e["what"] == "bot" and e == {
            "what": "bot", "bot": "greedy", "number": 1, "status": "active"},
            what="greedy active on the ladder")
        done = ladder.wait_for(lambda e: e["what"] == "match" and e["status"] == "done"
                               and "greedy" in e["bots"], what="a match of greedy's done")
        assert done["kind"] == "ladder" and "greedy" in done["bots"] and len(done["bots"]) == 2
        with server.client() as client:
            assert client.get(f"/api/matches/{done['match']}").json()["status"] == "done"
        # Public streams carry public fields only (what the public pages show).
        assert all(set(data) <= PUBLIC_FIELDS for _, data in ladder.events)
        # Bob's stream: his own version's stages, and matches of his bot; never alice's
        # version.
        theirs.wait_for(lambda e: e["what"] == "version" and e["status"] == "active",
                        what="bob's version active")
        for _, data in theirs.events:
            if data["what"] == "version":
                assert data["bot"] == "random", data
            elif data["what"] == "match":
                assert "random" in data["bots"], data
            else:
                assert data == {"what": "queue"}, data
        assert all(data["bot"] == "greedy" for _, data in mine.events
                   if data["what"] == "version")
    finally:
        for listener in (ladder, mine, theirs):
            listener.close()


def test_the_private_stream_needs_the_authors_session(server: Server) -> None:
    with server.client() as client:
        assert client.get("/live/me").status_code == 401
        refused = client.get("/live/me", headers={"Authorization": "Bearer 1.wrong"})
        assert refused.status_code == 401
        assert "text/event-stream" not in refused.headers.get("content-type", "")


def test_streams_past_the_cap_are_refused(server: Server) -> None:
    opened: list[Listener] = []
    try:
        refused = None
        for _ in range(live.STREAMS_PER_CLIENT + 1):
            listener = Listener(server, "/live/matches")
            opened.append(listener)
            if listener.status != 200:
                refused = listener
                break
        assert refused is not None and refused.status == 429
        assert len(opened) <= live.STREAMS_PER_CLIENT + 1
        opened.pop(0).close()  # one closed: its place is free again
        deadline = time.monotonic() + 10
        while True:
            again = Listener(server, "/live/matches")
            opened.append(again)
            if again.status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert again.status == 200
    finally:
        for listener in opened:
            listener.close()


def test_the_hub_refuses_past_the_total_cap(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setattr(live, "STREAMS_MOST", 3)

    async def fill() -> int:
        hub = live.Hub(tmp_path / "none.sqlite", tmp_path)
        hub.task = asyncio.get_running_loop().create_future()  # no watcher in this test
        for number in range(3):
            hub.join(live.Topic("ladder"), f"10.0.0.{number}", None)
        with pytest.raises(live.Refused) as refused:
            hub.join(live.Topic("ladder"), "10.0.0.9", None)
        hub.task.cancel()
        return refused.value.status

    assert asyncio.run(fill()) == 503


def test_a_slow_reader_is_ended_not_buffered_and_a_reconnect_is_told_what_it_missed(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(live, "HISTORY_MOST", 40)

    def drained(subscriber: live.Subscriber) -> list[live.Message | None]:
        return [subscriber.queue.get_nowait() for _ in range(subscriber.queue.qsize())]

    async def run() -> list[list[live.Message | None]]:
        hub = live.Hub(tmp_path / "none.sqlite", tmp_path)
        hub.task = asyncio.get_running_loop().create_future()  # no watcher in this test
        slow = hub.join(live.Topic("matches"), "10.0.0.1", None)
        for number in range(1, live.QUEUE_MOST + 6):
            hub.publish("match", {"match": f"L{number:06d}", "kind": "ladder",
                                  "status": "done", "bots": ["a"], "versions": [1]})
        # Back from a reconnection (Last-Event-ID 60), and a page rendered before the 40
        # changes kept.
        back = hub.join(live.Topic("matches"), "10.0.0.1", 60)
        late = hub.join(live.Topic("matches"), "10.0.0.2", 3)
        hub.task.cancel()
        return [drained(slow), drained(back), drained(late)]

    slow, back, late = asyncio.run(run())
    assert slow == [None]  # what it had not read is dropped, and its stream ends
    assert [m.id for m in back if m is not None] == list(range(61, live.QUEUE_MOST + 6))
    assert late[0] is not None and late[0].kind == "reset"


def _hidden_cards(data: dict[str, Any]) -> list[str]:
    """Every card of the replay data a spectator may not see (none in a live view)."""
    found = []
    for round_ in data["rounds"]:
        for step in round_["steps"]:
            if step["e"] in ("Dealt", "Drew"):
                found += [f"{step['e']} {c}" for c in step["cs"] if c != FACE_DOWN]
            if "tv" in step:
                found.append(f"a text for each seat: {step['tv']}")
    found += [f"a decision: {view}" for view in data["decisions"]]
    return found


def submit_slow_bot(server: Server) -> None:
    """carol's slowpoke, submitted once (and greedy and random for it to meet)."""
    slow = server.data.parent / "slowpoke"
    if not slow.exists():
        copy_bot(SAMPLES / "random", slow, name="slowpoke")
        (slow / "bot.py").write_text(SLOW_BOT)
    with server.client() as client:
        for author, bot, folder in (("carol", "slowpoke", slow),
                                    ("alice", "greedy", SAMPLES / "greedy"),
                                    ("bob", "random", SAMPLES / "random")):
            if client.get(f"/api/bots/{bot}").status_code == 404:
                assert server.submit(author, pack(folder)).status_code == 201


def watch(client: httpx.Client, match_id: str) -> list[dict[str, Any]]:
    """The live view of a match in play, read until it is over: each read's replay data."""
    seen = []
    while True:
        answer = client.get(f"/live/replays/{match_id}.json").json()
        if answer["over"]:
            return seen
        seen.append(answer["data"])
        time.sleep(0.1)


def test_a_match_in_play_shows_no_hidden_card(server: Server) -> None:
    submit_slow_bot(server)
    shown: list[dict[str, Any]] = []
    watched: list[str] = []
    with server.client() as client:
        def running() -> str | None:
            matches = client.get("/api/matches", params={"bot": "slowpoke",
                                                         "status": "running"}).json()
            return next((m["match_id"] for m in matches["matches"]
                         if m["kind"] == "ladder" and m["match_id"] not in watched), None)

        # A match that greedy wins at once may end before a move is written: the next.
        while len(shown) < 3 and len(watched) < 4:
            match_id = server.wait_for(running, timeout=60, what="slowpoke's match in play")
            watched.append(match_id)
            page = client.get(f"/replays/{match_id}.html")
            if page.status_code == 200 and 'id="live-notice"' in page.text:
                assert f'data-replay="{match_id}"' in page.text
                assert "card-down" not in page.text  # the page's own HTML: no data
            shown += [data for data in watch(client, match_id) if data["rounds"]]
        script = client.get(f"/replays/{match_id}.js").text
        log = gzip.decompress(client.get(f"/logs/{match_id}.jsonl.gz").content).decode()
    assert len(shown) >= 3, f"the matches {watched} were never shown in play"
    for data in shown:
        assert _hidden_cards(data) == []
        assert data["live"] is True and data["stderr"] == [None, None]
    face_down = [c for data in shown for r in data["rounds"] for s in r["steps"]
                 if s["e"] == "Dealt" for c in s["cs"]]
    assert face_down and set(face_down) == {FACE_DOWN}
    # The finished match's replay shows the hands the live view kept face down.
    assert "window.arenaReplay" in script and '"h":' in script
    dealt = [json.loads(line) for line in log.splitlines() if '"event":"Dealt"' in line]
    assert dealt and all(len(d["cards"]) == d["amount"] for d in dealt)


def test_streams_end_when_the_server_stops(tmp_path: Path) -> None:
    with league_server(tmp_path / "league") as running:
        listeners = [Listener(running, "/live/ladder"), Listener(running, "/live/matches")]
        assert [listener.status for listener in listeners] == [200, 200]
        running.stop(signal.SIGTERM)
        for listener in listeners:
            assert listener.ended.wait(30), "a stream outlived the server"
            listener.close()
        log = running.log.read_text(errors="replace")
        assert "timeout graceful shutdown exceeded" not in log, log
