"""The in-process match runner: policies play a match with no processes and no network."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.bots.policies import Policy
from arena.rules.events import Event
from arena.rules.match import Match
from arena.rules.options import OFFICIAL, RuleOptions
from arena.rules.seeds import MatchSeed, deck_seed

__all__ = ["MatchResult", "deck_seed", "play_match"]


@dataclass(frozen=True)
class MatchResult:
    scores: tuple[int, ...]
    places: tuple[int, ...]
    rounds: int
    decisions: int
    round_limit_reached: bool
    events: tuple[Event, ...]

    @property
    def winners(self) -> tuple[int, ...]:
        return tuple(seat for seat, place in enumerate(self.places) if place == 1)


def play_match(
    policies: Sequence[Policy] | Sequence[Callable[[int], Policy]],
    seed: int | MatchSeed,
    options: RuleOptions = OFFICIAL,
    *,
    build: bool = False,
) -> MatchResult:
    """Play one match. With ``build=True``, ``policies`` are factories called with each
    seat's seed (as the referee gives a bot), so a match is a pure function of ``seed``
    (a public seed, or a match key as in a season)."""
    chance = seed if isinstance(seed, MatchSeed) else MatchSeed.public(seed)
    seats: list[Policy] = (
        [factory(chance.seat_seed(seat)) for seat, factory in enumerate(policies)]  # type: ignore[operator]
        if build
        else list(policies)  # type: ignore[arg-type]
    )
    match = Match(len(seats), chance.deck_rng(), options)
    decisions = 0
    while not match.is_over:
        seat = match.current_seat
        action = seats[seat].decide(match.observation(seat), match.legal_actions())
        match.apply(action)
        decisions += 1
    return MatchResult(
        tuple(match.scores), match.places, match.rounds_played, decisions,
        match.round_limit_reached, tuple(match.events),
    )
