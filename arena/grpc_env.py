"""gRPC settings for every process of a match: the referee, the Python SDK and the bots.

grpcio 1.85's default I/O path (EventEngine) hands every message across three threads; the
older path does the I/O in the thread that polls. Measured on a 2-core machine
(``python -m benchmarks.transport``): a stream round trip over a Unix socket with a match's
messages takes 1.8x less time (~600 -> ~330 us) and 1.7x less CPU. gRPC reads the variable
once, when it is imported, so ``arena/__init__.py`` applies it before anything imports grpc;
a value the user has set wins. The names are checked by a test, so a grpcio that drops them
is noticed.
"""

from __future__ import annotations

import os

GRPC_ENVIRONMENT = {
    "GRPC_EXPERIMENTS": "-event_engine_client,-event_engine_listener,"
                        "-event_engine_for_all_other_endpoints",
}
"""Also part of every bot's environment (``current()``): C-core bots (Python, C++) get the
same speed-up."""


def apply() -> None:
    for name, value in GRPC_ENVIRONMENT.items():
        os.environ.setdefault(name, value)


def current() -> dict[str, str]:
    """The settings in force in this process (the user's where set): what bots get too."""
    return {name: os.environ.get(name, value) for name, value in GRPC_ENVIRONMENT.items()}
