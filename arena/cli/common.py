"""What the bot commands share: loading bot folders, sandbox and clock options, builds."""

from __future__ import annotations

import argparse
import difflib
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import TypeVar

from arena.referee.limits import SECONDS_RANGES, Limits
from arena.rules.options import VARIANTS, RuleOptions, unsupported_message
from arena.rules.seeds import parse_key
from arena.sandbox import (
    BACKENDS,
    BotManifest,
    BuildError,
    ManifestError,
    SandboxError,
    SandboxLimits,
    load_manifest,
    prepare,
)
from arena.sandbox.fetch import ecosystems_of

Number = TypeVar("Number", int, float)

def load_bots(folders: Sequence[str], command: str) -> list[BotManifest] | None:
    try:
        return [load_manifest(folder) for folder in folders]
    except ManifestError as error:
        print(f"arena {command}: {error}", file=sys.stderr)
        return None


def private_folder(path: str) -> Path:
    """An output folder only its owner may enter: match logs and bot output are not for
    the bots (a fallback-sandboxed bot sees what others may read)."""
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    return folder


def clock_limits(args: argparse.Namespace) -> Limits:
    return Limits(decision_deadline=args.deadline, time_bank=args.time_bank)


def sandbox_limits(args: argparse.Namespace, command: str) -> SandboxLimits | None:
    try:
        return SandboxLimits(memory_mib=args.memory, processes=args.processes,
                             cpu_seconds=args.cpu_seconds,
                             build_network=args.build_network,
                             build_hosts=tuple(args.build_host or ()),
                             fetch=not getattr(args, "no_fetch", False))
    except ValueError as error:
        print(f"arena {command}: {error}", file=sys.stderr)
        return None


def build_bots(bots: list[BotManifest], args: argparse.Namespace, limits: SandboxLimits,
           logs: Path, command: str) -> list[BotManifest] | None:
    """Run each bot's build step once (sandboxed, on a private copy) unless --no-build."""
    if args.no_build:
        return bots
    built = []
    for bot in bots:
        fetched = [e.lockfile for e in ecosystems_of(bot)] if limits.fetch else []
        if fetched:
            print(f"fetching the dependencies of {bot.label} from {', '.join(fetched)} "
                  "(once: kept in the build cache)", file=sys.stderr, flush=True)
        if bot.build:
            print(f"building {bot.label}: {' '.join(bot.build)}", file=sys.stderr, flush=True)
        try:
            built.append(prepare(bot, args.sandbox, limits, logs, trusted=args.trust_bots))
        except (BuildError, SandboxError) as error:
            print(f"arena {command}: {error}", file=sys.stderr)
            return None
    return built


def add_clock_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--deadline", type=seconds_for("decision_deadline"), default=1.0,
                        help="seconds per decision (default 1)")
    parser.add_argument("--time-bank", type=seconds_for("time_bank"), default=10.0,
                        help="extra seconds per match (default 10)")


def add_sandbox_options(parser: argparse.ArgumentParser) -> None:
    defaults = SandboxLimits()
    parser.add_argument("--sandbox", choices=BACKENDS, default="bubblewrap",
                        help="how bots are isolated (default bubblewrap; where it cannot run, "
                             "the weaker fallback, with a warning)")
    parser.add_argument("--memory", type=int, default=defaults.memory_mib, metavar="MIB",
                        help=f"memory cap per bot in MiB (default {defaults.memory_mib})")
    parser.add_argument("--processes", type=int, default=defaults.processes,
                        help=f"processes and threads per bot (default {defaults.processes})")
    parser.add_argument("--cpu-seconds", type=int, default=defaults.cpu_seconds,
                        help=f"CPU seconds per bot process (default {defaults.cpu_seconds})")
    parser.add_argument("--no-build", action="store_true",
                        help="run bot folders as they are, skipping their build steps")
    parser.add_argument("--no-fetch", action="store_true",
                        help="build from the dependencies arena vendor put in the bot folder, "
                             "with no fetch step (by default the lockfile's dependencies are "
                             "fetched from the registries first, as a league server does)")
    network = parser.add_mutually_exclusive_group()
    network.add_argument("--build-network", action="store_true",
                         help="let build steps reach the network (off by default, as in a "
                              "season and on a league server: the fetch step gets the "
                              "dependencies first)")
    network.add_argument("--offline-build", action="store_false", dest="build_network",
                         default=False,
                         help="no network during build steps (the default)")
    parser.add_argument("--build-host", action="append", metavar="HOST",
                        help="with --build-network, a host the build may reach beyond the "
                             "package registries (a mirror; repeatable; *.domain for its "
                             "subdomains)")
    add_trust_option(parser)


def add_trust_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trust-bots", action="store_true",
                        help="every bot is trusted: let the weaker fallback sandbox run them "
                             "(it does not hide the host's files); refused otherwise")




KEY_FILE = "secret-key.hex"
"""Beside ``arena play``'s logs: the key its deals came from (readable by the user only)."""


def write_key_file(folder: Path, key: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / KEY_FILE
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(key.hex() + "\n")
    return path


def key_for_log(log: Path) -> bytes | None:
    """The secret key a log's deals came from, where this machine has it: the key file
    ``arena play`` leaves beside its logs, or the store of the season the log belongs to
    (``<season folder>/logs/<match>.jsonl.gz``). None when neither is there."""
    key_file = log.parent / KEY_FILE
    if key_file.is_file():
        try:
            return parse_key(key_file.read_text())
        except (OSError, ValueError):
            return None
    store = log.parent.parent / "season.sqlite"
    if store.is_file():
        try:
            with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
                row = db.execute("SELECT value FROM meta WHERE key = 'season_key'").fetchone()
        except sqlite3.Error:
            return None
        if row:
            try:
                return parse_key(str(row[0]))
            except ValueError:
                return None
    return None


def checked(parse: Callable[[str], Number], accept: Callable[[Number], bool],
            refusal: str) -> Callable[[str], Number]:
    """An argparse ``type``: ``text`` read by ``parse`` and kept when ``accept`` says so;
    else a usage error, ``refusal`` with ``{text}`` filled in (NaN is never accepted: every
    comparison with it is false)."""
    def value(text: str) -> Number:
        try:
            number = parse(text)
        except ValueError:
            number = None
        if number is None or not accept(number):
            raise argparse.ArgumentTypeError(refusal.format(text=text))
        return number

    return value


count = checked(int, lambda n: n >= 1, "must be an integer ≥ 1, not {text}")
"""A number of matches for ``--matches``: a whole number from 1."""

port_number = checked(int, lambda n: 0 <= n <= 65535,
                      "'{text}' is not a port: give 1 to 65535 (or 0 for any free port)")
"""A TCP port for ``--port`` (0: any free port, which the command then prints)."""


def seconds_for(limit: str) -> Callable[[str], float]:
    """The ``type`` of an option setting the time limit ``limit`` (``SECONDS_RANGES``: a
    finite number of seconds the wire carries)."""
    low, high = SECONDS_RANGES[limit]
    return checked(float, lambda s: low <= s <= high,
                   f"must be a number of seconds from {low:g} to {high:g}, not {{text}}")


def key_argument(text: str) -> bytes:
    """argparse type for --key: 64 hex digits."""
    try:
        return parse_key(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
RULE_FIELDS = {option.name: option.type for option in fields(RuleOptions)}


def add_rule_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", type=int, default=500, help="target score (§16)")
    parser.add_argument(
        "--rule", action="append", default=[], metavar="NAME[=VALUE]",
        help="a rule option, repeatable: a variant by name switches it on (--rule stacking "
             "--rule seven_o); NAME=VALUE sets any option (--rule rounds=5, --rule "
             f"turn_limit=300). Variants: {', '.join(VARIANTS)}")


def rule_options(args: argparse.Namespace, command: str) -> RuleOptions | None:
    """The options of ``--target`` and every ``--rule``; None (after a one-line error on
    stderr) when one is unknown, malformed or the combination is impossible."""
    values: dict[str, object] = {"target_score": args.target}
    for text in args.rule:
        name, has_value, raw = text.partition("=")
        name = name.strip().replace("-", "_")
        kind = RULE_FIELDS.get(name)
        if kind is None:
            close = difflib.get_close_matches(name, list(RULE_FIELDS), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            print(f"arena {command}: --rule {text}: unknown rule option {name!r}{hint}; "
                  f"variants: {', '.join(VARIANTS)}", file=sys.stderr)
            return None
        raw = raw.strip().lower()
        if kind == "bool":
            if has_value and raw not in ("true", "false", "on", "off", "yes", "no", "1", "0"):
                print(f"arena {command}: --rule {text}: {name} is true or false",
                      file=sys.stderr)
                return None
            values[name] = not has_value or raw in ("true", "on", "yes", "1")
        else:
            if not has_value or not raw.lstrip("-").isdigit():
                print(f"arena {command}: --rule {text}: {name} needs a whole number "
                      f"(--rule {name}=N)", file=sys.stderr)
                return None
            values[name] = int(raw)
    try:
        return RuleOptions(**values)  # type: ignore[arg-type]
    except ValueError as error:
        print(f"arena {command}: {error}", file=sys.stderr)
        return None


def refuse_unsupported(bots: Sequence[BotManifest], options: RuleOptions, command: str
                       ) -> bool:
    """Before any match: whether a bot does not support the variants in force (each one
    named on stderr)."""
    problems = [unsupported_message(f"bot {bot.label} ({bot.folder})", options, bot.variants)
                for bot in bots]
    for problem in filter(None, problems):
        print(f"arena {command}: {problem}", file=sys.stderr)
    return any(problems)
