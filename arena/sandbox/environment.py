"""The environment every bot starts with, under every backend (besides ARENA_ADDRESS,
ARENA_TOKEN and ARENA_SEAT, which the referee adds)."""

from __future__ import annotations

import compileall
import functools
from pathlib import Path

from arena import grpc_env
from arena.sandbox.fetch import PYTHON_PACKAGES

ARENA_PACKAGE = Path(__file__).resolve().parents[1]

BOT_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", **grpc_env.current(),
           # Python bots import the very ``arena`` package the referee runs (the SDK and the
           # rules must agree), wherever it is installed: an editable install's import hook
           # may point elsewhere, at a checkout the sandbox does not show. Then the packages
           # the fetch step put in the bot's folder (relative: the bot runs in its folder).
           "PYTHONPATH": f"{ARENA_PACKAGE.parent}:{PYTHON_PACKAGES}"}
HOST_ONLY = ("PYTHONPATH",)
"""Variables that name host paths: not for a container, which has its own package."""


@functools.cache
def compile_sdk() -> bool:
    """Write the bytecode of the ``arena`` package (the SDK, the protocol, the rules) once per
    process. Python bots cannot write it themselves (a read-only sandbox, and
    PYTHONDONTWRITEBYTECODE above), so without it every bot compiles them from source at
    every start: 12 ms of CPU of a bot's 80 ms start-up, measured. Files already compiled
    are left alone; where the package cannot be written, nothing is (False)."""
    try:
        return bool(compileall.compile_dir(ARENA_PACKAGE, quiet=2, workers=1))
    except OSError:
        return False
