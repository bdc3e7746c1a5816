"""``arena simulate`` and ``arena play``: matches between policies or bot folders."""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from dataclasses import dataclass
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
from arena.rules.options import RuleOptions
from arena.rules.seeds import KEY_BYTES, MatchSeed
from arena.sandbox import BotManifest, SandboxError, SandboxLimits, make_launcher, sandbox_record

if TYPE_CHECKING:  # the referee (gRPC) is imported by the command itself
    from rich.console import Console

    from arena.referee.match import Seat

MATCHES = 10
"""``arena play``'s matches when --matches is not given (with --human: one)."""


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


@dataclass(frozen=True)
class _Setup:
    """What every match of an ``arena play`` shares: its bots (built), rules, limits, the
    logs' folder and the secret key the deals come from (None: public seeds)."""

    bots: list[BotManifest]
    options: RuleOptions
    bot_limits: SandboxLimits
    logs: Path
    key: bytes | None
    console: Console


def _set_up(args: argparse.Namespace, seats: range) -> _Setup | None:
    """The bots loaded, checked and built, the logs' folder and the key; None after a
    one-line error (``seats``: how many bot folders the command takes)."""
    from rich.console import Console

    bots = load_bots(args.bots, "play")
    if bots is None:
        return None
    if len(bots) not in seats:
        print(f"arena play: give {seats.start} to {seats.stop - 1} bot folders, one per seat",
              file=sys.stderr)
        return None
    options = rule_options(args, "play")
    if options is None or refuse_unsupported(bots, options, "play"):
        return None
    bot_limits = sandbox_limits(args, "play")
    if bot_limits is None:
        return None
    logs = private_folder(args.logs)
    built = build_bots(bots, args, bot_limits, logs, "play")
    if built is None:
        return None
    console = Console(soft_wrap=True)  # a path is never cut across lines
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
    return _Setup(built, options, bot_limits, logs, key, console)


def _chance(setup: _Setup, args: argparse.Namespace, match_id: str, index: int) -> MatchSeed:
    return (MatchSeed.keyed(setup.key, f"play/{match_id}") if setup.key is not None
            else MatchSeed.public(args.seed + index))


def _launcher(setup: _Setup, args: argparse.Namespace, bot: BotManifest, match_id: str,
              seat: int) -> Seat:
    return make_launcher(args.sandbox, bot, setup.bot_limits, setup.logs / match_id,
                         f"seat{seat}-{bot.name}", trusted=args.trust_bots)


def _render_pages(played: list[Path], setup: _Setup) -> Path | None:
    """The match pages of ``played``, as a season's site has them (each seat's view,
    faults, time use), in the logs' ``html/``; None after saying why they were not."""
    from arena.report.matchpage import LogError, render_logs

    html = setup.logs / "html"
    try:
        render_logs(played, html, title="arena play")
    except (LogError, OSError) as error:
        print(f"arena play: the match pages were not written: {error}", file=sys.stderr)
        return None
    setup.console.print(f"match pages: {html / 'index.html'} (or `arena view LOG` for one "
                        "log)", soft_wrap=True)
    return html


def _play(args: argparse.Namespace) -> int:
    """Play matches between bot processes over the referee and print a summary; with
    --human, one match in which you hold a seat, in your browser."""
    if args.human:
        return _play_human(args)
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

    setup = _set_up(args, range(2, 11))
    if setup is None:
        return 2
    bots, options, logs, key, console = (setup.bots, setup.options, setup.logs, setup.key,
                                         setup.console)
    matches = args.matches or MATCHES
    n = len(bots)
    stats = [{"wins": 0.0, "points": 0, "faults": 0, "dq": 0} for _ in bots]
    decisions = 0
    played: list[Path] = []
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as progress:
        task = progress.add_task("matches", total=matches)
        for index in range(matches):
            shift = index % n  # rotate seats so no bot keeps one position
            order = [(seat + shift) % n for seat in range(n)]
            match_id = f"match-{index + 1:04d}"
            try:
                seats: list[Seat] = [
                    None if args.listen else _launcher(setup, args, bots[b], match_id, seat)
                    for seat, b in enumerate(order)]
            except SandboxError as error:
                print(f"arena play: {error}", file=sys.stderr)
                return 2
            entered = () if args.listen else tuple((bots[b].name, bots[b].version)
                                                   for b in order)
            spec = MatchSpec(match_id, _chance(setup, args, match_id, index), n, options,
                             clock_limits(args), logs / f"{match_id}.jsonl.gz",
                             sandbox=sandbox_record(seats), entered=entered)
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
                f"{index + 1}/{matches} matches, {decisions / elapsed:,.0f} decisions/s"))
    elapsed = time.perf_counter() - started
    console.print(f"rules: {describe_rules(options)}", soft_wrap=True)
    dealt = f"seeds {args.seed}.." if key is None else "a secret key"
    table = Table(title=f"{matches} matches ({dealt})")
    for column in ("bot", "wins", "win rate", "avg points", "faults", "disqualified"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for bot, row in zip(bots, stats, strict=True):
        table.add_row(bot.label, f"{row['wins']:g}", f"{row['wins'] / matches:.1%}",
                      f"{row['points'] / matches:.0f}", str(row["faults"]),
                      str(row["dq"]))
    console.print(table)
    console.print(f"{decisions:,} decisions in {elapsed:.1f} s "
                  f"({decisions / elapsed:,.0f} decisions/s); logs in {logs}/")
    return 0 if _render_pages(played, setup) is not None else 1


def _play_human(args: argparse.Namespace) -> int:
    """One match with a person in seat ``--seat`` (an untimed seat, played from a page on
    127.0.0.1) and the bots in the others; its log and pages as any match's."""
    from arena.human.client import NAME, VERSION
    from arena.human.host import host_match
    from arena.referee import eventloop
    from arena.referee.match import MatchSpec

    if args.listen:
        print("arena play: --human serves your seat itself; leave out --listen",
              file=sys.stderr)
        return 2
    if args.matches not in (None, 1):
        print("arena play: --human plays one match; leave out --matches", file=sys.stderr)
        return 2
    players = len(args.bots) + 1
    if not 0 <= args.seat < players:
        print(f"arena play: --seat {args.seat}: a table of {players} has seats 0 to "
              f"{players - 1}", file=sys.stderr)
        return 2
    setup = _set_up(args, range(1, 10))
    if setup is None:
        return 2
    match_id = "match-0001"
    bots = iter(setup.bots)
    order = [None if seat == args.seat else next(bots) for seat in range(players)]
    try:
        seats: list[Seat] = [None if bot is None else _launcher(setup, args, bot, match_id, seat)
                             for seat, bot in enumerate(order)]
    except SandboxError as error:
        print(f"arena play: {error}", file=sys.stderr)
        return 2
    log = setup.logs / f"{match_id}.jsonl.gz"
    spec = MatchSpec(match_id, _chance(setup, args, match_id, 0), players, setup.options,
                     clock_limits(args), log, sandbox=sandbox_record(seats),
                     entered=tuple((NAME, VERSION) if bot is None else (bot.name, bot.version)
                                   for bot in order),
                     untimed=frozenset({args.seat}))
    console = setup.console
    console.print(f"rules: {describe_rules(setup.options)}", soft_wrap=True)

    def render() -> Path | None:
        html = _render_pages([log], setup)
        return None if html is None else html / "replays" / f"{match_id}.html"

    outcome = eventloop.run(host_match(spec, seats, args.seat, setup.logs / "html", render,
                                       open_browser=not args.no_browser,
                                       say=lambda text: print(text, flush=True)))
    names = [NAME if bot is None else bot.label for bot in order]
    for seat in sorted(range(players), key=lambda s: (outcome.places[s], s)):
        console.print(f"place {outcome.places[seat]}: seat {seat} {names[seat]}, "
                      f"{outcome.scores[seat]} points", soft_wrap=True, markup=False)
    console.print(f"the match log: {log}", soft_wrap=True, markup=False)
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

    play = commands.add_parser(
        "play", help="play matches between bot folders, or against them yourself (--human)",
        description=_play.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  arena play my-bot/ sample_bots/python/greedy --matches 20\n"
               "  arena play --human my-bot/            # you in seat 0, in your browser\n"
               "  arena play --human my-bot/ sample_bots/python/greedy --seat 1 --target 200")
    play.add_argument("bots", nargs="+", metavar="BOT_DIR")
    play.add_argument("--matches", type=count,
                      help=f"how many matches (default {MATCHES}; --human plays one)")
    play.add_argument("--human", action="store_true",
                      help="you hold a seat: one match against the bots, played on a page "
                           "at http://127.0.0.1 (a random port; the address printed opens it "
                           "once, in one browser); your seat has no deadline, the bots keep "
                           "theirs; the log and the replay are written as for any match")
    play.add_argument("--seat", type=int, default=0, metavar="K",
                      help="with --human, your seat (default 0, the first)")
    play.add_argument("--no-browser", action="store_true",
                      help="with --human, print the page's address without opening it")
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
