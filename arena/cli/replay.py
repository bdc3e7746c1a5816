"""``arena replay``: re-run match logs through the engine, check them, show them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from arena.cli.common import key_argument, key_for_log
from arena.rules import events
from arena.rules.narration import describe


def _replay(args: argparse.Namespace) -> int:
    """Re-run match logs through the engine, check each agrees with what it records (and
    with the season key's commitment), and show them turn by turn."""
    from rich.console import Console
    from rich.markup import escape

    from arena.referee.replay import ReplayMismatch, replay
    from arena.text import visible

    def shown(value: object) -> str:
        # A log's text is whoever wrote the log's: no rich markup, no escape sequence.
        return escape(visible(str(value)))

    console = Console(highlight=False, soft_wrap=True)  # a path is never cut across lines
    names: list[str] = []
    quiet = args.quiet or len(args.logs) > 1

    def show(record: dict[str, object]) -> None:
        nonlocal names
        if quiet:
            return
        kind = record.get("type")
        if kind == "seats":
            names = [str(s["name"]) for s in record["seats"]]  # type: ignore[attr-defined]
        elif kind == "event":
            line = describe(events.from_record({k: v for k, v in record.items()
                                                if k != "type"}), names)
            console.print(shown(line))
        elif kind == "fault":
            console.print(f"[red]fault[/red] seat {shown(record['seat'])}: "
                          f"{shown(record['reason'])}")
        elif kind == "decision" and record.get("source") != "bot":
            console.print(f"  [dim]({shown(record['source'])} played {shown(record['name'])} "
                          f"for seat {shown(record['seat'])})[/dim]")

    failed = 0
    for name in args.logs:
        log = Path(name)
        key = args.key if args.key is not None else key_for_log(log)
        try:
            result = replay(log, show, season_key=key)
        except (ReplayMismatch, OSError, ValueError, KeyError, EOFError) as error:
            console.print(f"[red]{shown(log)}: replay failed:[/red] {shown(error)}")
            failed += 1
            continue
        console.print(f"[green]{shown(log)}: replay agrees with the log[/green]: "
                      f"{len(result.match.events)} events, scores {result.match.scores}")
    if len(args.logs) > 1:
        console.print(f"{len(args.logs) - failed} of {len(args.logs)} logs agree")
    return 1 if failed else 0


def register(commands: Any) -> None:
    replay_parser = commands.add_parser("replay", help="re-run and show match logs",
                                        description=_replay.__doc__)
    replay_parser.add_argument("logs", nargs="+", metavar="LOG")
    replay_parser.add_argument("--quiet", action="store_true",
                               help="only verify (implied with several logs)")
    replay_parser.add_argument(
        "--key", type=key_argument, metavar="HEX",
        help="the season key the logs were dealt from, once revealed (`arena season "
             "reveal`); found automatically beside `arena play` logs and in a season's "
             "own store")
    replay_parser.set_defaults(run=_replay)
