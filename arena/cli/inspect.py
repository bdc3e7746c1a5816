"""``arena inspect`` and ``arena refeed``: one seat's decisions in a match log, as text, and
one of them sent again to a bot (fresh, in the sandbox) to debug it without a match."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.cli.common import (
    add_sandbox_options,
    build_bots,
    key_for_log,
    load_bots,
    private_folder,
    sandbox_limits,
)
from arena.rules.actions import action_name
from arena.rules.seeds import MatchSeed
from arena.sandbox import SandboxError, make_launcher

if TYPE_CHECKING:  # the protocol's modules (protobuf, gRPC) are imported where they are used
    from arena.protocol import pb

EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
"""As a shell reports a command whose reader went away."""


@dataclass(frozen=True)
class SeatLog:
    """A match log's lines, the seat's names and that seat's decision lines, in order."""

    path: Path
    records: list[dict[str, Any]]
    names: list[str]
    seat: int
    decisions: list[dict[str, Any]]


def load_seat(path: Path, seat: int) -> SeatLog:
    """LogError (one line) for a missing or damaged log or a seat it does not have."""
    from arena.report.matchpage import LogError, damaged, read_whole_log, seat_names

    records = read_whole_log(path)
    try:
        names = seat_names(records)
        for record in records:  # every decision and fault names its seat (and the move)
            if record.get("type") in ("decision", "fault") and not (
                    isinstance(record["seat"], int) and 0 <= record["seat"] < len(names)):
                raise ValueError(f"seat {record['seat']!r} on a {record['type']} line")
            if record.get("type") == "decision":
                int(record["action"])
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        raise LogError(damaged(path, error)) from None
    if not 0 <= seat < len(names):
        raise LogError(f"{path}: no seat {seat}; this match had seats 0 to {len(names) - 1} "
                       f"({', '.join(names)})")
    decisions = [r for r in records if r.get("type") == "decision" and r.get("seat") == seat]
    return SeatLog(path, records, names, seat, decisions)


def _inspect(args: argparse.Namespace) -> int:
    """Print one seat's decisions in a match log: what it was asked (its hand, the top
    card, the hand sizes), its legal options, its answer, who made the move (the bot, the
    referee's default after a fault, the autopilot after disqualification), and the time
    it took against the deadline, with the time bank left."""
    from arena.report.matchpage import LogError, damaged
    from arena.text import visible

    try:
        seat_log = load_seat(Path(args.log), args.seat)
        lines = list(_inspection(seat_log))
    except LogError as error:
        print(f"arena inspect: {visible(str(error))}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        print(f"arena inspect: {damaged(Path(args.log), error)}", file=sys.stderr)
        return 2
    try:
        # A log's text is whoever wrote the log's: shown, never run by the terminal.
        print("\n".join(visible(line) for line in lines), flush=True)
    except BrokenPipeError:
        # The reader went away (``| head``): quietly, as other tools do; stdout is pointed
        # at /dev/null so that Python's own flush at exit fails no more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return 0


def _inspection(seat_log: SeatLog) -> Iterator[str]:
    """The lines ``arena inspect`` prints (computed whole before any is printed, so that a
    damaged log gives its one-line error and nothing else)."""
    from arena.referee.log import TIMING
    from arena.report.matchpage import seat_view

    names, seat = seat_log.names, seat_log.seat
    timings = {r.get("request"): r for r in seat_log.records
               if r.get("type") == TIMING and r.get("seat") == seat}
    yield f"{seat_log.path}: seat {seat} ({names[seat]}), {len(seat_log.decisions)} decisions"
    number = 0
    for record in seat_log.records:
        kind = record.get("type")
        if kind == "fault" and record.get("seat") == seat:
            strike = (" (disqualified)" if record.get("disqualified")
                      else f" (strike {record.get('strikes')})")
            yield f"  FAULT {record.get('kind')}: {record.get('reason')}{strike}"
        if kind != "decision" or record.get("seat") != seat:
            continue
        number += 1
        timing = timings.get(record.get("request")) if "asked" in record else None
        view = seat_view(record, timing)
        yield f"decision {number}: " + _summary(view)
        if "err" in view:
            yield f"  the logged request is damaged: {view['err']}"
        elif "k" in view:
            yield (f"  hand: {' '.join(view['h'])}; top card {view['top']}; "
                   f"hand sizes {' / '.join(map(str, view['sizes']))}")
            yield "  legal: " + "  ".join(f"[{i}] {name}" for i, name in enumerate(view["lg"]))
            yield f"  answer: {view['ans']}"
        elif view["src"] in ("bot", "default"):
            yield ("  (this log does not keep the request: made before the seat's view "
                   "was logged)")
        moved = {"bot": "the bot", "default": "DEFAULT (the referee, after a fault)",
                 "autopilot": "AUTOPILOT (the referee, after disqualification)",
                 "in-process": "a built-in policy"}.get(view["src"], view["src"])
        yield f"  move: {view['a']}, made by {moved}" + _times(view)


def _summary(view: dict[str, Any]) -> str:
    if "k" not in view:
        return f"request {view.get('r')}" if view["src"] in ("bot", "default") else (
            "no request sent")
    return f"{view['k']} (request {view['r']})"


def _times(view: dict[str, Any]) -> str:
    parts = []
    if "l" in view:
        deadline = f" of a {view['dl']} ms deadline" if "dl" in view else ""
        parts.append(f"{view['l']:.1f} ms{deadline}")
    if "b" in view:
        parts.append(f"time bank left {view['b'] / 1000:.2f} s")
    return "; " + ", ".join(parts) if parts else ""


def _resolve(answer: pb.Decision | None, legal: list[int]) -> str:
    """What an answer amounts to: the action name, or why it is none."""
    from arena.protocol.convert import ProtocolError, action_from_message

    if answer is None:
        return "no answer"
    choice = answer.WhichOneof("choice")
    if choice == "action_index":
        if answer.action_index < len(legal):
            return action_name(legal[answer.action_index])
        return f"option {answer.action_index} (out of range 0..{len(legal) - 1})"
    if choice == "action":
        try:
            return action_name(action_from_message(answer.action))
        except ProtocolError as error:
            return f"an unreadable action ({error})"
    return "a decision with no action"


def _refeed(args: argparse.Namespace) -> int:
    """Send one logged decision request to a bot, started fresh in the sandbox (hello,
    match start, then exactly that request), and print its answer next to the logged one.
    Exit code 0 when they agree, 1 when they differ (or the bot gave none)."""
    from arena.protocol.convert import ProtocolError, action_from_message
    from arena.referee.log import decode_answer, decode_asked
    from arena.report.matchpage import LogError, damaged, seat_view

    log = Path(args.log)
    try:
        seat_log = load_seat(log, args.seat)
    except LogError as error:
        print(f"arena refeed: {error}", file=sys.stderr)
        return 2
    count = len(seat_log.decisions)
    if not 1 <= args.decision <= count:
        print(f"arena refeed: {log}: seat {args.seat} made {count} decision(s); --decision "
              f"{args.decision} is out of range (1 to {count}, as `arena inspect` numbers "
              "them)", file=sys.stderr)
        return 2
    record = seat_log.decisions[args.decision - 1]
    try:
        request = decode_asked(record)
        logged = decode_answer(record)
    except ValueError as error:
        print(f"arena refeed: {log}: decision {args.decision} of seat {args.seat}: {error}",
              file=sys.stderr)
        return 2
    if request is None:
        why = ("the log predates the seat's view (no request kept)"
               if record.get("source") in ("bot", "default") else
               f"the move was made by the {record.get('source')}, no request was sent")
        print(f"arena refeed: {log}: decision {args.decision} of seat {args.seat} has "
              f"nothing to re-feed: {why}", file=sys.stderr)
        return 2
    header = seat_log.records[0]
    seed, seed_note = _seat_seed(log, header, args.seat)
    bots = load_bots([args.bot], "refeed")
    if bots is None:
        return 2
    limits = sandbox_limits(args, "refeed")
    if limits is None:
        return 2
    output = private_folder(args.logs)
    built = build_bots(bots, args, limits, output, "refeed")
    if built is None:
        return 2
    bot = built[0]
    label = f"refeed-seat{args.seat}-{bot.name}"
    try:
        launcher = make_launcher(args.sandbox, bot, limits, output, label,
                                 trusted=args.trust_bots)
    except SandboxError as error:
        print(f"arena refeed: {error}", file=sys.stderr)
        return 2

    from arena.referee import eventloop
    from arena.referee.refeed import refeed
    from arena.text import file_label

    legal = []
    for message in request.legal_actions:
        try:
            legal.append(action_from_message(message))
        except ProtocolError:
            legal.append(-1)
    try:
        view = seat_view(record, None)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        print(f"arena refeed: {damaged(log, error)}", file=sys.stderr)
        return 2
    result = eventloop.run(refeed(header, seat_log.names, args.seat, request, launcher, seed))
    print(f"{log}: seat {args.seat} ({seat_log.names[args.seat]}), decision {args.decision}: "
          f"{view.get('k', '?')} (request {request.request_id}), "
          f"{len(request.legal_actions)} legal option(s)")
    if seed_note:
        print(f"  note: {seed_note}")
    print("  legal: " + "  ".join(f"[{i}] {name}" for i, name in enumerate(view.get("lg", []))))
    logged_text = _resolve(logged, legal)
    mine = _resolve(result.answer, legal)
    print(f"  logged answer: {logged_text}  (the move: {record.get('name')}, made by "
          f"{record.get('source')})")
    answered = (f"{mine}  ({result.latency_ms:.1f} ms)" if result.answer is not None
                else f"none: {result.problem}")
    print(f"  bot's answer:  {answered}")
    print(f"  the bot's stderr: {output / (file_label(label) + '.stderr.log')}")
    same = result.answer is not None and mine == logged_text
    print("same answer" if same else "DIFFERENT answer")
    return 0 if same else 1


def _seat_seed(log: Path, header: dict[str, Any], seat: int) -> tuple[int, str]:
    """The seed the seat was given at match start, and a note when it is not known."""
    try:
        return MatchSeed.from_record(header, key_for_log(log)).seat_seed(seat), ""
    except (KeyError, ValueError):
        return 0, ("the match was dealt from a secret season key that is not here, so the "
                   "bot gets seed 0, not its match seed: a bot that draws on its seed may "
                   "answer differently")


def register(commands: Any) -> None:
    inspect = commands.add_parser("inspect", help="print one seat's decisions in a match log",
                                  description=_inspect.__doc__)
    inspect.add_argument("log", metavar="LOG")
    inspect.add_argument("--seat", type=int, required=True, metavar="N")
    inspect.set_defaults(run=_inspect)

    refeed = commands.add_parser(
        "refeed", help="send one logged decision to a bot, fresh, and compare its answer",
        description=_refeed.__doc__)
    refeed.add_argument("log", metavar="LOG")
    refeed.add_argument("--seat", type=int, required=True, metavar="N")
    refeed.add_argument("--decision", type=int, required=True, metavar="K",
                        help="the seat's K-th decision, from 1 (as `arena inspect` numbers them)")
    refeed.add_argument("bot", metavar="BOT_FOLDER")
    refeed.add_argument("--logs", default="runs/refeed",
                        help="folder for the bot's output (default runs/refeed)")
    add_sandbox_options(refeed)
    refeed.set_defaults(run=_refeed)
