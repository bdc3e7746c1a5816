"""The event loop a match runs on: uvloop's (libuv's loop, in C) rather than asyncio's own.

Measured (``python -m benchmarks.referee_trees``, ten turns of five matches, the
two loops taking turns): a decision over the referee 0.90 of its time on asyncio's loop.
A decision wakes the referee's loop four times (the bot's answer at its seat's relay, gRPC's
read and write completions, the request passed on to the bot), and asyncio's loop spends
its Python on each turn (the selector's keys, the ready queue, the timer heap) where
uvloop's does it in C. Everything a match uses (gRPC's ``grpc.aio``, ``add_reader``,
timers, signal handlers) behaves the same on both; the whole suite runs on uvloop.

gRPC's aio layer is held for the process's life (``arena.protocol.aio``).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

from arena.protocol.aio import holding

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on a new uvloop loop (closed after, as ``asyncio.run``'s)."""
    return uvloop.run(holding(main))
