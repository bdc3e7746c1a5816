"""Live updates: one watcher per process notices what changed in the league store (a match
started, finished or failed, a version's stage, the organiser's actions, the phase; a
watched match's log growing) and fans each change out to the event streams whose page
shows it. The pages subscribe with ``EventSource`` and fetch themselves again.

The store may be written by another process (the organiser's commands, a service apart
from the web process), so the watcher asks SQLite rather than being told: every
``POLL_SECONDS`` it reads ``PRAGMA data_version`` (which changes when another connection
commits), and only then what changed: the results past the last one seen (the results
table only grows), the running matches, the versions' stages, the bots' states (the
organiser's actions) and the phase.

A change is public (anyone's stream: match ids, seats' bots and versions, statuses, as the
public pages show them) or private to one author (their own version's stage); each stream
gets only what it may read. Streams are bounded: ``STREAMS_PER_CLIENT`` per client address
and ``STREAMS_MOST`` in all, a keep-alive comment every ``KEEPALIVE_SECONDS``, at most
``QUEUE_MOST`` messages waiting for a slow reader (past it, its stream ends, and the page
catches up when it reconnects), a stream's life ``STREAM_SECONDS``, and every stream ends
as soon as the server is told to stop (``Hub.close``).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.server.events import event
from arena.server.live_match import partial_log
from arena.server.store import LeagueStore

POLL_SECONDS = 0.75
"""How often the watcher asks the store (one cheap pragma when nothing changed)."""
KEEPALIVE_SECONDS = 15.0
"""A comment sent on an idle stream this often (proxies drop silent connections)."""
STREAM_SECONDS = 600.0
"""A stream's life: then it ends and ``EventSource`` reconnects, its session checked again."""
STREAMS_PER_CLIENT = 8
"""Open streams per client address (a page holds one; a few tabs)."""
STREAMS_MOST = 256
"""Open streams in all."""
QUEUE_MOST = 64
"""Messages waiting for one stream's reader, at most."""
HISTORY_MOST = 512
"""Recent messages kept, so that a stream reconnecting (``Last-Event-ID``) or opened by a
page just rendered (``?since=``) is told what it missed."""
RETRY_MS = 3000
"""How long ``EventSource`` waits before it reconnects."""
PUBLIC_STAGES = ("active", "failed", "retired")
"""A version's stages shown on the public pages' ladder and bot rows."""


@dataclass(frozen=True)
class Message:
    """One change: ``kind`` ``match``, ``bot``, ``league``, ``moves`` (public), or
    ``version``, ``queue`` (to ``author`` alone)."""

    id: int
    kind: str
    data: dict[str, Any]
    author: int | None = None

    def text(self) -> str:
        name = "moves" if self.kind == "moves" else "change"
        return (f"id: {self.id}\nevent: {name}\n"
                f"data: {json.dumps({'what': self.kind, **self.data}, ensure_ascii=True)}\n\n")


@dataclass(frozen=True)
class Topic:
    """What a page shows: ``ladder``, ``matches``, ``head-to-head``, ``bot`` (``name``),
    ``replay`` (``name``: a match in play) or ``me`` (``author``: their own versions)."""

    kind: str
    name: str = ""
    author: int | None = None

    def wants(self, message: Message, author_of: dict[int, int]) -> bool:
        if message.author is not None:
            return self.kind == "me" and message.author == self.author
        kind, data = message.kind, message.data
        if self.kind == "me":
            return kind == "match" and any(author_of.get(v) == self.author
                                           for v in data["versions"])
        if self.kind == "ladder":
            return kind in ("match", "bot", "league")
        if self.kind == "matches":
            return kind == "match"
        if self.kind == "head-to-head":
            return kind in ("bot", "league") or (
                kind == "match" and data["status"] == "done" and data["kind"] == "ladder")
        if self.kind == "bot":
            if kind == "bot":
                return bool(data["bot"] == self.name)
            return kind in ("match", "league") and self.name in data["bots"] and (
                kind == "league" or data["status"] != "running")
        if self.kind == "replay":
            return data.get("match") == self.name and (
                kind == "moves" or (kind == "match" and data["status"] != "running"))
        return False


class Refused(Exception):
    """Too many streams: ``status`` 429 (this client's) or 503 (the server's)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(eq=False)
class Subscriber:
    topic: Topic
    client: str
    queue: asyncio.Queue[Message | None] = field(
        default_factory=lambda: asyncio.Queue(QUEUE_MOST))
    ended: bool = False
    """Its stream is to end (None queued last): nothing more is queued."""

    def offer(self, message: Message | None) -> None:
        """Queue it (None: end the stream); a reader too slow for ``QUEUE_MOST`` messages
        is ended instead, what it had not read dropped (its page reconnects and is told
        what it missed)."""
        if self.ended:
            return
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)
            message = None
        self.ended = message is None


class Watcher:
    """The store as the pages show it, compared at each look with the last: runs in the
    hub's one thread, on a store connection of its own."""

    def __init__(self, store_path: Path, logs: Path) -> None:
        self.store = LeagueStore(store_path)
        self.logs = logs
        self.data_version: int | None = None
        self.last_result = 0
        self.running: dict[str, tuple[str, tuple[int, ...]]] = {}
        self.versions: dict[int, tuple[str, str, int, int]] = {}
        """By id: stage, bot, number, author."""
        self.phase: object = None
        self.bot_states: dict[str, str] = {}
        self.log_sizes: dict[str, int] = {}

    def close(self) -> None:
        self.store.close()

    def look(self, watched: set[str]) -> list[tuple[str, dict[str, Any], int | None]]:
        """What changed since the last look (the first only takes note), as (kind, data,
        author); ``watched``: matches in play whose pages are open."""
        db = self.store.db
        changes: list[tuple[str, dict[str, Any], int | None]] = []
        version = int(db.execute("PRAGMA data_version").fetchone()[0])
        first = self.data_version is None
        if version != self.data_version:
            self.data_version = version
            changes += self._versions(first)
            changes += self._matches(first)
            changes += self._league(first)
        changes += self._moves(watched)
        return [] if first else changes

    def author_of(self) -> dict[int, int]:
        return {version: row[3] for version, row in self.versions.items()}

    def _match(self, match_id: str, status: str, kind: str, seats: tuple[int, ...]
               ) -> tuple[str, dict[str, Any], None]:
        bots = list(dict.fromkeys(self.versions[v][1] for v in seats if v in self.versions))
        return ("match", {"match": match_id, "kind": kind, "status": status, "bots": bots,
                          "versions": list(seats)}, None)

    def _matches(self, first: bool) -> list[tuple[str, dict[str, Any], int | None]]:
        db = self.store.db
        changes: list[tuple[str, dict[str, Any], int | None]] = []
        rows = db.execute("SELECT match_id, kind, seats FROM matches WHERE kind IN "
                          "('ladder', 'final', 'challenge') AND status = 'running'"
                          ).fetchall()  # by the index on (kind, status)
        running = {str(row[0]): (str(row[1]), _seats(row[2])) for row in rows}
        newest = int(db.execute("SELECT COALESCE(MAX(rowid), 0) FROM results").fetchone()[0])
        done = [] if first else [str(row[0]) for row in db.execute(
            "SELECT DISTINCT match_id FROM results WHERE rowid > ? AND rowid <= ?",
            (self.last_result, newest))]
        self.last_result = newest
        for match_id in sorted(set(self.running) - set(running) | set(done)):
            row = db.execute("SELECT status, kind, seats FROM matches WHERE match_id = ?",
                             (match_id,)).fetchone()
            if row is not None:
                changes.append(self._match(match_id, str(row[0]), str(row[1]),
                                           _seats(row[2])))
        for match_id in sorted(set(running) - set(self.running)):
            kind, seats = running[match_id]
            changes.append(self._match(match_id, "running", kind, seats))
        self.running = running
        return changes

    def _versions(self, first: bool) -> list[tuple[str, dict[str, Any], int | None]]:
        rows = self.store.db.execute(
            "SELECT v.id, v.status, b.name, v.number, b.author_id FROM versions v "
            "JOIN bots b ON b.id = v.bot_id").fetchall()
        seen = {int(r[0]): (str(r[1]), str(r[2]), int(r[3]), int(r[4])) for r in rows}
        before, self.versions = self.versions, seen
        if first:
            return []
        changes: list[tuple[str, dict[str, Any], int | None]] = []
        moved = [v for v, row in seen.items() if before.get(v, ("",))[0] != row[0]]
        for version_id in moved:
            stage, bot, number, author = seen[version_id]
            changes.append(("version", {"version": version_id, "bot": bot,
                                        "number": number, "status": stage}, author))
            if stage in PUBLIC_STAGES:
                changes.append(("bot", {"bot": bot, "number": number, "status": stage}, None))
        if moved:  # the queue moved: its positions, and nothing else, are theirs to see
            told = {seen[v][3] for v in moved}
            for author in sorted({row[3] for row in seen.values() if row[0] == "queued"}
                                 - told):
                changes.append(("queue", {}, author))
        return changes

    def _league(self, first: bool) -> list[tuple[str, dict[str, Any], int | None]]:
        """The organiser's actions (a bot withdrawn, disqualified, readmitted: its state)
        and the phase (every bot's row says it)."""
        db = self.store.db
        states = {str(r[0]): str(r[1]) for r in db.execute("SELECT name, state FROM bots")}
        row = db.execute("SELECT value FROM meta WHERE key = 'phase'").fetchone()
        phase = row[0] if row else None
        before, self.bot_states = self.bot_states, states
        phase_moved, self.phase = phase != self.phase, phase
        bots = sorted(states) if phase_moved else sorted(
            name for name, state in states.items() if name in before and before[name] != state)
        return [] if first or not bots else [("league", {"bots": bots}, None)]

    def _moves(self, watched: set[str]) -> list[tuple[str, dict[str, Any], int | None]]:
        changes: list[tuple[str, dict[str, Any], int | None]] = []
        for match_id in sorted(watched & set(self.running)):
            path = partial_log(self.logs, match_id)
            try:
                size = path.stat().st_size if path is not None else 0
            except OSError:
                size = 0
            if size != self.log_sizes.get(match_id, 0):
                changes.append(("moves", {"match": match_id}, None))
            self.log_sizes[match_id] = size
        for gone in set(self.log_sizes) - watched:
            del self.log_sizes[gone]
        return changes


def _seats(text: object) -> tuple[int, ...]:
    try:
        seats = json.loads(str(text))
    except ValueError:
        return ()
    return tuple(v for v in seats if type(v) is int) if isinstance(seats, list) else ()


class Hub:
    """The process's one watcher and its streams' subscribers, on the server's event loop."""

    def __init__(self, store_path: Path, logs: Path) -> None:
        self.store_path = store_path
        self.logs = logs
        self.subscribers: set[Subscriber] = set()
        self.clients: collections.Counter[str] = collections.Counter()
        self.history: collections.deque[Message] = collections.deque(maxlen=HISTORY_MOST)
        self.generation = 0
        """The id of the last message (what a page rendered now was rendered after)."""
        self.author_of: dict[int, int] = {}
        self.closed = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None
        self.thread = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="arena-live")

    # -- life ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start watching (on the running loop), once."""
        if self.task is None and not self.closed:
            self.loop = asyncio.get_running_loop()
            self.task = self.loop.create_task(self._watch())

    def close(self) -> None:
        """End every stream and stop watching; safe from any thread or a signal handler
        (the server told to stop: its graceful shutdown waits for open responses)."""
        if self.closed:  # no lock: a signal handler may run while the loop's thread holds one
            return
        self.closed = True
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._end_all)

    def _end_all(self) -> None:
        for subscriber in list(self.subscribers):
            subscriber.offer(None)
        if self.task is not None:
            self.task.cancel()

    async def _watch(self) -> None:
        assert self.loop is not None
        watcher: Watcher | None = None
        said = None
        try:
            while not self.closed:
                try:
                    if watcher is None:
                        watcher = await self.loop.run_in_executor(
                            self.thread, Watcher, self.store_path, self.logs)
                    watched = {s.topic.name for s in self.subscribers
                               if s.topic.kind == "replay"}
                    changes = await self.loop.run_in_executor(self.thread, watcher.look,
                                                              watched)
                    self.author_of = watcher.author_of()
                    for kind, data, author in changes:
                        self.publish(kind, data, author)
                    said = None
                except Exception as error:  # a damaged store: said once, looked at again
                    if str(error) != said:
                        said = str(error)
                        event("error", logging.ERROR, what="live updates cannot read the "
                              "store", message=said)
                await asyncio.sleep(POLL_SECONDS)
        finally:
            if watcher is not None:
                self.thread.submit(watcher.close)
            self.thread.shutdown(wait=False)

    # -- streams -------------------------------------------------------------------------

    def publish(self, kind: str, data: dict[str, Any], author: int | None = None) -> None:
        self.generation += 1
        message = Message(self.generation, kind, data, author)
        self.history.append(message)
        for subscriber in self.subscribers:
            if subscriber.topic.wants(message, self.author_of):
                subscriber.offer(message)

    def join(self, topic: Topic, client: str, since: int | None) -> Subscriber:
        """A new stream's subscriber, with the messages it missed since ``since`` already
        queued; Refused past the limits."""
        if self.closed:
            raise Refused(503, "the server is stopping")
        if self.clients[client] >= STREAMS_PER_CLIENT:
            raise Refused(429, f"at most {STREAMS_PER_CLIENT} live streams per client")
        if len(self.subscribers) >= STREAMS_MOST:
            raise Refused(503, "the server has as many live streams open as it takes")
        self.start()
        subscriber = Subscriber(topic, client)
        self.subscribers.add(subscriber)
        self.clients[client] += 1
        if since is not None and since < self.generation:
            oldest = self.history[0].id if self.history else self.generation + 1
            missed = [m for m in self.history
                      if m.id > since and topic.wants(m, self.author_of)]
            if since < oldest - 1:  # more was missed than is kept: the page refreshes
                subscriber.offer(Message(self.generation, "reset", {}))
            for message in missed[-(QUEUE_MOST - 1):]:
                subscriber.offer(message)
        return subscriber

    def leave(self, subscriber: Subscriber) -> None:
        if subscriber in self.subscribers:
            self.subscribers.discard(subscriber)
            self.clients[subscriber.client] -= 1
            if self.clients[subscriber.client] <= 0:
                del self.clients[subscriber.client]

    async def stream(self, subscriber: Subscriber) -> AsyncIterator[str]:
        """The stream's text: a retry delay, then each message as it comes, a keep-alive
        comment when idle; ends on the server's stop, a slow reader, or its life's end."""
        try:
            yield f"retry: {RETRY_MS}\n\n"
            loop = asyncio.get_running_loop()
            ends = loop.time() + STREAM_SECONDS
            while not self.closed:
                left = ends - loop.time()
                if left <= 0:
                    return
                try:
                    message = await asyncio.wait_for(subscriber.queue.get(),
                                                     min(KEEPALIVE_SECONDS, left))
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if message is None:
                    return
                yield message.text()
        finally:
            self.leave(subscriber)
