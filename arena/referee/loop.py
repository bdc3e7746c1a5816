"""The match loop: one task drives the rules engine and asks each seat's bot in turn.

It goes through these phases (``Phase``), and only these, in order:

- ``SEATING``: waiting for every bot's hello (``Session.wait_for_hellos``); a seat with
  none is disqualified (NO_HELLO, UNSUPPORTED_VARIANTS, FLOODED).
- ``STARTING``: sending each seated bot its ``MatchStart``.
- ``PLAYING``: the engine plays every decision that needs no bot (in-process seats, the
  autopilot of a disqualified seat) up to the next one a bot must make.
- ``ASKING``: writing that seat its new events and a ``DecisionRequest``, within the
  request's deadline and the seat's time bank (a bot that stops reading is cut off).
- ``WAITING``: taking the seat's messages from its inbox until one answers the request or
  the time runs out; then back to ``PLAYING``.
- ``FINISHING``: sending every seat still connected its ``MatchEnd``; then ``OVER``.

Answers reach the loop one way: gRPC reads them in the seat's ``Play`` handler, which
puts each in the seat's bounded inbox (``arena.referee.servicer``). Faults follow
docs/rules.md §20.
"""

from __future__ import annotations

import asyncio
import enum
import time
from typing import Any

from arena.bots.policies import GreedyPolicy, Policy
from arena.protocol import PROTOCOL_VERSION, pb
from arena.protocol.convert import rules_message
from arena.protocol.wire import decision_request_bytes, request_entry
from arena.referee.answers import read_action
from arena.referee.clock import TimeBank
from arena.referee.connection import DISCONNECTED, Connection, Unreadable
from arena.referee.faults import DISQUALIFYING, Fault, FaultKind, default_action
from arena.referee.launch import BotProcess
from arena.referee.log import LOG_FORMAT, MatchLogWriter
from arena.referee.servicer import Seating
from arena.referee.spec import InProcessSeat, MatchOutcome, MatchSpec, SeatReport
from arena.referee.timeline import Timeline
from arena.rules import events as ev
from arena.rules.actions import Action, DecisionKind
from arena.rules.match import Match
from arena.rules.seeds import MatchSeed
from arena.text import visible

LOG_HELD_MOST = 64
"""Log lines held unencoded while the bots play, at most (some 15 to 30 decisions; a
2-player match to 500 writes 500 to 2,000): then encoded into the file, once the next
request is on its way, so that the league server's live view of a match in play follows it
within a few moves. Counted in lines, not time: the same answers give the same file."""
LOG_HELD_BYTES = 4 * 1024 * 1024
"""The wire bytes of the held decision lines, at most (a 2-player match to 500 holds 20 to
90 KB; a bot padding every answer to the message limit reaches this in 256 decisions)."""

_KIND_NAMES = {kind: kind.name for kind in DecisionKind}
"""A decision kind's name, as the reports count it (``Enum.name`` is slow on a hot path)."""


class Phase(enum.Enum):
    SEATING = "waiting for every bot's hello"
    STARTING = "sending each seated bot its match start"
    PLAYING = "the engine plays on up to a bot's decision"
    ASKING = "writing the seat on turn its request"
    WAITING = "waiting for the seat on turn to answer"
    FINISHING = "sending every seat the match end"
    OVER = "the match is over"


class MatchLoop:
    """Plays ``spec``'s match over the seats in ``seating`` (bots seated by ``Play``),
    ``in_process`` (policies) and ``processes`` (the bots' processes, paused off turn where
    they can be)."""

    def __init__(self, spec: MatchSpec, seating: Seating, log: MatchLogWriter | None,
                 processes: dict[int, BotProcess] | None = None,
                 in_process: dict[int, InProcessSeat] | None = None) -> None:
        self.spec = spec
        self.seating = seating
        self.log = log
        self.processes = processes or {}
        self.in_process: dict[int, Policy] = {
            seat: each.policy for seat, each in (in_process or {}).items()}
        self.phase = Phase.SEATING
        self.loop: asyncio.AbstractEventLoop
        """The event loop the match runs on (set by ``run``)."""
        self.reports = [SeatReport(seat) for seat in range(spec.players)]
        for seat, each in (in_process or {}).items():
            report = self.reports[seat]
            report.connected, report.name, report.version = True, each.name, each.version
        self.chance = (spec.seed if isinstance(spec.seed, MatchSeed)
                       else MatchSeed.public(spec.seed))
        self.match = Match(spec.players, self.chance.deck_rng(), spec.options)
        self.clock = TimeBank(spec.limits, spec.players, spec.untimed)
        self.timeline = Timeline(spec.players)
        """Everything a bot is told, in order: engine events and faults."""
        self.synced = 0
        """The engine's events already in the timeline."""
        self.autopilots = [GreedyPolicy(self.chance.seat_seed(seat))
                           for seat in range(spec.players)]
        self.request_ids = [0] * spec.players
        """Each seat's own count of requests (one count for all would tell a bot how many
        decisions the others made that no event shows)."""
        self.expired: list[set[int]] = [set() for _ in range(spec.players)]
        """Requests that timed out: a late answer to one is logged and dropped."""
        self.decisions = 0
        self.log_error: Exception | None = None
        """An error of the log's encoding or writing (a full disk), raised by the loop."""
        self.pausers = {seat: pause for seat, process in self.processes.items()
                        if (pause := getattr(process, "pause", None)) is not None}
        self.resumers = {seat: resume for seat, process in self.processes.items()
                         if (resume := getattr(process, "resume", None)) is not None}

    # -- the phases ------------------------------------------------------------------------

    async def run(self, started: float, on_progress: Any = None,
                  seating_done: Any = None) -> MatchOutcome:
        """Play the match to its end. ``seating_done`` is awaited for the hellos (none:
        every seat is in already); ``on_progress(match)`` is told each round's end."""
        spec = self.spec
        self.loop = asyncio.get_running_loop()
        self._write_log({
            "type": "header", "format": LOG_FORMAT, "match_id": spec.match_id,
            **self.chance.to_record(), "players": spec.players,
            "protocol_version": int(PROTOCOL_VERSION),
            "rules": spec.options.to_dict(), "limits": spec.limits.to_record(),
            "sandbox": spec.sandbox,
            **({"untimed": sorted(spec.untimed)} if spec.untimed else {})})
        if seating_done is not None:
            await seating_done
        self.take_seats()
        self._write_log({"type": "seats", "seats": [
            {"seat": r.seat, "name": r.name, "version": r.version, "connected": r.connected}
            for r in self.reports]})
        self.phase = Phase.STARTING
        self._sync_events()
        await self._start()
        self._off_turn(self.processes)
        play_started = time.perf_counter()
        match = self.match
        while not match.is_over:
            self.phase = Phase.PLAYING
            if self.log_error is not None:
                raise self.log_error
            self._record_floods()
            seat = match.current_seat
            observation, legal = match.observation(seat), match.legal_actions()
            policy = self.in_process.get(seat)
            if policy is not None:
                self._apply(seat, policy.decide(observation, legal), "in-process")
            elif self.reports[seat].disqualified:
                self._apply(seat, self.autopilots[seat].decide(observation, legal), "autopilot")
            else:
                await self._ask(seat, observation, legal, on_progress)
                continue
            self._progress(on_progress)
        if self.log_error is not None:
            raise self.log_error
        self._record_floods()
        self.phase = Phase.FINISHING
        places = match.standing([r.seat for r in self.reports if r.disqualified])
        for seat in self.processes:
            self._on_turn(seat)  # every bot reads the match's end
        await self._finish(places)
        play_seconds = time.perf_counter() - play_started
        if self.log:
            self.log.flush()  # the lines held while the bots played (see MatchLogWriter)
        outcome = MatchOutcome(
            spec.match_id, spec.seed, tuple(match.scores), places, match.rounds_played,
            match.round_limit_reached, tuple(self.reports), self._rounds_won(),
            self.decisions, time.perf_counter() - started, play_seconds, spec.log_path)
        self._write_log({"type": "result", "scores": list(outcome.scores),
                         "places": list(outcome.places),
                         "disqualified": list(outcome.disqualified),
                         "rounds": outcome.rounds,
                         "round_limit_reached": outcome.round_limit_reached,
                         "decisions": outcome.decisions})
        self.phase = Phase.OVER
        return outcome

    def take_seats(self) -> None:
        """Name every seat, and disqualify those with no bot seated."""
        seating, spec = self.seating, self.spec
        for seat, hello in seating.hellos.items():
            report = self.reports[seat]
            entered = spec.entered[seat] if seat < len(spec.entered) else None
            if entered is not None:
                report.name, report.version = entered
            else:  # what the bot says it is, its control characters as escapes
                report.name = visible(hello.bot_name[:100])
                report.version = visible(hello.bot_version[:100])
            report.connected = seat in seating.connections
        self._record_floods()  # a seat cut off before its hello: that is its fault
        for seat in range(spec.players):
            if seat in seating.unsupported:
                self._fault(seat, FaultKind.UNSUPPORTED_VARIANTS, seating.unsupported[seat])
            elif seat not in seating.connections and seat not in self.in_process:
                process = self.processes.get(seat)
                exited = process is not None and process.poll() is not None
                reason = ("the bot exited before saying hello" if exited else
                          f"no valid hello within {spec.limits.hello_timeout:g} s")
                if seating.refused:
                    reason += (f"; {seating.refused} connection(s) refused for an unknown"
                               " or used token")
                self._fault(seat, FaultKind.NO_HELLO, reason)

    async def _start(self) -> None:
        spec = self.spec
        players = [pb.Player(seat=r.seat, name=r.name, version=r.version)
                   for r in self.reports]
        limits = pb.Limits(decision_deadline_ms=int(spec.limits.decision_deadline * 1000),
                           time_bank_ms=int(spec.limits.time_bank * 1000),
                           strike_limit=spec.limits.strike_limit)
        for seat, connection in self.seating.connections.items():
            start = pb.MatchStart(
                match_id=spec.match_id, seat=seat, players=players,
                rules=rules_message(spec.options), limits=limits,
                seed=self.chance.seat_seed(seat), protocol_version=PROTOCOL_VERSION)
            if not await connection.write_until(pb.PlayResponse(match_start=start),
                                                self.clock.until(seat, time.perf_counter())):
                self._record_floods()  # why, if it flooded
                self._fault(seat, FaultKind.DISCONNECTED, "stream closed before match start")

    async def _ask(self, seat: int, observation: Any, legal: list[Action],
                   on_progress: Any) -> None:
        """``ASKING`` then ``WAITING``: the seat's decision, from its bot or by default."""
        connection = self.seating.connections[seat]
        self._on_turn(seat)
        asked = self.reports[seat].asked
        kind = _KIND_NAMES[observation.decision]
        asked[kind] = asked.get(kind, 0) + 1
        if not self._strike_stale(seat, connection):
            self._decide(seat, observation, None, 0.0, None, None, on_progress)
            return
        self.phase = Phase.ASKING
        limits = self.spec.limits
        self.request_ids[seat] += 1
        request_id = self.request_ids[seat]
        request = decision_request_bytes(
            request_id, observation, legal, int(limits.decision_deadline * 1000),
            int(self.clock.left[seat] * 1000))
        message = self.timeline.unsent(seat) + request_entry(request)  # logged as sent
        log = self.log
        if log and (log.held >= LOG_HELD_MOST or log.held_bytes >= LOG_HELD_BYTES):
            self.loop.call_soon(self._flush_log)  # once the request is on its way
        if connection.relay is not None:
            connection.relay.grant()
        sent = time.perf_counter()
        until = self.clock.until(seat, sent)
        if not await connection.write_until(message, until):
            self._record_floods()  # why its stream broke, if it flooded
            self._fault(seat, FaultKind.DISCONNECTED,
                        "did not read its request within the deadline and time bank"
                        if time.perf_counter() >= until else "the stream broke")
            self._decide(seat, observation, None, 0.0, None, None, on_progress)
            return
        for other in self.seating.connections:  # while the bot thinks
            if other != seat and not self.reports[other].disqualified:
                self.timeline.encode(other)
        self.phase = Phase.WAITING
        action, latency, answer = await self._answer(seat, connection, request_id, legal,
                                                     sent, until)
        self._decide(seat, observation, action, latency, request, answer, on_progress)

    async def _answer(self, seat: int, connection: Connection, request_id: int,
                      legal: list[Action], sent: float, until: float
                      ) -> tuple[Action | None, float, pb.Decision | None]:
        """The seat's answer to ``request_id``: its action (None: the default is played),
        its latency, and its last decision message (for the log)."""
        report, inbox = self.reports[seat], connection.inbox
        answer: pb.Decision | None = None
        while True:
            item = await inbox.get(until)
            if item is None:
                self.clock.empty(seat)
                self.expired[seat].add(request_id)
                self._fault(seat, FaultKind.TIMEOUT, f"no answer to request {request_id} "
                            "within the deadline and time bank")
                return None, time.perf_counter() - sent, answer
            arrived, reply = item
            latency = arrived - sent
            if reply is DISCONNECTED:
                self._record_floods()  # a seat cut off for flooding: that is its fault
                self._fault(seat, FaultKind.DISCONNECTED,
                            "the bot closed its stream" + self._exit_note(seat))
                return None, latency, answer
            if not reply.HasField("decision"):
                self._fault(seat, FaultKind.MALFORMED, reply.reason
                            if type(reply) is Unreadable else "expected a decision message")
                if report.disqualified:
                    return None, latency, answer
                continue
            if self.expired[seat] and self._is_late_answer(seat, reply):
                continue
            decision = reply.decision
            # Logged without fields the protocol does not know: a bot padding its answers
            # to the message limit would make its logs a hundred times longer.
            decision.DiscardUnknownFields()
            answer = decision
            if decision.request_id != request_id:
                never = (", but no decision was asked with that id"
                         if decision.request_id > request_id else "")
                self._fault(seat, FaultKind.OUT_OF_TURN, f"answered request "
                            f"{decision.request_id}{never}; pending is {request_id}")
                if report.disqualified:
                    return None, latency, answer
                continue
            self.clock.charge(seat, latency)
            report.decisions += 1
            report.think_seconds += latency
            action, problem = read_action(decision, legal)
            if problem is not None:
                self._fault(seat, *problem)
            return action, latency, answer

    async def _finish(self, places: tuple[int, ...]) -> None:
        match = self.match
        end = pb.MatchEnd(scores=match.scores, places=places,
                          disqualified=[r.seat for r in self.reports if r.disqualified],
                          rounds=match.rounds_played,
                          round_limit_reached=match.round_limit_reached)
        for seat, connection in self.seating.connections.items():
            if connection.alive:
                await connection.write_until(
                    self.timeline.unsent(seat) + pb.PlayResponse(match_end=end).SerializeToString(),
                    self.clock.until(seat, time.perf_counter()))
            connection.finished.set()

    # -- decisions and faults -------------------------------------------------------------

    def _strike_stale(self, seat: int, connection: Connection) -> bool:
        """Strike every message that arrived while no request was pending (out of turn);
        whether the seat may still be asked."""
        inbox = connection.inbox
        while not inbox.empty():
            _, message = inbox.get_nowait()
            if message is DISCONNECTED:
                self._record_floods()
                self._fault(seat, FaultKind.DISCONNECTED, "the bot closed its stream")
                return False
            if self._is_late_answer(seat, message):
                continue
            if type(message) is Unreadable:
                self._fault(seat, FaultKind.MALFORMED, message.reason)
                continue
            self._fault(seat, FaultKind.OUT_OF_TURN, "a message arrived while no decision "
                        "was asked of this seat")
        return not self.reports[seat].disqualified

    def _is_late_answer(self, seat: int, message: Any) -> bool:
        """A late answer to a request that already timed out: logged and dropped."""
        if message.HasField("decision") and message.decision.request_id in self.expired[seat]:
            self.expired[seat].discard(message.decision.request_id)
            self._write_log({"type": "late_answer", "seat": seat,
                             "request": message.decision.request_id})
            return True
        return False

    def _decide(self, seat: int, observation: Any, action: Action | None, latency: float,
                asked: bytes | None, answer: pb.Decision | None, on_progress: Any) -> None:
        """A bot's decision is made: its action, or its default when it gave none."""
        self._off_turn([seat])
        source = "bot"
        if action is None:
            report = self.reports[seat]
            kind = _KIND_NAMES[observation.decision]
            report.mishandled[kind] = report.mishandled.get(kind, 0) + 1
            action = default_action(observation)
            source = "autopilot" if report.disqualified else "default"
        self._apply(seat, action, source, latency, asked, answer)
        self._progress(on_progress)

    def _apply(self, seat: int, action: Action, source: str, latency: float = 0.0,
               asked: bytes | None = None, answer: pb.Decision | None = None) -> None:
        self.match.apply(action)
        self.decisions += 1
        if self.log:
            self.log.decision(seat, self.request_ids[seat], action, source, asked, answer,
                              latency, self.clock.left[seat])
        self._sync_events()

    def _progress(self, on_progress: Any) -> None:
        if on_progress is not None and isinstance(self.match.events[-1], ev.RoundEnded):
            on_progress(self.match)

    def _fault(self, seat: int, kind: FaultKind, reason: str) -> None:
        report = self.reports[seat]
        if report.disqualified:
            return
        if kind is FaultKind.ILLEGAL_ACTION and self.spec.options.mistake_penalty and (
            self.match.penalise(seat)
        ):  # §32: two cards instead of a strike (then the default action, as for a strike)
            self._record_fault(report, Fault(seat, kind, reason + "; draws 2 (§32)",
                                             report.strikes, False, penalised=True))
            self._write_log({"type": "penalty", "seat": seat})
            return
        disqualify = kind in DISQUALIFYING
        if not disqualify:
            report.strikes += 1
        self._record_fault(report, Fault(seat, kind, reason, report.strikes, disqualify))
        limit = self.spec.limits.strike_limit
        if not disqualify and report.strikes >= limit:
            self._record_fault(report, Fault(
                seat, FaultKind.STRIKE_LIMIT, f"reached the strike limit of {limit}",
                report.strikes, True))

    def _record_floods(self) -> None:
        floods = self.seating.floods
        while floods:
            seat, reason = floods.pop(0)
            self._fault(seat, FaultKind.FLOODED, reason)

    def _record_fault(self, report: SeatReport, fault: Fault) -> None:
        report.faults.append(fault)
        report.disqualified = report.disqualified or fault.disqualified
        self.timeline.append(fault)
        self._write_log({"type": "fault", **fault.to_record()})

    def _exit_note(self, seat: int) -> str:
        process = self.processes.get(seat)
        if process is None:
            return ""
        note = getattr(process, "exit_note", lambda: "")()
        if note:
            return f" ({note})"
        code = process.poll()
        return f" (process exited with code {code})" if code is not None else ""

    def _sync_events(self) -> None:
        events = self.match.events
        new = events[self.synced:]
        self.synced = len(events)
        self.timeline.extend(new)
        if self.log:
            self.log.events(new)

    # -- the log and the sandbox ----------------------------------------------------------

    def _write_log(self, record: dict[str, Any]) -> None:
        if self.log:
            self.log.write(record)

    def _flush_log(self) -> None:
        """Encode the held log lines: an event-loop callback, so an error is kept for the
        match loop to raise rather than lost in the loop's exception handler."""
        if self.log is not None and self.log_error is None:
            try:
                self.log.flush()
            except Exception as error:
                self.log_error = error

    def _on_turn(self, seat: int) -> None:
        """Let the seat's bot run (see ``_off_turn``)."""
        resume = self.resumers.get(seat)
        if resume is not None:
            resume()

    def _off_turn(self, seats: Any) -> None:
        """Only the seat on turn runs: a sandbox that can (``SandboxProcess.pause``) freezes
        a bot off turn, so it can neither take CPU from the seat thinking nor watch it. The
        pause is made once the next request is on its way (``call_soon``: when the loop
        next waits), off the path of the next decision."""
        for seat in seats:
            pause = self.pausers.get(seat)
            if pause is not None:
                self.loop.call_soon(self._pause_unless_on_turn, seat, pause)

    def _pause_unless_on_turn(self, seat: int, pause: Any) -> None:
        if not self.match.is_over and self.match.current_seat != seat:
            pause()

    def _rounds_won(self) -> tuple[int, ...]:
        won = [0] * self.spec.players
        for event in self.match.events:
            if type(event) is ev.RoundEnded and event.winner >= 0:
                won[event.winner] += 1
        return tuple(won)
