"""``arena check``: the conformance check a bot author runs first."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from rich.console import Console

from arena.cli.common import (
    add_sandbox_options,
    build_bots,
    load_bots,
    private_folder,
    sandbox_limits,
)
from arena.referee import check
from arena.referee.match import Seat, run_match
from arena.sandbox import SandboxError, make_launcher


def _check(args: argparse.Namespace) -> int:
    """Conformance check for one bot: connects, plays every decision kind legally and in
    time, and finishes full matches."""
    bots = load_bots([args.bot], "check")
    if bots is None:
        return 2
    bot = bots[0]
    console = Console()
    console.print(f"checking {bot.label} ({bot.folder})")
    logs = private_folder(args.logs)
    bot_limits = sandbox_limits(args, "check")
    if bot_limits is None:
        return 2
    built = build_bots([bot], args, bot_limits, logs, "check")
    if built is None:
        return 2
    bot = built[0]
    try:
        make_launcher(args.sandbox, bot, bot_limits, logs, "check", trusted=args.trust_bots)
    except SandboxError as error:
        print(f"arena check: {error}", file=sys.stderr)
        return 2

    def launcher(index: int) -> Seat:
        return make_launcher(args.sandbox, bot, bot_limits, logs,
                             f"check-{index + 1}-{bot.name}", trusted=args.trust_bots)

    outcomes = []
    for spec, seats, bot_seat in check.plan(launcher, args.matches):
        outcomes.append((asyncio.run(run_match(spec, seats)), bot_seat))
    items = check.verdict(outcomes, logs)
    for item in items:
        mark = "[green]PASS[/green]" if item.passed else "[red]FAIL[/red]"
        console.print(f"{mark} {item.name}: {item.detail}")
    passed = all(item.passed for item in items)
    console.print("[bold green]all checks passed[/bold green]" if passed else
                  f"[bold red]{sum(not i.passed for i in items)} check(s) failed[/bold red]")
    return 0 if passed else 1


def register(commands: Any) -> None:
    check_parser = commands.add_parser("check", help="conformance check for a bot folder",
                                       description=_check.__doc__)
    check_parser.add_argument("bot", metavar="BOT_DIR")
    check_parser.add_argument("--matches", type=int, default=2)
    check_parser.add_argument("--logs", default="runs/check", help="folder for the bot's output")
    add_sandbox_options(check_parser)
    check_parser.set_defaults(run=_check)
