"""The launcher interface the referee needs; ``arena.sandbox`` implements it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol


class BotProcess(Protocol):
    """A started bot: the referee only needs to know whether it lives, and to kill it.

    A sandbox may also offer ``pause()`` and ``resume()``: the match loop then pauses a bot
    off turn and resumes it on turn (``arena.sandbox.SandboxProcess`` freezes its cgroup),
    so only the seat on turn runs."""

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""
        ...

    def kill(self) -> None:
        """Kill the bot and everything it started. Safe to call twice."""
        ...


# Given the environment the bot must see (ARENA_ADDRESS, ARENA_TOKEN, ...) and the match's
# socket folder (to bind into a sandbox), start the bot.
SeatLauncher = Callable[[dict[str, str], Path], BotProcess]
