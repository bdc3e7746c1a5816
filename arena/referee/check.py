"""``arena check BOT_DIR``: the conformance check a bot author runs first.

The bot plays full 2-player matches against an in-process "provoker" that plays every
Wild Draw Four it holds (so the bot must answer challenges), from seeds where the first
card is a Wild turned to the bot (so it must name a colour at once). It passes when it
connected, answered every decision kind legally and in time, and finished every match.

A bot that declares variants (``variants`` in bot.toml, RULES.md §21-§32) then plays
matches under them, grouped so that each group provokes its decision kinds: the provoker
also plays its draw cards, 5s and 7s first, stacks on every penalty it can and exchanges
with the bot after every 5. A group is replayed with new seeds (up to
``VARIANT_ATTEMPTS`` matches) until the bot has been asked each of its decision kinds.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.bots.policies import GreedyPolicy
from arena.bots.runner import deck_seed
from arena.referee.match import InProcessSeat, Limits, MatchOutcome, MatchSpec, Seat
from arena.rules.actions import CHOOSE_SEAT, DRAW, PASS, UNO_CALL, Action, DecisionKind
from arena.rules.cards import CARD_RANK, DRAW_TEN, DRAW_TWO_RANK, WILD_DRAW_FOUR
from arena.rules.observation import Observation
from arena.rules.options import OFFICIAL, RuleOptions
from arena.rules.state import Match

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
                  bot_seat_launcher: Callable[[int], Seat], index: int
                  ) -> tuple[MatchSpec, list[Seat], int]:
    """One match of a variant group: the bot in turn at each seat, provokers elsewhere."""
    seed = 1_000 + 97 * index + attempt
    bot_seat = attempt % group.players
    seats: list[Seat] = [InProcessSeat(ProvokerPolicy(seed + seat), "provoker")
                         for seat in range(group.players)]
    seats[bot_seat] = bot_seat_launcher(index)
    spec = MatchSpec(f"check-{index + 1}-{group.name.replace(' ', '-')}", seed, group.players,
                     options, Limits(), None)
    return spec, seats, bot_seat


def asked_kinds(outcomes: Sequence[tuple[MatchOutcome, int]]) -> dict[str, int]:
    asked: dict[str, int] = {}
    for outcome, seat in outcomes:
        for kind, count in outcome.seats[seat].asked.items():
            asked[kind] = asked.get(kind, 0) + count
    return asked


# -- the verdict ----------------------------------------------------------------------


def verdict(outcomes: list[tuple[MatchOutcome, int]], logs: Path | None,
            declared: Sequence[str] = ()) -> list[CheckItem]:
    items = []
    reports = [outcome.seats[seat] for outcome, seat in outcomes]
    connected = all(r.connected for r in reports)
    no_hello = [f.reason for r in reports for f in r.faults
                if f.kind.name in ("NO_HELLO", "UNSUPPORTED_VARIANTS")]
    items.append(CheckItem("connects and says hello", connected,
                           "ok" if connected else "; ".join(no_hello)
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
    items.append(CheckItem("plays only legal actions", not illegal,
                           "ok" if not illegal else "; ".join(f.reason for f in illegal[:3])))
    items.append(CheckItem("answers in time", not late,
                           "ok" if not late else "; ".join(f.reason for f in late[:3])))
    disqualified = [f for f in faults if f.disqualified]
    finished = connected and not disqualified
    variants = f", under {', '.join(declared)}" if declared else ""
    items.append(CheckItem("finishes full matches", finished,
                           f"{len(outcomes)} matches{variants}, "
                           f"{sum(r.decisions for r in reports)} decisions"
                           if finished else "; ".join(f.reason for f in disqualified[:3])))
    return items
