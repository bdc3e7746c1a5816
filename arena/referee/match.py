"""Run one match between bots over gRPC: the referee's entry point.

The bots are gRPC clients of the session's servers (``arena.referee.session``), each seat
bound by a one-time token; the match loop (``arena.referee.loop``) drives the rules engine
and asks each seat in turn. ``run_match`` is what seasons, ``arena play``, ``arena check``
and the league server call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from arena.referee.connection import INBOX_BYTES, INBOX_MESSAGES, MAX_MESSAGE_BYTES
from arena.referee.launch import SeatLauncher
from arena.referee.log import MatchLogWriter
from arena.referee.loop import MatchLoop
from arena.referee.session import Session
from arena.referee.spec import InProcessSeat, MatchOutcome, MatchSpec, Seat, SeatReport

__all__ = ["INBOX_BYTES", "INBOX_MESSAGES", "MAX_MESSAGE_BYTES", "InProcessSeat",
           "MatchOutcome", "MatchSpec", "Seat", "SeatReport", "run_match"]


async def run_match(
    spec: MatchSpec,
    launchers: list[Seat],
    *,
    address: str | None = None,
    on_progress: Any = None,
    announce: Callable[[int, str, str], None] | None = None,
) -> MatchOutcome:
    """Play a match. ``launchers[seat]`` starts that seat's bot; an InProcessSeat plays
    in-process; None means the bot is started by hand with the address and token printed
    (``arena play --listen``): ``announce(seat, address, token)`` is called for it, or the
    address and token are printed."""
    if len(launchers) != spec.players:
        raise ValueError("one launcher per seat")
    in_process = {seat: each for seat, each in enumerate(launchers)
                  if isinstance(each, InProcessSeat)}
    bots: dict[int, SeatLauncher | None] = {
        seat: each for seat, each in enumerate(launchers)
        if not isinstance(each, InProcessSeat)}
    log = MatchLogWriter(spec.log_path) if spec.log_path else None
    started = time.perf_counter()
    try:
        async with Session(spec, bots, set(in_process), address, announce) as session:
            loop = MatchLoop(spec, session.seating, log, session.processes, in_process)
            outcome = await loop.run(started, on_progress, session.wait_for_hellos())
            session.finished = True
            if log:
                log.close()
        return outcome
    except BaseException:
        if log:
            log.abandon()
        raise
