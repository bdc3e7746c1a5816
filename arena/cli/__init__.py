"""The ``arena`` command: one module per command group, each with a ``register``."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType


def build_parser() -> argparse.ArgumentParser:
    from arena.cli import (
        author,
        check,
        inspect,
        new,
        play,
        replay,
        report,
        season,
        server,
        submit,
        view,
    )

    parser = argparse.ArgumentParser(
        prog="arena", description="UNO Arena: bot matches under the official UNO rules.")
    commands = parser.add_subparsers(dest="command", required=True)
    for group in (new, play, check, replay, inspect, view, season, report, server, submit,
                  author):
        group.register(commands)
    return parser


def _leave(signum: int, _: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    # Loading the commands takes a moment (gRPC, Rich...): Ctrl-C or SIGTERM meanwhile ends
    # the command quietly, as there is nothing to clean up yet.
    quiet = threading.current_thread() is threading.main_thread()
    previous = {kind: signal.signal(kind, _leave) for kind in (signal.SIGINT, signal.SIGTERM)
                } if quiet else {}
    try:
        parser = build_parser()
    finally:
        for kind, handler in previous.items():
            signal.signal(kind, handler)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except KeyboardInterrupt:  # a command with no clean-up of its own to do
        print("arena: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
