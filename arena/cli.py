"""The ``arena`` command."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from arena.bots.policies import POLICIES
from arena.bots.runner import play_match
from arena.rules.options import RuleOptions


def _simulate(args: argparse.Namespace) -> int:
    """Play in-process policies against each other (no processes, no sandbox)."""
    names: list[str] = args.policies
    unknown = [n for n in names if n not in POLICIES]
    if unknown:
        print(f"arena simulate: unknown policy {unknown[0]!r}; known: {', '.join(POLICIES)}",
              file=sys.stderr)
        return 2
    if not 2 <= len(names) <= 10:
        print("arena simulate: name 2 to 10 policies, one per seat", file=sys.stderr)
        return 2
    options = RuleOptions(target_score=args.target)
    console = Console()
    wins = [0.0] * len(names)
    totals = [0] * len(names)
    decisions = 0
    started = time.perf_counter()
    for index in range(args.matches):
        seed = args.seed + index
        # Rotate seats so no policy keeps the same seat position.
        shift = index % len(names)
        order = names[shift:] + names[:shift]
        result = play_match([POLICIES[n] for n in order], seed, options, build=True)
        decisions += result.decisions
        for seat, place in enumerate(result.places):
            original = (seat + shift) % len(names)
            totals[original] += result.scores[seat]
            if place == 1:
                wins[original] += 1 / len(result.winners)
    elapsed = time.perf_counter() - started
    table = Table(title=f"{args.matches} matches to {args.target}, seeds {args.seed}..")
    table.add_column("seat")
    table.add_column("policy")
    table.add_column("wins", justify="right")
    table.add_column("win rate", justify="right")
    table.add_column("avg points", justify="right")
    for seat, name in enumerate(names):
        table.add_row(str(seat), name, f"{wins[seat]:g}", f"{wins[seat] / args.matches:.1%}",
                      f"{totals[seat] / args.matches:.0f}")
    console.print(table)
    console.print(f"{decisions:,} decisions in {elapsed:.2f} s "
                  f"({decisions / elapsed:,.0f} decisions/s)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena", description="UNO Arena: bot matches under the official UNO rules.")
    commands = parser.add_subparsers(dest="command", required=True)
    simulate = commands.add_parser(
        "simulate", help="play built-in policies against each other in-process",
        description=_simulate.__doc__)
    simulate.add_argument("policies", nargs="+", metavar="POLICY",
                          help=f"one per seat: {', '.join(POLICIES)}")
    simulate.add_argument("--matches", type=int, default=20)
    simulate.add_argument("--seed", type=int, default=1)
    simulate.add_argument("--target", type=int, default=500, help="target score (§16)")
    simulate.set_defaults(run=_simulate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
