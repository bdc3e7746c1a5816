"""``arena check BOT_DIR``: the conformance check a bot author runs first.

The bot plays full 2-player matches against an in-process "provoker" that plays every
Wild Draw Four it holds (so the bot must answer challenges), from seeds where the first
card is a Wild turned to the bot (so it must name a colour at once). It passes when it
connected, answered every decision kind legally and in time, and finished every match.

A bot that declares variants (``variants`` in bot.toml, docs/rules.md §21-§32) then plays
matches under them, grouped so that each group provokes its decision kinds: the provoker
also plays its draw cards, 5s and 7s first, stacks on every penalty it can and exchanges
with the bot after every 5. A group is replayed with new seeds (up to
``VARIANT_ATTEMPTS`` matches) until the bot has been asked each of its decision kinds.

Besides the verdict, the check reads its own match logs (kept) for habits worth a warning
(never calling UNO, never challenging, answering close to the deadline), and says how a bot
that crashed ended: its exit code or signal and the last lines of its stderr.
"""

from __future__ import annotations

import dataclasses
import math
import random
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bots.policies import GreedyPolicy
from arena.bots.runner import deck_seed
from arena.referee.launch import BotProcess, SeatLauncher
from arena.referee.limits import Limits
from arena.referee.log import TIMING, read_log
from arena.referee.match import InProcessSeat, MatchOutcome, MatchSpec, Seat
from arena.rules.actions import (
    ACCEPT,
    CHALLENGE,
    CHOOSE_SEAT,
    DRAW,
    PASS,
    UNO_CALL,
    Action,
    DecisionKind,
)
from arena.rules.cards import CARD_RANK, DRAW_TEN, DRAW_TWO_RANK, WILD_DRAW_FOUR
from arena.rules.match import Match
from arena.rules.observation import Observation
from arena.rules.options import OFFICIAL, RuleOptions
from arena.text import visible

OFFICIAL_KINDS = (DecisionKind.PLAY_OR_DRAW, DecisionKind.PLAY_DRAWN_OR_KEEP,
                  DecisionKind.CHOOSE_COLOUR, DecisionKind.CHALLENGE_OR_ACCEPT)
VARIANT_ATTEMPTS = 3
"""Matches a variant group may take to provoke every decision kind it adds."""
VARIANT_TARGET = 200
"""Target score of the variant matches (shorter than official ones: there are several)."""


class ProvokerPolicy(GreedyPolicy):
    """Greedy, but plays a Wild Draw Four whenever it can (bluffing freely); under the
    variants it also plays its draw cards, 5s and 7s first, stacks whenever it can and
    exchanges with the first seat it may after a 5."""

    PREFERRED = (WILD_DRAW_FOUR, DRAW_TEN)

    def decide(self, observation: Observation, legal: Sequence[Action]) -> Action:
        for action in legal:
            if action & ~UNO_CALL == WILD_DRAW_FOUR:
                return action
        if observation.variants:
            decision = observation.decision
            if decision is DecisionKind.PLAY_OR_DRAW:
                plays = [a for a in legal if a < DRAW]
                if plays:
                    return min(plays, key=self._provocation)
            if decision is DecisionKind.CHOOSE_SEAT and PASS in legal:
                return next(a for a in legal if a >= CHOOSE_SEAT)  # §24: always exchange
        return super().decide(observation, legal)

    @staticmethod
    def _provocation(action: Action) -> tuple[int, int]:
        card = action & ~UNO_CALL
        rank = CARD_RANK[card]
        order = (0 if card in ProvokerPolicy.PREFERRED else 1 if rank == DRAW_TWO_RANK
                 else 2 if rank in (5, 7) else 3)
        return (order, card)


def provoking_seeds(bot_seat: int, count: int) -> list[int]:
    """Seeds whose first decision is the bot naming the colour of a turned Wild (§7)."""
    found: list[int] = []
    seed = 0
    while len(found) < count:
        seed += 1
        match = Match(2, random.Random(deck_seed(seed)), OFFICIAL)
        if match.decision is DecisionKind.CHOOSE_COLOUR and match.current_seat == bot_seat:
            found.append(seed)
    return found


@dataclass(frozen=True)
class CheckItem:
    name: str
    passed: bool
    detail: str


def plan(bot_seat_launcher: Callable[[int], Seat], matches: int = 2,
         log_dir: Path | None = None) -> list[tuple[MatchSpec, list[Seat], int]]:
    """The check's matches: the bot in seat 0 then 1, against the provoker; each match's
    log goes to ``log_dir/check-N.jsonl.gz`` (kept, for ``arena replay`` and the warnings)."""
    planned = []
    for index in range(matches):
        bot_seat = index % 2
        seed = provoking_seeds(bot_seat, index // 2 + 1)[-1]
        seats: list[Seat] = [None, None]
        seats[bot_seat] = bot_seat_launcher(index)
        seats[1 - bot_seat] = InProcessSeat(ProvokerPolicy(seed), "provoker")
        match_id = f"check-{index + 1}"
        log = log_dir / f"{match_id}.jsonl.gz" if log_dir is not None else None
        spec = MatchSpec(match_id, seed, 2, OFFICIAL, Limits(), log)
        planned.append((spec, seats, bot_seat))
    return planned


EXIT_GRACE = 1.0
"""Seconds a bot still running at the end of a check match has to exit by itself."""


class WatchedSeat:
    """A seat launcher that remembers the bot process it started and how that process
    ended before the referee's kill at the end of the match (its exit code, if it had
    exited by itself). ``describe()`` is the wrapped launcher's."""

    def __init__(self, launcher: SeatLauncher) -> None:
        self.launcher = launcher
        self.process: BotProcess | None = None
        self.exit_code: int | None = None
        """The bot's own exit code or -signal; None while it ran (or never started)."""
        self.exit_note = ""

    def __call__(self, env: dict[str, str], socket_dir: Path) -> _WatchedProcess:
        self.process = self.launcher(env, socket_dir)
        return _WatchedProcess(self.process, self)

    def describe(self) -> dict[str, Any]:
        method = getattr(self.launcher, "describe", None)
        return dict(method()) if callable(method) else {}

    @property
    def stderr_path(self) -> Path | None:
        return getattr(self.process, "stderr_path", None)


class _WatchedProcess:
    def __init__(self, process: BotProcess, seat: WatchedSeat) -> None:
        self._process = process
        self._seat = seat
        self._killed = False

    def poll(self) -> int | None:
        return self._process.poll()

    def exit_note(self) -> str:
        note = getattr(self._process, "exit_note", None)
        return str(note()) if callable(note) else ""

    def kill(self) -> None:
        # A bot that dies (an exception, a signal) may still be shutting down when the match
        # ends: give it a moment to exit by itself, so that its own exit status is known.
        if self._killed:
            return
        self._killed = True
        deadline = time.monotonic() + EXIT_GRACE
        while self._seat.exit_code is None:
            self._seat.exit_code = self._process.poll()
            if self._seat.exit_code is not None or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        self._seat.exit_note = self.exit_note()
        self._process.kill()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._process, name)


# -- the variants ---------------------------------------------------------------------


@dataclass(frozen=True)
class VariantGroup:
    """Variants checked together, and the decision kinds they must provoke."""

    name: str
    variants: tuple[str, ...]
    kinds: tuple[DecisionKind, ...]
    players: int = 2


GROUPS = (
    VariantGroup("penalties", ("stacking", "stack_two_on_four", "reverse_deflects",
                               "draw_ten"), (DecisionKind.STACK_OR_ACCEPT,)),
    VariantGroup("swaps", ("seven_o", "exchange_on_five", "colour_circle", "zero_scores_50"),
                 (DecisionKind.CHOOSE_SEAT, DecisionKind.GIVE_CARD)),
    VariantGroup("jump-in", ("jump_in", "uno_in_seven", "mistake_penalty"),
                 (DecisionKind.JUMP_IN_OR_PASS,)),
    VariantGroup("to the last", ("until_the_last", "lazy_scoring"), (), players=3),
)


def variant_kinds(variants: Sequence[str]) -> tuple[DecisionKind, ...]:
    """The decision kinds that the variants add (§21-§25), in protocol order."""
    needs = {
        DecisionKind.STACK_OR_ACCEPT: {"stacking", "reverse_deflects"},
        DecisionKind.CHOOSE_SEAT: {"seven_o", "exchange_on_five"},
        DecisionKind.GIVE_CARD: {"exchange_on_five"},
        DecisionKind.JUMP_IN_OR_PASS: {"jump_in"},
    }
    return tuple(kind for kind, names in needs.items() if names & set(variants))


def variant_groups(declared: Sequence[str]) -> list[tuple[VariantGroup, RuleOptions]]:
    """The groups a bot declaring ``declared`` plays, each with its rule options."""
    groups = []
    for group in GROUPS:
        names = [name for name in group.variants if name in declared]
        if "stack_two_on_four" in names and "stacking" not in names:
            names.remove("stack_two_on_four")
        if not names:
            continue
        settings: dict[str, object] = dict.fromkeys(names, True)
        settings["target_score"] = VARIANT_TARGET
        if "lazy_scoring" in names:
            settings["rounds"] = 3
        groups.append((group, RuleOptions(**settings)))  # type: ignore[arg-type]
    return groups


def variant_match(group: VariantGroup, options: RuleOptions, attempt: int,
                  bot_seat_launcher: Callable[[int], Seat], index: int,
                  log_dir: Path | None = None) -> tuple[MatchSpec, list[Seat], int]:
    """One match of a variant group: the bot in turn at each seat, provokers elsewhere."""
    seed = 1_000 + 97 * index + attempt
    bot_seat = attempt % group.players
    seats: list[Seat] = [InProcessSeat(ProvokerPolicy(seed + seat), "provoker")
                         for seat in range(group.players)]
    seats[bot_seat] = bot_seat_launcher(index)
    match_id = f"check-{index + 1}-{group.name.replace(' ', '-')}"
    log = log_dir / f"{match_id}.jsonl.gz" if log_dir is not None else None
    spec = MatchSpec(match_id, seed, group.players, options, Limits(), log)
    return spec, seats, bot_seat


def asked_kinds(outcomes: Sequence[tuple[MatchOutcome, int]]) -> dict[str, int]:
    asked: dict[str, int] = {}
    for outcome, seat in outcomes:
        for kind, count in outcome.seats[seat].asked.items():
            asked[kind] = asked.get(kind, 0) + count
    return asked


# -- the verdict ----------------------------------------------------------------------


def _reasons(faults: Sequence[Any], most: int = 3) -> str:
    """The distinct reasons of some faults (the same crash in every match is said once)."""
    return "; ".join(list(dict.fromkeys(f.reason for f in faults))[:most])


def verdict(outcomes: list[tuple[MatchOutcome, int]], logs: Path | None,
            declared: Sequence[str] = ()) -> list[CheckItem]:
    items = []
    reports = [outcome.seats[seat] for outcome, seat in outcomes]
    connected = all(r.connected for r in reports)
    no_hello = [f.reason for r in reports for f in r.faults
                if f.kind.name in ("NO_HELLO", "UNSUPPORTED_VARIANTS")]
    items.append(CheckItem("connects and says hello", connected,
                           "ok" if connected else "; ".join(dict.fromkeys(no_hello))
                           + (f" (see the bot's output in {logs})" if logs else "")))
    asked = asked_kinds(outcomes)
    mishandled: dict[str, int] = {}
    for report in reports:
        for kind, count in report.mishandled.items():
            mishandled[kind] = mishandled.get(kind, 0) + count
    faults = [f for r in reports for f in r.faults]
    illegal = [f for f in faults if f.kind.name in ("ILLEGAL_ACTION", "MALFORMED", "OUT_OF_TURN")]
    late = [f for f in faults if f.kind.name == "TIMEOUT"]
    for decision in (*OFFICIAL_KINDS, *variant_kinds(declared)):
        count = asked.get(decision.name, 0)
        wrong = mishandled.get(decision.name, 0)
        label = decision.name.lower().replace("_", " ")
        detail = (f"asked {count} times" if count else
                  "never asked (the check could not provoke it)")
        if wrong:
            detail += f", {wrong} answered late, illegally or not at all"
        items.append(CheckItem(f"answers {label}", count > 0 and not wrong,
                               detail))
    played = sum(r.decisions for r in reports) > 0
    unplayed = "not tested: the bot never played (it did not say hello)" if not connected \
        else "not tested: the bot made no decision"
    items.append(CheckItem("plays only legal actions", played and not illegal,
                           unplayed if not played else
                           "ok" if not illegal else _reasons(illegal)))
    items.append(CheckItem("answers in time", played and not late,
                           unplayed if not played else
                           "ok" if not late else _reasons(late)))
    disqualified = [f for f in faults if f.disqualified]
    finished = connected and not disqualified
    variants = f", under {', '.join(declared)}" if declared else ""
    items.append(CheckItem("finishes full matches", finished,
                           f"{len(outcomes)} matches{variants}, "
                           f"{sum(r.decisions for r in reports)} decisions"
                           if finished else _reasons(disqualified)))
    return items


# -- after the verdict: how a crash ended, and habits worth a warning --------------------

STDERR_TAIL_LINES = 10
NEAR_DEADLINE = 0.5
"""Warn when the bot's 95th-percentile answer takes more than this share of the deadline:
on a slower or busier machine (a season runs bots side by side) it would time out."""


def describe_exit(code: int | None) -> str:
    """An exit status as a person reads it (a sandbox reports a signal as 128 + its number,
    as a shell does; a plain process as minus the number)."""
    if code is None:
        return "still running (it closed its stream without exiting)"
    number = -code if code < 0 else code - 128 if code > 128 else 0
    try:
        name = signal.Signals(number).name if number else ""
    except ValueError:
        name = ""
    if code < 0:
        return f"killed by signal {number} ({name or 'unknown'})"
    if name:
        return f"exit code {code}, i.e. killed by signal {number} ({name})"
    return f"exit code {code}"


def stderr_tail(path: Path | None, lines: int = STDERR_TAIL_LINES) -> list[str]:
    if path is None:
        return []
    try:
        with open(path, "rb") as stream:
            stream.seek(0, 2)
            stream.seek(max(0, stream.tell() - 64 * 1024))
            text = stream.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    # The bot's own words, quoted: escape sequences shown, not run by the reader's terminal.
    return [visible(line) for line in text.splitlines() if line.strip()][-lines:]


@dataclass(frozen=True)
class Crash:
    match_id: str
    how: str
    """The exit code or signal (and the sandbox's note, e.g. the memory cap)."""
    stderr: tuple[str, ...]
    stderr_path: Path | None
    log_path: Path | None


def crashes(matches: Sequence[tuple[MatchOutcome, int, WatchedSeat]]) -> list[Crash]:
    """The matches in which the bot's process ended by itself (a crash, or an exit before
    the match was over), with how it ended and the end of its stderr; a crash the same in
    several matches is given once, with their ids (``check-1, check-2``)."""
    found: list[Crash] = []
    for outcome, seat, watched in matches:
        report = outcome.seats[seat]
        lost = {f.kind.name for f in report.faults} & {"DISCONNECTED", "NO_HELLO"}
        if not lost or watched.exit_code is None:
            continue
        how = describe_exit(watched.exit_code)
        if watched.exit_note:
            how += f" ({watched.exit_note})"
        crash = Crash(outcome.match_id, how, tuple(stderr_tail(watched.stderr_path)),
                      watched.stderr_path, outcome.log_path)
        same = next((i for i, c in enumerate(found) if (c.how, c.stderr) == (how, crash.stderr)),
                    None)
        if same is None:
            found.append(crash)
        else:
            found[same] = dataclasses.replace(
                found[same], match_id=f"{found[same].match_id}, {crash.match_id}")
    return found


@dataclass
class Habits:
    """What the bot did, read from the check's match logs."""

    uno_calls: int = 0
    uno_missed: int = 0
    challenged: int = 0
    accepted: int = 0
    latencies_ms: list[float] | None = None
    deadline_ms: float = 1000.0


def habits(logs: Sequence[tuple[Path, int]]) -> Habits:
    """Read ``(log path, bot seat)`` pairs."""
    found = Habits(latencies_ms=[])
    for path, seat in logs:
        for record in read_log(path):
            kind = record.get("type")
            if kind == "header":
                found.deadline_ms = float(record["limits"]["decision_deadline"]) * 1000
            elif kind == "event" and record.get("seat") == seat:
                if record["event"] == "UnoCalled" and record.get("counted"):
                    found.uno_calls += 1
                elif record["event"] == "UnoCaught":
                    found.uno_missed += 1
            elif kind == "decision" and record["seat"] == seat and record["source"] == "bot":
                assert found.latencies_ms is not None
                if "latency_ms" in record:  # an older log: no timing lines
                    found.latencies_ms.append(float(record["latency_ms"]))
                found.challenged += record["action"] == CHALLENGE
                found.accepted += record["action"] == ACCEPT
            elif kind == TIMING and record["seat"] == seat:
                assert found.latencies_ms is not None
                found.latencies_ms.append(float(record["latency_ms"]))
    return found


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (``share`` in 0..1)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def warnings(found: Habits, stdio: bool = False, timeouts: int = 0) -> list[str]:
    """Habits that pass the check but cost points or risk faults in a season."""
    said = []
    if found.uno_missed:
        what = ("never calls UNO" if not found.uno_calls else
                f"forgot to call UNO {found.uno_missed} of "
                f"{found.uno_missed + found.uno_calls} times")
        said.append(f"{what}: caught {found.uno_missed} time(s) playing its next-to-last "
                    "card without the call, 2 cards each (§14); answer with the play's index "
                    "(the listed play calls UNO) or set uno on the action you send")
    if found.accepted and not found.challenged:
        said.append(f"never challenges a Wild Draw Four (accepted all {found.accepted}): the "
                    "check's opponent bluffs freely, and a challenge that catches a bluff "
                    "makes the bluffer draw 4 instead of you (§13)")
    latencies = found.latencies_ms or []
    if latencies:
        slow = percentile(latencies, 0.95)
        if slow > NEAR_DEADLINE * found.deadline_ms:
            said.append(f"answers near the deadline: 95% of its answers took up to "
                        f"{slow:.0f} ms, over half the {found.deadline_ms:.0f} ms deadline; "
                        "on a slower or busier machine it would time out (and each timeout "
                        "past the time bank is a strike)")
    if stdio and timeouts:
        said.append("a stdio-json bot must flush stdout after every answer (print(..., "
                    "flush=True), fflush(stdout), $| = 1): an answer left in a buffer never "
                    "reaches the referee")
    return said
