"""Waiting for something about to happen, such as killed processes to be gone."""

from __future__ import annotations

import time
from collections.abc import Iterator


def backoff(limit: float, first: float = 0.0005, longest: float = 0.01) -> Iterator[float]:
    """Pauses between polls, for ``limit`` seconds in all: short at first (a killed process
    is mostly gone within a millisecond or two), doubling up to ``longest``."""
    deadline = time.monotonic() + limit
    pause = first
    while time.monotonic() < deadline:
        yield pause
        pause = min(pause * 2, longest)
