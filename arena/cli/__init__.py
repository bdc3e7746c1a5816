"""The ``arena`` command: one module per command group, each with a ``register``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from arena.cli import check, play, replay, report, season


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena", description="UNO Arena: bot matches under the official UNO rules.")
    commands = parser.add_subparsers(dest="command", required=True)
    for group in (play, check, replay, season, report):
        group.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))
