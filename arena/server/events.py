"""The league server's log: one line per event (a submission, a version's stage, a match
started, played or failed, an error), as text or as JSON lines for a log collector.

Events go to the ``arena.server`` logger (Python's ``logging``), so an embedding program
may route them as it likes; ``arena server`` writes them to stderr (``configure``).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

LOGGER = logging.getLogger("arena.server")
FORMATS = ("text", "json")


def event(name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log the event ``name`` with its fields (values JSON can hold)."""
    LOGGER.log(level, "%s %s", name, fields, extra={"arena_event": name, "arena_fields": fields})


class JsonLines(logging.Formatter):
    """``{"at": ..., "level": ..., "event": ..., fields...}``, one object a line."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "arena_fields", {})
        line = {"at": round(record.created, 3), "level": record.levelname.lower(),
                "event": getattr(record, "arena_event", record.getMessage()), **fields}
        return json.dumps(line, default=str, ensure_ascii=False)


class Text(logging.Formatter):
    """``2026-12-02T13:07:52Z match id=L000001 status=done ...``"""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "arena_fields", {})
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created))
        shown = " ".join(f"{key}={json.dumps(value, default=str, ensure_ascii=False)}"
                         if isinstance(value, str) and (" " in value or not value)
                         else f"{key}={value}" for key, value in fields.items())
        return f"{at} {getattr(record, 'arena_event', record.getMessage())} {shown}".rstrip()


def configure(kind: str = "text", stream: Any = None) -> logging.Handler:
    """Write the server's events to ``stream`` (stderr) in ``kind`` (``FORMATS``)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLines() if kind == "json" else Text())
    LOGGER.handlers[:] = [handler]
    LOGGER.setLevel(logging.INFO)
    LOGGER.propagate = False
    return handler
