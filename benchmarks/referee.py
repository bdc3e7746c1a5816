"""What the referee adds over its transport, and what a dripping bot costs it.

In one run, measured side by side:

1. a full 2-player match to 500 between two Python sample bots (strategist, greedy) as real
   processes over the referee: wall time per decision, start-up excluded;
2. a bare gRPC ping-pong over the same transport (grpc.aio server on a Unix socket, on the
   event loop matches run on, ``arena.referee.eventloop``; a separate Python client process
   with the SDK's grpc.aio streaming loop), replaying the same message sizes;
3. the same ping-pong with two clients alternating, as a 2-player match does, and with two
   clients that also do the bot's work (the SDK's conversions and the strategist's
   decision), which leaves the referee as the only difference;
4. the ratio to the two clients doing the bot's work, which is what the referee alone adds
   (target <= 1.6), seconds per match to 500, and the split of a decision's time into
   transport, bot and referee; the referee's part split again into its own work (the real
   match loop over streams that answer at once: engine, wire bytes, log, bookkeeping) and
   what asyncio, gRPC and the seat's relay add on the answer's path;
5. the CPU of the referee's event-loop thread per decision in play next to the working
   ping-pong server's; the same match with no log, and with its log encoded after each
   request rather than once the bots have played;
6. the referee process's CPU per decision (every thread) against a raw HTTP/2 bot that
   plays plainly and against one that drips every other answer a byte a write (target:
   at most twice the plain figure), and the honest opponent's median decision after a
   dripped turn over its median after a plain one, in the same matches (target <= 1.1).

Run: ``python -m benchmarks.referee [--matches N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import grpc

from arena.bots.policies import POLICIES
from arena.bots.runner import deck_seed, play_match
from arena.protocol import pb, pb_grpc
from arena.protocol.convert import (
    action_from_message,
    decision_request,
    event_messages,
    observation_from_request,
)
from arena.protocol.wire import decision_request_bytes, event_entry
from arena.referee import eventloop
from arena.referee import loop as loop_module
from arena.referee.connection import Connection
from arena.referee.limits import Limits
from arena.referee.log import MatchLogWriter, decode_answer, read_log
from arena.referee.loop import MatchLoop
from arena.referee.match import MatchOutcome, MatchSpec, run_match
from arena.referee.servicer import Seating
from arena.rules import Match
from arena.rules import events as ev
from arena.sandbox import BotManifest, PlainLauncher, load_manifest

ROOT = Path(__file__).resolve().parents[1]
BOTS = ("strategist", "greedy")
LOG_REPEATS = 7

CLIENT = textwrap.dedent('''
    import asyncio, sys, grpc
    from arena.protocol import pb, pb_grpc
    WORK = False
    async def main():
        if WORK:
            from arena.bots.policies import StrategistPolicy
            from arena.protocol.convert import action_from_message, observation_from_request
            policy = StrategistPolicy(0)
        answer = pb.PlayRequest(decision=pb.Decision(request_id=1, action_index=0))
        async with grpc.aio.insecure_channel(sys.argv[1]) as channel:
            call = pb_grpc.RefereeServiceStub(channel).Play()
            await call.write(pb.PlayRequest(hello=pb.Hello()))
            while True:
                response = await call.read()
                if response is grpc.aio.EOF or response.WhichOneof("message") == "match_end":
                    break
                if WORK:
                    request = response.decision_request
                    legal = [action_from_message(a) for a in request.legal_actions]
                    action = policy.decide(observation_from_request(request), legal)
                    answer = pb.PlayRequest(decision=pb.Decision(
                        request_id=request.request_id,
                        action_index=legal.index(action) if action in legal else 0))
                await call.write(answer)
            await call.done_writing()
    asyncio.run(main())
''')

# The same client doing a bot's per-decision work as the SDK does it (read the request,
# convert the observation and legal actions, the strategist decides): transport + bot.
WORKING_CLIENT = CLIENT.replace("WORK = False", "WORK = True")


async def ping_pong(requests: list[pb.PlayResponse], clients: int = 1,
                    client: str = CLIENT) -> float:
    """Seconds per round trip for streams replaying ``requests``; with two clients the
    requests alternate between them, as a 2-player match alternates between its bots."""
    return (await ping_pong_cpu(requests, clients, client))[0]


async def ping_pong_cpu(requests: list[pb.PlayResponse], clients: int = 1,
                        client: str = CLIENT) -> tuple[float, float]:
    """``ping_pong``'s seconds per round trip, and the CPU seconds its event loop's thread
    spent per round trip (the server's Python side; gRPC's own threads not counted)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    address = f"unix:{folder / 'pp.sock'}"
    contexts: list[grpc.aio.ServicerContext] = []
    everyone = asyncio.Event()
    done = asyncio.Event()
    timings: list[float] = []

    class Echo(pb_grpc.RefereeServiceServicer):
        async def Play(self, request_iterator: object, context: grpc.aio.ServicerContext
                       ) -> None:
            await context.read()  # the client's first message
            contexts.append(context)
            if len(contexts) == clients:
                everyone.set()
            await done.wait()

    async def drive() -> None:
        await everyone.wait()
        started, cpu = time.perf_counter(), time.thread_time()
        for index, message in enumerate(requests):
            context = contexts[index % clients]
            await context.write(message)
            await context.read()
        timings.append((time.perf_counter() - started) / len(requests))
        timings.append((time.thread_time() - cpu) / len(requests))
        for context in contexts:
            await context.write(pb.PlayResponse(match_end=pb.MatchEnd()))
        done.set()

    server = grpc.aio.server()
    pb_grpc.add_RefereeServiceServicer_to_server(Echo(), server)  # type: ignore[no-untyped-call]
    server.add_insecure_port(address)
    await server.start()
    try:
        # Started by subprocess (vfork), not the loop's own spawning: uvloop's forks, and
        # gRPC then logs that it skips its fork handlers.
        runs = [subprocess.Popen([sys.executable, "-c", client, address])
                for _ in range(clients)]
        await drive()
        for run in runs:
            await asyncio.to_thread(run.wait)
        await server.stop(grace=None)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return timings[0], timings[1]


class _PlayCPU:
    """The CPU seconds of the referee's event-loop thread from the match's start to its
    end (start-up and hand-shakes excluded), read by wrapping the match loop."""

    def __init__(self) -> None:
        self.started: float | None = None
        self.seconds = 0.0

    def __enter__(self) -> _PlayCPU:
        self.saved = MatchLoop._start, MatchLoop._finish
        start, finish = self.saved
        marks = self

        async def started(loop: MatchLoop) -> None:  # (the loop's own methods, wrapped)
            await start(loop)
            marks.started = time.thread_time()

        async def finished(loop: MatchLoop, places: tuple[int, ...]) -> None:
            if marks.started is not None:
                marks.seconds = time.thread_time() - marks.started
            await finish(loop, places)

        MatchLoop._start = started  # type: ignore[method-assign,assignment]
        MatchLoop._finish = finished  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *_: object) -> None:
        MatchLoop._start, MatchLoop._finish = self.saved  # type: ignore[method-assign]


def referee_match(seed: int, logs: Path
                  ) -> tuple[float, float, int, list[pb.PlayResponse], float]:
    """(seconds per decision, seconds per match, decisions, the requests sent, CPU seconds
    of the referee's event-loop thread per decision in play)."""
    log = logs / f"match-{seed}.jsonl.gz"
    with _PlayCPU() as cpu:
        outcome = _play(seed, logs, log)
    # Rebuild the decision requests the referee sent, for the ping-pong's message sizes.
    match = Match(2, random.Random(deck_seed(seed)))
    requests: list[pb.PlayResponse] = []
    cursor = [0, 0]
    for record in read_log(log):
        if record["type"] == "decision":
            seat = match.current_seat
            events = event_messages(match.events[cursor[seat]:], seat)
            cursor[seat] = len(match.events)
            requests.append(pb.PlayResponse(events=events, decision_request=decision_request(
                len(requests), match.observation(seat), match.legal_actions(), 1000, 10000)))
            match.apply(record["action"])
    return (outcome.play_seconds / outcome.decisions, outcome.seconds, outcome.decisions,
            requests, cpu.seconds / outcome.decisions)


def attacked_cpu(seed: int, logs: Path, mode: str) -> tuple[float, float, float]:
    """The referee process's CPU seconds per decision (every thread: gRPC's too) in a
    match between ``tests/referee/bots/h2client.py MODE`` and the greedy sample bot: a bot
    that plays plainly (``legal``), or one that drips every other answer a byte a write
    (``drip``); and the greedy bot's median decision after the other's odd-numbered
    (dripped) turns and after its even ones, side by side in the same match."""
    client = BotManifest(folder=ROOT / "tests" / "referee" / "bots", name=mode, version="0",
                         language="python", run=(sys.executable, "h2client.py", mode))
    seats = [PlainLauncher(client, logs, f"{mode}-{seed}"),
             PlainLauncher(load_manifest(ROOT / "sample_bots" / "python" / "greedy"), logs,
                           f"greedy-{seed}")]
    log = logs / f"attack-{mode}-{seed}.jsonl.gz"
    spec = MatchSpec(f"attack-{seed}", seed, 2, limits=Limits(5.0, 60.0), log_path=log)
    cpu = time.process_time()
    outcome = eventloop.run(run_match(spec, list(seats)))
    cpu = (time.process_time() - cpu) / outcome.decisions
    if [f.kind.name for f in outcome.seats[0].faults]:
        raise SystemExit(f"the {mode} bot was faulted: {outcome.seats[0].faults}")
    after: dict[bool, list[float]] = {True: [], False: []}
    attacked = None  # whether the client's last answered turn was an odd (dripped) one
    for record in read_log(log):
        if record["type"] != "timing":
            continue
        if record["seat"] == 0:
            attacked = record["request"] % 2 == 1
        elif attacked is not None:
            after[attacked].append(record["latency_ms"] / 1000)
    return cpu, statistics.median(after[True]), statistics.median(after[False])


def unlogged_match(seed: int, logs: Path) -> float:
    """Seconds per decision of the same match with no log: what the log costs in the
    match's rhythm, where its encoding shares the machine with the bots."""
    outcome = _play(seed, logs, None)
    return outcome.play_seconds / outcome.decisions


def streamed_match(seed: int, logs: Path) -> float:
    """Seconds per decision of the same match with its log encoded after each request
    (``LOG_HELD_MOST`` 0: the held lines are encoded once every request is on its way)
    rather than once the match is played."""
    held_most = loop_module.LOG_HELD_MOST
    loop_module.LOG_HELD_MOST = 0
    try:
        outcome = _play(seed, logs, logs / f"streamed-{seed}.jsonl.gz")
    finally:
        loop_module.LOG_HELD_MOST = held_most
    return outcome.play_seconds / outcome.decisions


def _play(seed: int, logs: Path, log: Path | None) -> MatchOutcome:
    """The benchmark's match: the sample bots as real processes, its log at ``log``."""
    manifests = [load_manifest(ROOT / "sample_bots" / "python" / name) for name in BOTS]
    seats = [PlainLauncher(m, logs, f"seat{s}") for s, m in enumerate(manifests)]
    spec = MatchSpec(f"bench-{seed}", seed, 2, limits=Limits(5.0, 60.0), log_path=log)
    return eventloop.run(run_match(spec, list(seats)))


class _InstantStream:
    """A bot's stream that answers at once: the bot's work (parse, convert, decide) is done
    inside ``write`` and taken off the clock, so what is left is the referee's own."""

    def __init__(self, policy: Any) -> None:
        self.policy, self.bot_seconds = policy, 0.0
        self.connection: Connection | None = None

    async def write(self, message: bytes | pb.PlayResponse) -> None:
        started = time.perf_counter()
        data = message if type(message) is bytes else message.SerializeToString()  # type: ignore[union-attr]
        response = pb.PlayResponse.FromString(data)
        if response.WhichOneof("message") == "decision_request":
            request = response.decision_request
            legal = [action_from_message(a) for a in request.legal_actions]
            action = self.policy.decide(observation_from_request(request), legal)
            answer = pb.PlayRequest(decision=pb.Decision(request_id=request.request_id,
                                                         action_index=legal.index(action)))
            assert self.connection is not None
            self.connection.inbox.put_nowait((time.perf_counter(), answer, answer.ByteSize()))
        self.bot_seconds += time.perf_counter() - started


def referee_loop(seed: int, log: Path) -> float:
    """Seconds per decision of the referee's own work: its real match loop (engine, wire
    bytes, the log, bookkeeping) over streams that answer at once, no gRPC."""
    spec = MatchSpec(f"loop-{seed}", seed, 2, limits=Limits(5.0, 60.0), log_path=log)

    async def play() -> float:
        seating = Seating(2, spec.options, spec.limits.hello_timeout)
        streams = []
        for seat, name in enumerate(BOTS):
            stream = _InstantStream(POLICIES[name](seed + seat))
            streams.append(stream)
            stream.connection = Connection(stream, pb.Hello(bot_name=name), seat)
            seating.attach(seat, stream.connection)
        writer = MatchLogWriter(log)
        loop = MatchLoop(spec, seating, writer)
        started = time.perf_counter()
        outcome = await loop.run(started)
        elapsed = time.perf_counter() - started - sum(s.bot_seconds for s in streams)
        writer.close()
        return elapsed / outcome.decisions

    return eventloop.run(play())


def wire_side(seed: int, decisions: int) -> float:
    """Seconds per decision the referee spends on a request's bytes and its events', in a
    hot loop over the match's states (both policies as in the match)."""
    match = Match(2, random.Random(deck_seed(seed)))
    policies = [POLICIES[name](seed + seat) for seat, name in enumerate(BOTS)]
    states: list[tuple[Any, list[int], list[ev.Event]]] = []
    cursor = [0, 0]
    while not match.is_over and len(states) < decisions:
        seat = match.current_seat
        observation, legal = match.observation(seat), match.legal_actions()
        states.append((observation, legal, match.events[cursor[seat]:]))  # since its last turn
        cursor[seat] = len(match.events)
        match.apply(policies[seat].decide(observation, legal))
    event_entry.cache_clear()
    started = time.perf_counter()
    for observation, legal, events in states:
        b"".join([event_entry(ev.seen_by(e, observation.seat)) for e in events])
        decision_request_bytes(1, observation, legal, 1000, 10000)
    return (time.perf_counter() - started) / len(states)


def in_process(seed: int) -> tuple[float, int]:
    """Seconds per decision for engine + policies alone."""
    started = time.perf_counter()
    result = play_match([POLICIES[name] for name in BOTS], seed, build=True)
    return (time.perf_counter() - started) / result.decisions, result.decisions


def bot_side(requests: list[pb.PlayResponse]) -> float:
    """Seconds per decision a bot spends converting a request and deciding (SDK + policy)."""
    from arena.bots.policies import StrategistPolicy
    from arena.protocol.convert import action_from_message, observation_from_request

    policy = StrategistPolicy(0)
    started = time.perf_counter()
    for response in requests:
        wire = response.SerializeToString()
        request = pb.PlayResponse.FromString(wire).decision_request
        legal = [action_from_message(a) for a in request.legal_actions]
        action = policy.decide(observation_from_request(request), legal)
        pb.PlayRequest(decision=pb.Decision(request_id=request.request_id,
                                            action_index=legal.index(action))
                       ).SerializeToString()
    return (time.perf_counter() - started) / len(requests)


def _log_items(records: list[dict[str, Any]], seat_view: bool) -> list[tuple[str, Any]]:
    """What the referee hands its log writer for these records; without ``seat_view``, as
    before issue 22 (no request or answer on the decision line, its latency there, no
    timing line)."""
    items: list[tuple[str, Any]] = []
    asked: dict[str, Any] | None = None
    for record in records:
        if record["type"] == "event":
            items.append(("event", ev.from_record({k: v for k, v in record.items()
                                                   if k != "type"})))
        elif record["type"] == "decision" and "asked" in record:
            if seat_view:
                asked = record  # written with its timing line, which comes next
            else:
                plain = {k: v for k, v in record.items() if k not in ("asked", "answer")}
                items.append(("line", {**plain, "latency_ms": 0.412}))
        elif record["type"] == "timing":
            if seat_view and asked is not None:
                items.append(("decision", (
                    asked["seat"], asked["request"], asked["action"], asked["source"],
                    base64.b64decode(asked["asked"]), decode_answer(asked),
                    record["latency_ms"] / 1000, record["bank_ms"] / 1000)))
                asked = None
        else:
            items.append(("line", record))
    return items


def _write_log(items: list[tuple[str, Any]], path: Path) -> float:
    """Seconds to encode, compress and write ``items`` (not counting the file's closing)."""
    writer = MatchLogWriter(path)
    started = time.perf_counter()
    for kind, item in items:
        if kind == "event":
            writer.event(item)
        elif kind == "decision":
            writer.decision(*item)
        else:
            writer.write(dict(item))
        if kind == "decision" or (kind == "line" and item["type"] == "decision"):
            writer.flush()  # once per decision, as the referee flushes once per request
    writer.flush()
    elapsed = time.perf_counter() - started
    writer.close()
    return elapsed


def log_side(log: Path, scratch: Path) -> tuple[float, float]:
    """Seconds per decision the referee spends writing the match's log, in a hot loop:
    as it is (the seat's view included) and as it was before issue 22; the fastest of a
    few runs of each, alternated (the least disturbed by the machine)."""
    records = list(read_log(log))
    decisions = sum(1 for r in records if r["type"] == "decision")
    variants = [_log_items(records, True), _log_items(records, False)]
    best = [float("inf"), float("inf")]
    for _ in range(LOG_REPEATS):
        for index, items in enumerate(variants):
            best[index] = min(best[index], _write_log(items, scratch / "log-side.jsonl.gz"))
    return best[0] / decisions, best[1] / decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=3)
    args = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="arena-bench-logs-"))
    try:
        measure(args.matches, logs)
    finally:
        shutil.rmtree(logs, ignore_errors=True)


def measure(matches: int, logs: Path) -> None:
    rows: list[dict[str, float]] = []
    for index in range(matches):
        seed = 100 + index
        per_decision, per_match, decisions, requests, referee_cpu = referee_match(seed, logs)
        working, working_cpu = eventloop.run(ping_pong_cpu(requests, clients=2,
                                                         client=WORKING_CLIENT))
        writing, unseen = log_side(logs / f"match-{seed}.jsonl.gz", logs)
        row = {
            "referee": per_decision, "match": per_match, "working": working,
            "transport": eventloop.run(ping_pong(requests)),
            "alternating": eventloop.run(ping_pong(requests, clients=2)),
            "engine": in_process(seed)[0], "bot": bot_side(requests),
            "writing": writing, "unseen": unseen,
            "own": referee_loop(seed, logs / f"loop-{seed}.jsonl.gz"),
            "wire": wire_side(seed, decisions), "referee_cpu": referee_cpu,
            "working_cpu": working_cpu, "unlogged": unlogged_match(seed, logs),
            "streamed": streamed_match(seed, logs),
        }
        row["plain_cpu"] = attacked_cpu(seed, logs, "legal")[0]
        row["drip_cpu"], row["after_drip"], row["after_plain"] = attacked_cpu(seed, logs, "drip")
        rows.append(row)
        print(f"match {index + 1}: {decisions} decisions, referee {per_decision * 1e6:.0f} us"
              f"/decision, two clients doing the bots' work {working * 1e6:.0f} us, ratio "
              f"{per_decision / working:.2f}; {per_match:.2f} s per match", flush=True)
    report(rows)


def report(rows: list[dict[str, float]]) -> None:
    def median(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    def ratio(top: str, bottom: str) -> float:
        """Per match, then the median: each match's figures are measured minutes apart
        at most, the least disturbed by a busy machine."""
        return statistics.median(r[top] / r[bottom] for r in rows)

    us = 1e6
    referee, working, alternating = median("referee"), median("working"), median("alternating")
    print()
    print(f"per decision, median of {len(rows)} matches (2 Python sample bots, Unix socket):")
    print(f"  full match over the referee          {referee * us:6.0f} us")
    print(f"  bare gRPC stream ping-pong           {median('transport') * us:6.0f} us   "
          "(same message sizes)")
    print(f"  ping-pong alternating 2 clients      {alternating * us:6.0f} us   (a 2-player "
          "match's pattern)")
    print(f"  the same, the clients doing the bot's work {working * us:6.0f} us   (transport "
          "+ SDK + policy, no referee)")
    alone = ratio("referee", "working")
    print(f"  RATIO TO IT (what the referee alone adds): {alone:.2f}   target <= 1.6: "
          f"{'met' if alone <= 1.6 else 'NOT met'}")
    print(f"  seconds per 2-player match to 500 (start-up included): {median('match'):.2f}")
    print("  split of a decision:")
    print(f"    transport (alternating ping-pong)       {alternating * us:6.0f} us")
    print(f"    bot (SDK conversion + policy)           {(working - alternating) * us:6.0f} us"
          f"   ({median('bot') * us:.0f} us in a hot loop)")
    print(f"    referee                                 {(referee - working) * us:6.0f} us"
          f"   (engine + policies alone in-process: {median('engine') * us:.0f} us)")
    own, writing = median("own"), median("writing")
    print(f"      its own work, streams answering at once {own * us:6.0f} us   (engine, wire "
          "bytes, log, bookkeeping)")
    print(f"        of which the wire bytes (request, events) {median('wire') * us:6.0f} us")
    print(f"        of which the match log                    {writing * us:6.0f} us   "
          "(encoded once the match is played)")
    rest = referee - working - own + writing
    print(f"      on the answer's path: asyncio, gRPC, the relay {rest * us:6.0f} us")
    print(f"  CPU of the event loop's thread in play: the referee {median('referee_cpu') * us:.0f}"
          f" us, the ping-pong's server {median('working_cpu') * us:.0f} us")
    print(f"  the same matches with no log            {median('unlogged') * us:6.0f} us   "
          f"(ratio {ratio('unlogged', 'working'):.2f})")
    print(f"  the log encoded after each request      {median('streamed') * us:6.0f} us   "
          f"(ratio {ratio('streamed', 'working'):.2f})")
    print(f"  the match log in a hot loop             {writing * us:6.0f} us   (without the "
          f"seat's view: {median('unseen') * us:.0f} us)")
    drip = ratio("drip_cpu", "plain_cpu")
    print(f"  the referee process's CPU a decision (every thread), greedy against a plain "
          f"raw HTTP/2 bot {median('plain_cpu') * us:.0f} us, against one that drips every "
          f"other answer a byte a write {median('drip_cpu') * us:.0f} us: {drip:.2f}x   "
          f"target <= 2: {'met' if drip <= 2 else 'NOT met'}")
    slower = ratio("after_drip", "after_plain")
    print(f"  the greedy bot's median decision in those matches after a dripped turn "
          f"{median('after_drip') * us:.0f} us, after a plain one "
          f"{median('after_plain') * us:.0f} us: {slower:.2f}x   target <= 1.1: "
          f"{'met' if slower <= 1.1 else 'NOT met'}")


if __name__ == "__main__":
    main()
