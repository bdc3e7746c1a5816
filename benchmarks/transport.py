"""What arena/grpc_env.py buys: a gRPC stream ping-pong with grpcio's default I/O path and
with the one UNO Arena sets, measured side by side in one run.

Each run is a fresh process (gRPC reads the setting once, when it is imported) holding a
grpc.aio server on a Unix socket, with one client process playing the SDK's grpc.aio loop;
the messages are a real match's decision requests. The two settings alternate for
``--rounds`` runs; the script prints wall time and CPU (server and client) per round trip,
and the medians' ratios.

Run: ``python -m benchmarks.transport [--rounds 3] [--round-trips 3000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from arena.grpc_env import GRPC_ENVIRONMENT
from arena.referee import eventloop

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"grpcio default": "", "arena/grpc_env.py": None}
"""GRPC_EXPERIMENTS for each side; None: the value arena/grpc_env.py sets."""


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def child(round_trips: int) -> None:
    """One ping-pong; prints a JSON line of per-round-trip figures."""

    from arena.bots.policies import RandomPolicy
    from arena.protocol import pb
    from arena.protocol.convert import decision_request, event_messages
    from arena.rules import Match
    from benchmarks.referee import ping_pong

    requests: list[pb.PlayResponse] = []
    seed = 0
    while len(requests) < round_trips:
        match, cursor, policy = Match(2, random.Random(seed)), [0, 0], RandomPolicy(seed)
        while not match.is_over and len(requests) < round_trips:
            seat = match.current_seat
            observation, legal = match.observation(seat), match.legal_actions()
            requests.append(pb.PlayResponse(
                events=event_messages(match.events[cursor[seat]:], seat),
                decision_request=decision_request(len(requests), observation, legal, 1000,
                                                  10000)))
            cursor[seat] = len(match.events)
            match.apply(policy.decide(observation, legal))
        seed += 1
    server_cpu = cpu_seconds(resource.RUSAGE_SELF)
    wall = eventloop.run(ping_pong(requests))
    server_cpu = cpu_seconds(resource.RUSAGE_SELF) - server_cpu
    print(json.dumps({"wall": wall, "server_cpu": server_cpu / round_trips,
                      # The client's whole life, start-up included, spread over the trips.
                      "client_cpu": cpu_seconds(resource.RUSAGE_CHILDREN) / round_trips}))


def run(setting: str | None, round_trips: int) -> dict[str, float]:
    env = dict(os.environ)
    env.pop("GRPC_EXPERIMENTS", None)
    if setting is not None:
        env["GRPC_EXPERIMENTS"] = setting
    done = subprocess.run([sys.executable, "-m", "benchmarks.transport", "--child",
                           "--round-trips", str(round_trips)], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--round-trips", type=int, default=3000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.round_trips)
        return
    results: dict[str, list[dict[str, float]]] = {name: [] for name in SETTINGS}
    print(f"GRPC_EXPERIMENTS: grpcio default '', arena/grpc_env.py "
          f"{GRPC_ENVIRONMENT['GRPC_EXPERIMENTS']!r}")
    for round_ in range(args.rounds):
        for name, setting in SETTINGS.items():
            result = run(setting, args.round_trips)
            results[name].append(result)
            print(f"round {round_ + 1}, {name:18} {result['wall'] * 1e6:4.0f} us per round "
                  f"trip, CPU per round trip: "
                  f"server {result['server_cpu'] * 1e6:4.0f} us, "
                  f"client {result['client_cpu'] * 1e6:4.0f} us")
    medians = {name: {key: statistics.median(r[key] for r in rows)
                      for key in ("wall", "server_cpu", "client_cpu")}
               for name, rows in results.items()}
    default, tuned = medians["grpcio default"], medians["arena/grpc_env.py"]
    print(f"\nmedians of {args.rounds} runs of {args.round_trips} round trips (Unix socket, "
          "grpc.aio on both sides):")
    for name, row in medians.items():
        print(f"  {name:18} {row['wall'] * 1e6:5.0f} us per round trip, CPU: server "
              f"{row['server_cpu'] * 1e6:4.0f} us, client {row['client_cpu'] * 1e6:4.0f} us")
    cpu = {name: row["server_cpu"] + row["client_cpu"] for name, row in medians.items()}
    print(f"  round trip {default['wall'] / tuned['wall']:.2f}x faster; CPU per round trip "
          f"{cpu['grpcio default'] / cpu['arena/grpc_env.py']:.2f}x lower (server + client)")


if __name__ == "__main__":
    main()
