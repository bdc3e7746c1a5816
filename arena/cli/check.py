"""``arena check``: the conformance check a bot author runs first."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.cli.common import (
    add_sandbox_options,
    build_bots,
    load_bots,
    private_folder,
    sandbox_limits,
)
from arena.sandbox import BotManifest, SandboxError, make_launcher, sandbox_record

if TYPE_CHECKING:  # the referee (gRPC) and Rich are imported by the command itself
    from rich.console import Console

    from arena.referee import check
    from arena.referee.match import MatchOutcome, Seat


def _inside(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def default_logs(bot_folder: Path) -> Path:
    """Where ``arena check`` writes the bot's output by default: ``runs/check`` in the
    current folder, unless that is inside the bot folder (a check run from the bot's own
    folder would change the bot's content, and a build would copy its own output); then
    a folder in the user's cache."""
    here = Path.cwd() / "runs" / "check"
    if not _inside(here, bot_folder):
        return here
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    if _inside(cache, bot_folder):
        cache = Path(tempfile.gettempdir())
    return cache / "uno-arena" / "check" / bot_folder.resolve().name


def _check(args: argparse.Namespace) -> int:
    """Conformance check for one bot: connects, plays every decision kind legally and in
    time, and finishes full matches; under each variant its bot.toml declares, too."""

    from rich.console import Console
    from rich.markup import escape

    from arena.referee import check, eventloop
    from arena.referee.match import run_match

    if args.matches < 1:
        print(f"arena check: --matches must be an integer ≥ 1, not {args.matches}",
              file=sys.stderr)
        return 2
    bots = load_bots([args.bot], "check")
    if bots is None:
        return 2
    bot = bots[0]
    logs = Path(args.logs) if args.logs else default_logs(bot.folder)
    if _inside(logs, bot.folder):
        print(f"arena check: --logs {logs} is inside the bot folder {bot.folder}, whose "
              "content would then change; choose a folder outside it", file=sys.stderr)
        return 2
    logs = private_folder(str(logs))
    console = Console(soft_wrap=True)
    console.print(escape(f"checking {bot.label} ({bot.folder}); its output goes to {logs}"),
                  highlight=False)
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

    watched: list[check.WatchedSeat] = []

    def launcher(index: int) -> Seat:
        watched.append(check.WatchedSeat(make_launcher(
            args.sandbox, bot, bot_limits, logs, f"check-{index + 1}-{bot.name}",
            trusted=args.trust_bots)))
        return watched[-1]

    played = []
    for (spec, seats, bot_seat), seat in zip(check.plan(launcher, args.matches, logs),
                                             watched, strict=True):
        spec = dataclasses.replace(spec, sandbox=sandbox_record([seat]))
        played.append((eventloop.run(run_match(spec, seats)), bot_seat, seat))
    index = len(played)
    for group, options in check.variant_groups(bot.variants):
        console.print(f"variants: {', '.join(options.variants)}")
        needed = check.variant_kinds(options.variants)
        in_group: list[tuple[MatchOutcome, int, check.WatchedSeat]] = []
        for attempt in range(check.VARIANT_ATTEMPTS):
            spec, seats, bot_seat = check.variant_match(group, options, attempt, launcher,
                                                        index, logs)
            spec = dataclasses.replace(spec, sandbox=sandbox_record([watched[-1]]))
            in_group.append((eventloop.run(run_match(spec, seats)), bot_seat, watched[-1]))
            index += 1
            asked = check.asked_kinds([(outcome, seat) for outcome, seat, _ in in_group])
            if all(asked.get(kind.name) for kind in needed) or not in_group[-1][0].seats[
                    bot_seat].connected:
                break
        played += in_group
    return 0 if _print_verdict(console, bot, played, logs) else 1


def _print_verdict(console: Console, bot: BotManifest,
                   played: list[tuple[MatchOutcome, int, check.WatchedSeat]],
                   logs: Path) -> bool:
    """The verdict line by line, how a crash ended, the warnings, and where the logs are;
    whether every check passed."""
    from rich.markup import escape

    from arena.referee import check

    items = check.verdict([(outcome, seat) for outcome, seat, _ in played], logs, bot.variants)
    for item in items:
        mark = "[green]PASS[/green]" if item.passed else "[red]FAIL[/red]"
        console.print(f"{mark} {item.name}: {escape(item.detail)}", soft_wrap=True)
    for crash in check.crashes(played):
        where = f" ({crash.stderr_path})" if crash.stderr_path else ""
        console.print(f"[red]CRASH[/red] in {crash.match_id}: {escape(crash.how)}; the last "
                      f"lines of its stderr{escape(where)}:", soft_wrap=True)
        for line in crash.stderr or ("(nothing)",):
            console.print(f"  | {escape(line)}", highlight=False, soft_wrap=True)
        if crash.log_path:
            console.print(f"  the match log: {escape(str(crash.log_path))}", soft_wrap=True)
    logged = [(outcome.log_path, seat) for outcome, seat, _ in played
              if outcome.log_path is not None and outcome.log_path.exists()]
    timeouts = sum(f.kind.name == "TIMEOUT" for outcome, seat, _ in played
                   for f in outcome.seats[seat].faults)
    warned = check.warnings(check.habits(logged), bot.protocol == "stdio-json", timeouts)
    for warning in warned:
        console.print(f"[yellow]WARN[/yellow] {escape(warning)}", soft_wrap=True)
    if logged:  # one path a line, never wrapped: they are for copying
        console.print("match logs (arena replay LOG shows one turn by turn):")
        for path, _ in logged:
            console.print(f"  {escape(str(path))}", soft_wrap=True, highlight=False)
        console.print("the bot's stderr:")
        for _, _, seat in played:
            if seat.stderr_path is not None:
                console.print(f"  {escape(str(seat.stderr_path))}", soft_wrap=True,
                              highlight=False)
    failed = sum(not i.passed for i in items)
    also = f" ({len(warned)} warning{'s' if len(warned) != 1 else ''})" if warned else ""
    console.print(f"[bold green]all checks passed[/bold green]{also}" if not failed else
                  f"[bold red]{failed} check(s) failed[/bold red]{also}")
    return not failed


def register(commands: Any) -> None:
    check_parser = commands.add_parser("check", help="conformance check for a bot folder",
                                       description=_check.__doc__)
    check_parser.add_argument("bot", metavar="BOT_DIR")
    check_parser.add_argument("--matches", type=int, default=2)
    check_parser.add_argument("--logs", help="folder for the bot's output (default: runs/check "
                              "here, or a cache folder when here is inside the bot folder)")
    add_sandbox_options(check_parser)
    check_parser.set_defaults(run=_check)
