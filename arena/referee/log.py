"""The match log: one gzip-compressed JSON-lines file per match.

Line kinds (field ``type``): ``header`` (match id, where its deals come from — the season
key's commitment and the match's label, or a public seed —, players, rule options, limits,
protocol version), ``event`` (an engine event, every card shown), ``decision`` (seat,
request id, action, where it came from, latency), ``fault`` (a strike or disqualification
with its reason) and ``result``. Game content is a pure function of the match key (or seed)
and the decisions; only latencies and wall-clock fields differ between runs.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena.rules.events import Event, to_record

LOG_FORMAT = 1


class MatchLogWriter:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # Unique per process: a worker orphaned by a killed run cannot collide with the rerun.
        self._partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        # Only the referee reads a match in play (the log shows every hand); the finished
        # log is public.
        self._raw = os.fdopen(os.open(self._partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                                      | os.O_NOFOLLOW, 0o600), "wb")
        # mtime=0 keeps the compressed bytes free of the clock.
        self._gzip = gzip.GzipFile(fileobj=self._raw, mode="wb", mtime=0)
        self._text = io.TextIOWrapper(self._gzip, encoding="utf-8", newline="\n")
        self._pending: list[dict[str, Any] | Event] = []

    # Records are queued and encoded by flush(), which the referee calls once a request is
    # on its way: encoding then overlaps the bot's thinking instead of delaying the request.
    def write(self, record: dict[str, Any]) -> None:
        self._pending.append(record)

    def event(self, event: Event) -> None:
        self._pending.append(event)

    def flush(self) -> None:
        dumps, write = json.dumps, self._text.write
        for item in self._pending:
            if not isinstance(item, dict):
                item = to_record(item)
                item["type"] = "event"
            write(dumps(item, separators=(",", ":")) + "\n")
        self._pending.clear()

    def close(self) -> None:
        """Finish the file and move it into place: a log exists whole or not at all."""
        self.flush()
        self._text.close()
        self._raw.close()
        os.chmod(self._partial, 0o644)
        self._partial.replace(self.path)

    def abandon(self) -> None:
        self._text.close()
        self._raw.close()
        self._partial.unlink(missing_ok=True)


def read_log(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            yield json.loads(line)
