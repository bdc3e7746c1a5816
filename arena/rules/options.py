"""Rule options: one frozen value holding every choice, official rules by default.

The house rules of docs/rules.md §21-§32 are variants: one boolean field each, named as the
rulebook names them, off by default, combinable unless the rulebook (or plain sense) says
otherwise; ``__post_init__`` rejects the impossible combinations with a clear error.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, fields
from functools import cached_property
from typing import Any, Final

VARIANTS: Final = (
    "stacking", "stack_two_on_four", "reverse_deflects", "seven_o", "exchange_on_five",
    "jump_in", "zero_scores_50", "colour_circle", "draw_ten", "until_the_last",
    "uno_in_seven", "lazy_scoring", "mistake_penalty",
)
"""The variants (§21-§32), in rulebook order: what a bot declares it supports."""

VARIANT_SECTIONS: Final = {
    "stacking": "§21", "stack_two_on_four": "§21", "reverse_deflects": "§22",
    "seven_o": "§23", "exchange_on_five": "§24", "jump_in": "§25", "zero_scores_50": "§26",
    "colour_circle": "§27", "draw_ten": "§28", "until_the_last": "§29",
    "uno_in_seven": "§30", "lazy_scoring": "§31", "mistake_penalty": "§32",
}

LAZY_ROUNDS: Final = 7
"""§31: rounds in a lazy-scoring match unless ``rounds`` says otherwise."""
WIRE_MOST: Final = 2 ** 32 - 1
"""The largest number an option may be: the protocol carries them as uint32."""


@dataclass(frozen=True)
class RuleOptions:
    """The rule set of a match. The defaults are the official Mattel rules (docs/rules.md)."""

    target_score: int = 500
    """§16: the match ends after the round in which a seat reaches this score."""
    alternative_scoring: bool = False
    """§17: each seat scores its own leftover points; lowest total wins."""
    two_player_reverse_is_skip: bool = True
    """§11: with two players a Reverse acts as a Skip (the official two-player rule)."""
    turn_limit: int = 1000
    """§18: a round that would start turn ``turn_limit + 1`` ends stalled, no points."""
    round_limit: int = 100
    """§18: a match that has played this many rounds ends as it stands."""
    hand_size: int = 7
    """§6: cards dealt to each seat."""
    # -- variants (§21-§32), all off in official play --------------------------------
    stacking: bool = False
    """§21: a pending Draw Two may be answered with a Draw Two, a Wild Draw Four with a Wild
    Draw Four; penalties add up and the first seat that does not stack draws the total."""
    stack_two_on_four: bool = False
    """§21 (needs ``stacking``): a Draw Two of the colour named by a Wild Draw Four also
    answers it."""
    reverse_deflects: bool = False
    """§22: a Reverse of the current colour passes a pending Draw Two or Wild Draw Four back
    to the seat that played it."""
    seven_o: bool = False
    """§23: a played 7 swaps hands with a chosen seat; a played 0 passes every hand on."""
    exchange_on_five: bool = False
    """§24: after a 5, its player may exchange one card, chosen hidden, with a chosen seat."""
    jump_in: bool = False
    """§25: a seat holding a card identical to the one just played may play it out of turn."""
    zero_scores_50: bool = False
    """§26: a hand left with one card, a 0, scores 50 for it."""
    colour_circle: bool = False
    """§27: a Wild or Wild Draw Four names no colour; the colour moves on round the circle
    red, blue, green, yellow (forward clockwise, backward counter-clockwise). A +10 (§28)
    is neither: its player still names one."""
    draw_ten: bool = False
    """§28: four black "+10" cards (112 in the deck): the next seat draws 10."""
    until_the_last: bool = False
    """§29: a round goes on until one seat still holds cards; round places are logged."""
    uno_in_seven: bool = False
    """§30: a seat that empties its hand draws 6 and plays on, then 5, ... down to 1."""
    lazy_scoring: bool = False
    """§31: no points: a winner and a loser per round, ``rounds`` rounds a match."""
    rounds: int = LAZY_ROUNDS
    """§31 (with ``lazy_scoring`` only): the rounds of a match."""
    mistake_penalty: bool = False
    """§32: an illegal action costs 2 drawn cards instead of a strike."""

    def __post_init__(self) -> None:
        problems = []
        for option in fields(self):
            value = getattr(self, option.name)
            wanted = bool if option.type in ("bool", bool) else int
            if type(value) is not wanted:  # bool is an int subclass: compare exactly
                kind = "true or false" if wanted is bool else "a whole number"
                raise ValueError(f"{option.name} must be {kind}, not {value!r}")
            if wanted is int and value > WIRE_MOST:  # the rules reach bots as uint32
                problems.append(f"{option.name} must be at most {WIRE_MOST:,}, not {value}")
        if self.target_score < 1:
            problems.append(f"target_score must be at least 1, not {self.target_score}")
        if self.turn_limit < 1:
            problems.append(f"turn_limit must be at least 1, not {self.turn_limit}")
        if self.round_limit < 1:
            problems.append(f"round_limit must be at least 1, not {self.round_limit}")
        if not 1 <= self.hand_size <= 10:
            problems.append(f"hand_size must be 1..10, not {self.hand_size}")
        if self.stack_two_on_four and not self.stacking:
            problems.append("stack_two_on_four is a kind of stacking (§21): turn stacking on "
                            "too, or stack_two_on_four off")
        if self.lazy_scoring and self.alternative_scoring:
            problems.append("lazy_scoring (§31) scores no points, so it cannot be combined "
                            "with alternative_scoring (§17): choose one")
        if self.rounds < 1:
            problems.append(f"rounds must be at least 1, not {self.rounds}")
        elif self.rounds != LAZY_ROUNDS and not self.lazy_scoring:
            problems.append(f"rounds = {self.rounds} only means something with lazy_scoring "
                            "(§31): turn lazy_scoring on, or leave rounds out")
        if problems:
            raise ValueError("; ".join(problems))

    @cached_property
    def variants(self) -> tuple[str, ...]:
        """The variants in force, in rulebook order (empty for official play)."""
        return tuple(name for name in VARIANTS if getattr(self, name))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleOptions:
        """Build from a mapping, naming any unknown option (for season files and logs)."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(known))
        if unknown:
            hints = []
            for name in unknown:
                close = difflib.get_close_matches(name, known, n=1)
                hints.append(f"{name} (did you mean {close[0]}?)" if close else name)
            raise ValueError(
                f"unknown rule option(s) {', '.join(hints)}; known: {', '.join(sorted(known))}"
            )
        return cls(**data)


def missing_variants(options: RuleOptions, supported: tuple[str, ...] | list[str]
                     ) -> tuple[str, ...]:
    """The variants in force that a bot declaring ``supported`` does not support."""
    return tuple(name for name in options.variants if name not in supported)


def unsupported_message(bot: str, options: RuleOptions, supported: tuple[str, ...] | list[str]
                        ) -> str:
    """Why ``bot`` (its name, version and folder) cannot be seated under ``options``, in one
    line; "" when it can."""
    missing = missing_variants(options, supported)
    if not missing:
        return ""
    return (f"{bot} does not support the variant(s) {', '.join(missing)} in force; its "
            f"bot.toml declares {', '.join(supported) or 'none'} (add them to its "
            "variants = [...] once it handles them, or leave the bot out)")


OFFICIAL = RuleOptions()
