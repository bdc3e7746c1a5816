"""gRPC's aio layer, held initialised for the life of the process.

gRPC counts its aio layer's users (``grpc.aio.init_grpc_aio`` as a channel or server is
made, ``grpc.aio.shutdown_grpc_aio`` as it is freed) and shuts the layer down when the
count falls to zero; that shutdown joins its poller thread, which can be waiting on the
loop of a match long over (grpc/grpc#40989 describes the wait). A process that runs one
loop after another (a match worker, the test suite) frees its objects at the cyclic
collector's whim, in whatever loop then runs, and hung there for good. Held once, the
count never reaches zero: the layer lives until the process exits, as the poller thread
would for any long-lived channel.
"""

from __future__ import annotations

import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import grpc.aio

T = TypeVar("T")

_held = False
_lock = threading.Lock()


def hold_grpc_aio() -> None:
    """Take one lasting count of gRPC's aio layer (the first call in a process; the rest
    do nothing)."""
    global _held
    with _lock:
        if not _held:
            grpc.aio.init_grpc_aio()
            _held = True


async def holding(main: Coroutine[Any, Any, T]) -> T:
    """``await main``, the aio layer held first: from inside the running loop, since
    ``init_grpc_aio`` asks asyncio for the current loop, which a thread of a Dask worker
    has none of until one runs."""
    hold_grpc_aio()
    return await main
