"""What the sandbox costs.

In one run, measured side by side (trials interleaved, so load on the machine hits every
backend alike):

1. start-to-hello: from the launcher call to the referee reading the bot's hello, for the
   Python sample bot ``random``, plain vs. bubblewrap (and the fallback): median of N
   trials, ratio target **<= 1.2**;
2. a full 2-player match to 500 between the Python sample bots (strategist, greedy), both
   bots sandboxed vs. both plain: seconds per match (start-up included) and per decision;
   bubblewrap three times, its bots throttled off turn (the default), frozen, and left
   running: what throttling and freezing add per decision (target: at most 5%);
3. a spinner (a busy loop beside its bot) against a thinker (20 ms of CPU per decision),
   both on one core, under bubblewrap with the spinner throttled, frozen and running off
   turn: the thinker's median decision latency.

Run: ``python -m benchmarks.sandbox [--trials N] [--matches M]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import grpc

from arena.protocol import pb_grpc
from arena.referee import eventloop
from arena.referee.launch import BotProcess
from arena.referee.limits import Limits
from arena.referee.log import read_log
from arena.referee.match import MatchSpec, run_match
from arena.rules.options import RuleOptions
from arena.sandbox import (
    OFF_TURN,
    BotManifest,
    SandboxLimits,
    load_manifest,
    make_launcher,
    sandbox_record,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots" / "python"
BACKENDS = ("plain", "bubblewrap", "fallback")
VARIANTS = {"plain": ("plain", "run"), "bubblewrap": ("bubblewrap", "throttle"),
            "bwrap, frozen": ("bubblewrap", "freeze"), "bwrap, running": ("bubblewrap", "run"),
            "fallback": ("fallback", "throttle")}
"""Full-match rows: label -> (backend, what a bot does off turn)."""
THINK_SECONDS = 0.02
CONTENDER = textwrap.dedent('''
    import os, sys, time, grpc
    from arena.protocol import pb, pb_grpc
    os.sched_setaffinity(0, {int(sys.argv[2])})
    if sys.argv[1] == "spinner" and os.fork() == 0:
        while True:
            pass
    def requests(queue):
        yield pb.PlayRequest(hello=pb.Hello(token=os.environ["ARENA_TOKEN"],
                                            bot_name=sys.argv[1], protocol_version=1))
        while (item := queue.get()) is not None:
            yield item
    import queue as queues
    outbox = queues.SimpleQueue()
    channel = grpc.insecure_channel(os.environ["ARENA_ADDRESS"])
    for response in pb_grpc.RefereeServiceStub(channel).Play(requests(outbox)):
        kind = response.WhichOneof("message")
        if kind == "match_end":
            break
        if kind == "decision_request":
            if sys.argv[1] == "thinker":
                until = time.process_time() + float(sys.argv[3])
                while time.process_time() < until:
                    pass
            outbox.put(pb.PlayRequest(decision=pb.Decision(
                request_id=response.decision_request.request_id, action_index=0)))
    outbox.put(None)
''')
Launch = Callable[[dict[str, str], Path], BotProcess]


class _FirstMessage(pb_grpc.RefereeServiceServicer):
    """Records when a stream's first message (the hello) arrives, then ends the stream."""

    def __init__(self) -> None:
        self.arrived: asyncio.Future[float] | None = None

    async def Play(self, request_iterator: object, context: grpc.aio.ServicerContext
                   ) -> None:
        await context.read()
        if self.arrived is not None and not self.arrived.done():
            self.arrived.set_result(time.perf_counter())


async def start_to_hello(launchers: dict[str, Launch], trials: int
                         ) -> dict[str, list[float]]:
    """Seconds from launch to hello, per backend, ``trials`` times each, interleaved."""
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-hello-"))
    os.chmod(folder, 0o755)
    socket = folder / "referee.sock"
    servicer = _FirstMessage()
    server = grpc.aio.server()
    pb_grpc.add_RefereeServiceServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    server.add_insecure_port(f"unix:{socket}")
    await server.start()
    os.chmod(socket, 0o777)
    env = {"ARENA_ADDRESS": f"unix:{socket}", "ARENA_TOKEN": "0" * 32, "ARENA_SEAT": "0"}
    timings: dict[str, list[float]] = {name: [] for name in launchers}
    loop = asyncio.get_running_loop()
    try:
        for _ in range(trials):
            for name, launch in launchers.items():
                servicer.arrived = loop.create_future()
                started = time.perf_counter()
                process = launch(env, folder)
                try:
                    arrived = await asyncio.wait_for(servicer.arrived, 30)
                    timings[name].append(arrived - started)
                finally:
                    process.kill()
    finally:
        await server.stop(grace=None)
        shutil.rmtree(folder, ignore_errors=True)
    return timings


def full_match(variant: str, seed: int, logs: Path) -> tuple[float, float, int]:
    """(seconds per match, seconds per decision, decisions) for strategist vs. greedy."""
    backend, off_turn = VARIANTS[variant]
    manifests = [load_manifest(SAMPLES / name) for name in ("strategist", "greedy")]
    limits = SandboxLimits(off_turn=off_turn)
    seats = [make_launcher(backend, m, limits, logs / backend, f"seat{s}", trusted=True)
             for s, m in enumerate(manifests)]
    spec = MatchSpec(f"bench-{backend}-{seed}", seed, 2, limits=Limits(5.0, 60.0),
                     sandbox=sandbox_record(seats))
    outcome = eventloop.run(run_match(spec, list(seats)))
    return outcome.seconds, outcome.play_seconds / outcome.decisions, outcome.decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trials", type=int, default=15, help="starts per backend")
    parser.add_argument("--matches", type=int, default=3, help="full matches per backend")
    args = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="arena-bench-sandbox-"))
    try:
        measure(args.trials, args.matches, logs)
    finally:
        shutil.rmtree(logs, ignore_errors=True)


def measure(trials: int, matches: int, logs: Path) -> None:
    bot = load_manifest(SAMPLES / "random")
    launchers: dict[str, Launch] = {
        name: make_launcher(name, bot, SandboxLimits(), logs / "hello", name, trusted=True)
        for name in BACKENDS}
    for name, launch in launchers.items():  # warm the page cache and the probes
        eventloop.run(start_to_hello({name: launch}, 1))
    hello = eventloop.run(start_to_hello(launchers, trials))
    plain = statistics.median(hello["plain"])
    print(f"start-to-hello of the Python sample bot 'random', median of {trials} "
          "(interleaved):")
    for name in BACKENDS:
        median = statistics.median(hello[name])
        spread = f"{min(hello[name]) * 1e3:.0f}..{max(hello[name]) * 1e3:.0f} ms"
        line = f"  {name:<11} {median * 1e3:7.1f} ms   ({spread})"
        if name != "plain":
            ratio = median / plain
            line += f"   ratio {ratio:.2f}"
            if name == "bubblewrap":
                line += f"   target <= 1.2: {'met' if ratio <= 1.2 else 'NOT met'}"
        print(line)
    print()
    rows: dict[str, list[tuple[float, float, int]]] = {name: [] for name in VARIANTS}
    for index in range(matches):
        for name in VARIANTS:
            rows[name].append(full_match(name, 200 + index, logs / "matches"))
    print(f"full 2-player match to 500 (strategist vs. greedy, both bots under the backend), "
          f"median of {matches}:")
    base_match = statistics.median(r[0] for r in rows["plain"])
    base_decision = statistics.median(r[1] for r in rows["plain"])
    for name in VARIANTS:
        per_match = statistics.median(r[0] for r in rows[name])
        per_decision = statistics.median(r[1] for r in rows[name])
        decisions = statistics.median(r[2] for r in rows[name])
        line = (f"  {name:<15} {per_match:6.2f} s per match, {per_decision * 1e6:6.0f} us per "
                f"decision ({decisions:.0f} decisions)")
        if name != "plain":
            line += (f"   ratios {per_match / base_match:.2f} (match), "
                     f"{per_decision / base_decision:.2f} (decision)")
        print(line)
    running = statistics.median(r[1] for r in rows["bwrap, running"])
    for label, name in (("throttling", "bubblewrap"), ("freezing", "bwrap, frozen")):
        paused = statistics.median(r[1] for r in rows[name])
        print(f"  {label} bots off turn adds {(paused - running) * 1e6:+.0f} us per decision "
              f"({paused / running - 1:+.1%}) under bubblewrap (target: at most +5%)")
    print()
    contention(logs / "contention", matches)


def contention(logs: Path, matches: int) -> None:
    """Section 3 of the module documentation."""
    folder = logs / "bots"
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    (folder / "contender.py").write_text(CONTENDER)
    core = max(os.sched_getaffinity(0))
    latencies: dict[str, list[float]] = {mode: [] for mode in OFF_TURN}
    for index in range(matches):
        for mode in OFF_TURN:
            seats = [make_launcher("bubblewrap", BotManifest(
                folder=folder, name=role, version="1", language="python",
                run=("python3", "contender.py", role, str(core), str(THINK_SECONDS))),
                SandboxLimits(off_turn=mode), logs / f"{index}-{mode}", role)
                for role in ("spinner", "thinker")]
            log = logs / f"{index}-{mode}.jsonl.gz"
            spec = MatchSpec(f"contention-{index}-{mode}", 300 + index, 2,
                             RuleOptions(target_score=100), Limits(5.0, 60.0), log)
            eventloop.run(run_match(spec, list(seats)))
            latencies[mode] += [r["latency_ms"] / 1e3 for r in read_log(log)
                                if r["type"] == "timing" and r["seat"] == 1]
    running = statistics.median(latencies["run"])
    print(f"a spinner against a thinker ({THINK_SECONDS * 1e3:.0f} ms of CPU per decision), "
          f"both on core {core}, under bubblewrap, {matches} match(es) each:")
    for mode in OFF_TURN:
        median = statistics.median(latencies[mode])
        print(f"  thinker's median latency, spinner off turn: {mode:<9} {median * 1e3:6.1f} ms"
              f"   ratio {median / running:.2f}")


if __name__ == "__main__":
    main()
