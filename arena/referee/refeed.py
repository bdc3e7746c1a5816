"""Re-feed one logged decision to a bot: a one-decision session over the referee's own
server and seat machinery (token, hello, variant check, bounded inbox).

The bot is started fresh (by the launcher given: in the sandbox), says hello, gets a
``MatchStart`` rebuilt from the log's header (its seat, the players, the rules, the limits
and its seed, when the log's key is known) and then exactly the logged ``DecisionRequest``
(no events: what a bot needs to answer is in the request's observation), and its answer is
read within the request's deadline and time bank. A match end follows, so that a well-made
bot exits on its own; then it is stopped as after a match.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from arena.protocol import PROTOCOL_VERSION, pb
from arena.protocol.convert import rules_message
from arena.referee.connection import DISCONNECTED
from arena.referee.launch import BotProcess, SeatLauncher
from arena.referee.limits import Limits
from arena.referee.session import Session
from arena.referee.spec import MatchSpec
from arena.rules.options import RuleOptions

STARTUP_SECONDS = 30.0
"""At least this long for the fresh bot's hello (a cold start in the sandbox, a JVM)."""


@dataclass(frozen=True)
class RefeedAnswer:
    answer: pb.Decision | None
    """The bot's decision; None when it gave none (``problem`` says why)."""
    latency_ms: float
    problem: str = ""


def limits_from_header(header: dict[str, Any]) -> Limits:
    limits = header.get("limits") or {}
    return Limits(decision_deadline=float(limits.get("decision_deadline", 1.0)),
                  time_bank=float(limits.get("time_bank", 10.0)),
                  strike_limit=int(limits.get("strike_limit", 3)),
                  hello_timeout=max(float(limits.get("hello_timeout", 10.0)), STARTUP_SECONDS))


async def refeed(header: dict[str, Any], names: list[str], seat: int,
                 request: pb.DecisionRequest, launcher: SeatLauncher, seed: int
                 ) -> RefeedAnswer:
    """Start the bot for ``seat``, hand it ``request`` and return its answer."""
    players = int(header["players"])
    limits = limits_from_header(header)
    options = RuleOptions.from_dict(header.get("rules") or {})
    spec = MatchSpec(f"{header.get('match_id', 'match')}-refeed", seed, players, options,
                     limits)
    async with Session(spec, {seat: launcher}) as session:
        process = session.processes[seat]
        await session.wait_for_hellos()
        seating = session.seating
        if seat in seating.unsupported:
            return RefeedAnswer(None, 0.0, seating.unsupported[seat])
        if seat not in seating.connections:
            if process.poll() is not None:
                return RefeedAnswer(None, 0.0, "the bot exited before saying hello"
                                    + _exit_note(process))
            return RefeedAnswer(None, 0.0, f"no hello within {limits.hello_timeout:g} s")
        connection = seating.connections[seat]
        start = pb.MatchStart(
            match_id=spec.match_id, seat=seat,
            players=[pb.Player(seat=s, name=names[s]) for s in range(players)],
            rules=rules_message(options),
            limits=pb.Limits(decision_deadline_ms=int(limits.decision_deadline * 1000),
                             time_bank_ms=int(limits.time_bank * 1000),
                             strike_limit=limits.strike_limit),
            seed=seed, protocol_version=PROTOCOL_VERSION)
        allowed = (request.deadline_ms + request.time_bank_ms) / 1000
        await connection.write_until(pb.PlayResponse(match_start=start),
                                     time.perf_counter() + allowed)
        sent = time.perf_counter()
        until = sent + allowed
        if not await connection.write_until(pb.PlayResponse(decision_request=request), until):
            return RefeedAnswer(None, 0.0, "the bot's stream broke")
        while True:
            item = await connection.inbox.get(until)
            if item is None:
                return RefeedAnswer(None, allowed * 1000, f"no answer within {allowed:g} s "
                                    "(the request's deadline and time bank)")
            arrived, reply = item
            latency = (arrived - sent) * 1000
            if reply is DISCONNECTED:
                return RefeedAnswer(None, latency, "the bot closed its stream"
                                    + _exit_note(process))
            if reply.HasField("decision"):
                break
        observation = request.observation
        end = pb.MatchEnd(scores=list(observation.scores),
                          places=list(range(1, players + 1)), rounds=observation.round_number)
        session.finished = await connection.write_until(pb.PlayResponse(match_end=end),
                                                        time.perf_counter() + allowed)
        return RefeedAnswer(reply.decision, latency)


def _exit_note(process: BotProcess) -> str:
    note = getattr(process, "exit_note", lambda: "")()
    if note:
        return f" ({note})"
    code = process.poll()
    return f" (exit code {code})" if code is not None else ""
