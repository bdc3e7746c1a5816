"""``arena simulate`` and ``arena play``: matches between policies or bot folders."""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.bots.policies import POLICIES
from arena.bots.runner import play_match
from arena.cli.common import (
    KEY_FILE,
    add_clock_options,
    add_rule_options,
    add_sandbox_options,
    build_bots,
    clock_limits,
    count,
    load_bots,
    private_folder,
    refuse_unsupported,
    rule_options,
    sandbox_limits,
    write_key_file,
)
from arena.rules.narration import describe_rules
from arena.rules.seeds import KEY_BYTES, MatchSeed
from arena.sandbox import SandboxError, make_launcher, sandbox_record

if TYPE_CHECKING:  # the referee (gRPC) is imported by the command itself
    from arena.referee.match import Seat


def _simulate(args: argparse.Namespace) -> int:
    """Play in-process policies against each other (no processes, no sandbox)."""
    from rich.console import Console
    from rich.table import Table

    names: list[str] = args.policies
    unknown = [n for n in names if n not in POLICIES]
    if unknown:
        print(f"arena simulate: unknown policy {unknown[0]!r}; known: {', '.join(POLICIES)}",
              file=sys.stderr)
        return 2
    if not 2 <= len(names) <= 10:
        print("arena simulate: name 2 to 10 policies, one per seat", file=sys.stderr)
        return 2
    options = rule_options(args, "simulate")
    if options is None:
        return 2
    console = Console(soft_wrap=True)  # a path is never cut across lines
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
    console.print(f"rules: {describe_rules(options)}", soft_wrap=True)
    table = Table(title=f"{args.matches} matches, seeds {args.seed}..")
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


def _play(args: argparse.Namespace) -> int:
    """Play matches between bot processes over the referee and print a summary."""

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.table import Table

    from arena.referee import eventloop
    from arena.referee.match import MatchSpec, run_match
    from arena.report.matchpage import LogError, render_logs

    bots = load_bots(args.bots, "play")
    if bots is None:
        return 2
    if not 2 <= len(bots) <= 10:
        print("arena play: give 2 to 10 bot folders, one per seat", file=sys.stderr)
        return 2
    options = rule_options(args, "play")
    if options is None or refuse_unsupported(bots, options, "play"):
        return 2
    bot_limits = sandbox_limits(args, "play")
    if bot_limits is None:
        return 2
    logs = private_folder(args.logs)
    built = build_bots(bots, args, bot_limits, logs, "play")
    if built is None:
        return 2
    bots = built
    console = Console(soft_wrap=True)  # a path is never cut across lines
    n = len(bots)
    key = None
    if args.seed is None:
        # A fresh secret key: no bot can work out the deals. It is kept beside the logs for
        # `arena replay`, readable by this user only.
        key = secrets.token_bytes(KEY_BYTES)
        write_key_file(logs, key)
    else:
        (logs / KEY_FILE).unlink(missing_ok=True)  # from an earlier run: not these logs'
        console.print(f"[yellow]--seed {args.seed}: the deals are predictable (anyone who "
                      "knows the seed knows every hand); leave it out for a secret key[/yellow]")
    stats = [{"wins": 0.0, "points": 0, "faults": 0, "dq": 0} for _ in bots]
    decisions = 0
    played: list[Path] = []
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as progress:
        task = progress.add_task("matches", total=args.matches)
        for index in range(args.matches):
            shift = index % n  # rotate seats so no bot keeps one position
            order = [(seat + shift) % n for seat in range(n)]
            match_id = f"match-{index + 1:04d}"
            try:
                seats: list[Seat] = [
                    None if args.listen else
                    make_launcher(args.sandbox, bots[b], bot_limits, logs / match_id,
                                  f"seat{seat}-{bots[b].name}", trusted=args.trust_bots)
                    for seat, b in enumerate(order)]
            except SandboxError as error:
                print(f"arena play: {error}", file=sys.stderr)
                return 2
            chance = (MatchSeed.keyed(key, f"play/{match_id}") if key is not None
                      else MatchSeed.public(args.seed + index))
            entered = () if args.listen else tuple((bots[b].name, bots[b].version)
                                                   for b in order)
            spec = MatchSpec(match_id, chance, n, options, clock_limits(args),
                             logs / f"{match_id}.jsonl.gz", sandbox=sandbox_record(seats),
                             entered=entered)
            outcome = eventloop.run(run_match(spec, seats, address=args.listen))
            played.append(logs / f"{match_id}.jsonl.gz")
            decisions += outcome.decisions
            winners = outcome.places.count(1)
            for seat, b in enumerate(order):
                report = outcome.seats[seat]
                stats[b]["points"] += outcome.scores[seat]
                stats[b]["faults"] += len(report.faults)
                stats[b]["dq"] += report.disqualified
                if outcome.places[seat] == 1:
                    stats[b]["wins"] += 1 / winners
            elapsed = time.perf_counter() - started
            progress.update(task, advance=1, description=(
                f"{index + 1}/{args.matches} matches, {decisions / elapsed:,.0f} decisions/s"))
    elapsed = time.perf_counter() - started
    console.print(f"rules: {describe_rules(options)}", soft_wrap=True)
    dealt = f"seeds {args.seed}.." if key is None else "a secret key"
    table = Table(title=f"{args.matches} matches ({dealt})")
    for column in ("bot", "wins", "win rate", "avg points", "faults", "disqualified"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for bot, row in zip(bots, stats, strict=True):
        table.add_row(bot.label, f"{row['wins']:g}", f"{row['wins'] / args.matches:.1%}",
                      f"{row['points'] / args.matches:.0f}", str(row["faults"]),
                      str(row["dq"]))
    console.print(table)
    console.print(f"{decisions:,} decisions in {elapsed:.1f} s "
                  f"({decisions / elapsed:,.0f} decisions/s); logs in {logs}/")
    # The match pages, as a season's site has them (each seat's view, faults, time use).
    html = logs / "html"
    try:
        render_logs(played, html, title="arena play")
    except (LogError, OSError) as error:
        print(f"arena play: the match pages were not written: {error}", file=sys.stderr)
        return 1
    console.print(f"match pages: {html / 'index.html'} (or `arena view LOG` for one log)",
                  soft_wrap=True)
    return 0


def register(commands: Any) -> None:
    simulate = commands.add_parser(
        "simulate", help="play built-in policies against each other in-process",
        description=_simulate.__doc__)
    simulate.add_argument("policies", nargs="+", metavar="POLICY",
                          help=f"one per seat: {', '.join(POLICIES)}")
    simulate.add_argument("--matches", type=count, default=20)
    simulate.add_argument("--seed", type=int, default=1)
    add_rule_options(simulate)
    simulate.set_defaults(run=_simulate)

    play = commands.add_parser("play", help="play matches between bot folders",
                               description=_play.__doc__)
    play.add_argument("bots", nargs="+", metavar="BOT_DIR")
    play.add_argument("--matches", type=count, default=10)
    play.add_argument("--seed", type=int,
                      help="deal from public seeds SEED, SEED+1, ... (predictable; default: a "
                           "fresh secret key, kept beside the logs for `arena replay`)")
    add_rule_options(play)
    play.add_argument("--logs", default="runs/play", help="folder for match logs and bot output")
    play.add_argument("--listen", metavar="ADDRESS",
                      help="listen on ADDRESS (e.g. localhost:50051) and wait for bots started "
                           "by hand, printing each seat's token (your own bots: the address is "
                           "shared, with no per-seat socket, connection cap or byte budget)")
    add_clock_options(play)
    add_sandbox_options(play)
    play.set_defaults(run=_play)
