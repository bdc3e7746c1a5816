"""``arena replay``: re-run match logs through the engine, check them, show them."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from arena.cli.common import KEY_FILE, key_argument, key_for_log
from arena.rules import events
from arena.rules.narration import describe

LADDER_LABEL = re.compile(r"L~*\d{6,}")
"""A league server's ladder match: its deals are labelled by its id (``L000001``)."""


def where_the_key_is(header: dict[str, object]) -> str:
    """What a log's secret key is and where it is published, by the kind of log its deal
    label says it is: an ``arena play`` run's (``play/...``), a league server's final
    (``final/...``) or ladder (``L000001``), else a season's."""
    label = str(header.get("key_label", ""))
    if label.startswith("play/"):
        return (f"the secret key `arena play` drew for its run, kept beside its logs in "
                f"{KEY_FILE} (readable by its owner only): replay the log in that folder, "
                "or give --key with that file's text")
    if label.startswith("final/"):
        return ("a league server's secret final key: the server publishes it on its /final "
                "page (and as \"key\" in /api/final) once every final match is recorded; "
                "replay it then with --key")
    if LADDER_LABEL.fullmatch(label):
        return ("a league server's secret ladder key: the server publishes it on its "
                "ladder page (/) and as \"key\" in /api/standings once its final is "
                "complete; replay it then with --key")
    return ("a secret season key: the season's organiser publishes it with `arena season "
            "reveal` once the season is played; replay it then with --key")


def _replay(args: argparse.Namespace) -> int:
    """Re-run match logs through the engine, check each agrees with what it records (and
    with the season key's commitment), and show them turn by turn."""
    from rich.console import Console
    from rich.markup import escape

    from arena.referee.log import read_log
    from arena.referee.replay import KeyNeeded, ReplayMismatch, replay
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
        except KeyNeeded as error:
            problem = str(error)
            if key is None:  # no key at all: where this kind of log's key is published
                header = next(read_log(log))
                problem = (f"{log}: its deals (key SHA-256 {header.get('key_commitment')})"
                           f" come from {where_the_key_is(header)}")
            console.print(f"[red]{shown(log)}: replay failed:[/red] {shown(problem)}")
            failed += 1
            continue
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
        help="the key the logs were dealt from, once published (a season's by `arena "
             "season reveal`, a league server's on its /final and ladder pages once the "
             "final is complete); found automatically beside `arena play` logs and in a "
             "season's own store")
    replay_parser.set_defaults(run=_replay)
