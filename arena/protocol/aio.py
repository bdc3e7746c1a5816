"""Running gRPC's aio layer on a loop of its own, and leaving nothing of it to a later loop.

gRPC's aio layer shuts itself down when its last object is freed, and that shutdown waits
for its poller thread, which hands its events to the loop the objects were made on. Freed
later by the cyclic collector, in a process running another loop by then (the next match,
a web server, a browser driver), the shutdown waits forever (grpc/grpc#40989 describes the
same wait). So the garbage of a coroutine that used gRPC is collected while its loop runs.
"""

from __future__ import annotations

import gc
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


async def collected(main: Coroutine[Any, Any, T]) -> T:
    """``await main``, then collect the garbage it left while this loop still runs."""
    try:
        return await main
    finally:
        gc.collect()
