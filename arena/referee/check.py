"""``arena check BOT_DIR``: the conformance check a bot author runs first.

The bot plays full 2-player matches against an in-process "provoker" that plays every
Wild Draw Four it holds (so the bot must answer challenges), from seeds where the first
card is a Wild turned to the bot (so it must name a colour at once). It passes when it
connected, answered every decision kind legally and in time, and finished every match.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.bots.policies import GreedyPolicy
from arena.bots.runner import deck_seed
from arena.referee.match import InProcessSeat, Limits, MatchOutcome, MatchSpec, Seat
from arena.rules.actions import UNO_CALL, Action, DecisionKind
from arena.rules.cards import WILD_DRAW_FOUR
from arena.rules.observation import Observation
from arena.rules.options import OFFICIAL
from arena.rules.state import Match


class ProvokerPolicy(GreedyPolicy):
    """Greedy, but plays a Wild Draw Four whenever it can (bluffing freely)."""

    def decide(self, observation: Observation, legal: Sequence[Action]) -> Action:
        for action in legal:
            if action & ~UNO_CALL == WILD_DRAW_FOUR:
                return action
        return super().decide(observation, legal)


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


def plan(bot_seat_launcher: Callable[[int], Seat], matches: int = 2
         ) -> list[tuple[MatchSpec, list[Seat], int]]:
    """The check's matches: the bot in seat 0 then 1, against the provoker."""
    planned = []
    for index in range(matches):
        bot_seat = index % 2
        seed = provoking_seeds(bot_seat, index // 2 + 1)[-1]
        seats: list[Seat] = [None, None]
        seats[bot_seat] = bot_seat_launcher(index)
        seats[1 - bot_seat] = InProcessSeat(ProvokerPolicy(seed), "provoker")
        spec = MatchSpec(f"check-{index + 1}", seed, 2, OFFICIAL, Limits(), None)
        planned.append((spec, seats, bot_seat))
    return planned


def verdict(outcomes: list[tuple[MatchOutcome, int]], logs: Path | None) -> list[CheckItem]:
    items = []
    reports = [outcome.seats[seat] for outcome, seat in outcomes]
    connected = all(r.connected for r in reports)
    no_hello = [f.reason for r in reports for f in r.faults if f.kind.name == "NO_HELLO"]
    items.append(CheckItem("connects and says hello", connected,
                           "ok" if connected else "; ".join(no_hello)
                           + (f" (see the bot's output in {logs})" if logs else "")))
    asked: dict[str, int] = {}
    for report in reports:
        for kind, count in report.asked.items():
            asked[kind] = asked.get(kind, 0) + count
    faults = [f for r in reports for f in r.faults]
    illegal = [f for f in faults if f.kind.name in ("ILLEGAL_ACTION", "MALFORMED", "OUT_OF_TURN")]
    late = [f for f in faults if f.kind.name == "TIMEOUT"]
    for decision in DecisionKind:
        count = asked.get(decision.name, 0)
        label = decision.name.lower().replace("_", " ")
        items.append(CheckItem(f"answers {label}", count > 0
                               and not illegal, f"asked {count} times" if count else
                               "never asked (the check could not provoke it)"))
    items.append(CheckItem("plays only legal actions", not illegal,
                           "ok" if not illegal else "; ".join(f.reason for f in illegal[:3])))
    items.append(CheckItem("answers in time", not late,
                           "ok" if not late else "; ".join(f.reason for f in late[:3])))
    disqualified = [f for f in faults if f.disqualified]
    finished = connected and not disqualified
    items.append(CheckItem("finishes full matches", finished,
                           f"{len(outcomes)} matches to {OFFICIAL.target_score}, "
                           f"{sum(r.decisions for r in reports)} decisions"
                           if finished else "; ".join(f.reason for f in disqualified[:3])))
    return items
