"""The constant-size view of a seat for learning: its observation as a vector, and one
discrete action space for every decision of the official rules and the variants.

The observation vector (``OBSERVATION_SIZE`` float32 values, laid out by ``FIELDS``) holds
what the seat's §19 observation holds and nothing more. Seat fields are *relative*: entry
``k`` of a per-seat field is the seat ``k`` places clockwise from the observing seat (entry
0 is itself); entries past the table's size stay 0, and ``seats`` marks the real ones.

The action space has ``ACTION_SIZE`` indices, the same at every table size:

==========  =================================================================
index       engine action
==========  =================================================================
0-54        play the card of that face (§8); the UNO call (§14) as listed
55          draw (§9)
56          keep the drawn card (§9)
57          challenge the Wild Draw Four (§13, §21)
58          accept the Wild Draw Four or the pending penalty (§13, §21)
59-62       name red, yellow, green, blue (§12)
63          pass: a jump-in (§25) or an exchange (§24)
64-72       the seat 1-9 places clockwise: the swap (§23) or the exchange (§24)
73-127      give the card of that face (§24)
==========  =================================================================

A play that leaves its player one card is listed by the engine with the UNO call attached
(§14); the same play without the call is legal too, but only costs 2 cards. Both map to
the card's index, and the index maps back to the listed play, with the call. No other two
legal actions share an index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from gymnasium import spaces

from arena.rules.actions import (
    ACCEPT,
    CHALLENGE,
    CHOOSE_COLOUR,
    CHOOSE_SEAT,
    DRAW,
    GIVE_CARD,
    KEEP,
    PASS,
    SEATS,
    UNO_CALL,
    Action,
    DecisionKind,
    played_card,
)
from arena.rules.cards import CARD_FACES, COLOUR_COUNT, NO_COLOUR, full_deck
from arena.rules.match import MAX_PLAYERS
from arena.rules.observation import Observation
from arena.rules.options import VARIANTS, RuleOptions

# -- the action space ---------------------------------------------------------------------

PLAY_INDEX: Final = 0
DRAW_INDEX: Final = CARD_FACES
KEEP_INDEX: Final = DRAW_INDEX + 1
CHALLENGE_INDEX: Final = KEEP_INDEX + 1
ACCEPT_INDEX: Final = CHALLENGE_INDEX + 1
COLOUR_INDEX: Final = ACCEPT_INDEX + 1
PASS_INDEX: Final = COLOUR_INDEX + COLOUR_COUNT
SEAT_INDEX: Final = PASS_INDEX + 1
"""The seat 1 place clockwise; seat offsets run 1 to ``MAX_PLAYERS - 1``."""
GIVE_INDEX: Final = SEAT_INDEX + MAX_PLAYERS - 1
ACTION_SIZE: Final = GIVE_INDEX + CARD_FACES
"""128: every action of every decision kind, official and variant."""

_ONE_INDEX: Final = {DRAW: DRAW_INDEX, KEEP: KEEP_INDEX, CHALLENGE: CHALLENGE_INDEX,
                     ACCEPT: ACCEPT_INDEX, PASS: PASS_INDEX}


def action_index(action: Action, seat: int, players: int) -> int:
    """The index of an engine action taken by ``seat`` at a table of ``players``."""
    if action < DRAW:
        return PLAY_INDEX + played_card(action)
    single = _ONE_INDEX.get(action)
    if single is not None:
        return single
    if CHOOSE_COLOUR <= action < CHOOSE_COLOUR + COLOUR_COUNT:
        return COLOUR_INDEX + action - CHOOSE_COLOUR
    if CHOOSE_SEAT <= action < CHOOSE_SEAT + SEATS:
        offset = (action - CHOOSE_SEAT - seat) % players
        if offset == 0:
            raise ValueError(f"seat {seat} cannot choose itself")
        return SEAT_INDEX + offset - 1
    if GIVE_CARD <= action < GIVE_CARD + CARD_FACES:
        return GIVE_INDEX + action - GIVE_CARD
    raise ValueError(f"{action} is not an action code")


def legal_indices(legal: Sequence[Action], seat: int, players: int) -> dict[int, Action]:
    """Each legal action's index, mapped to the action (the engine lists each play once,
    with or without the call, so no two listed actions share an index)."""
    indices: dict[int, Action] = {}
    for action in legal:
        if action < DRAW:  # a play, the hot case: its card is its index
            index = PLAY_INDEX + (action & ~UNO_CALL)
        else:
            index = action_index(action, seat, players)
        if index in indices:
            raise ValueError(f"actions {indices[index]} and {action} share index {index}")
        indices[index] = action
    return indices


def action_mask(indices: dict[int, Action] | Sequence[int]) -> np.ndarray:
    """The 0/1 mask (int8) over the action space with the given indices set."""
    mask = np.zeros(ACTION_SIZE, dtype=np.int8)
    for index in indices:  # a few single writes beat one write through a list
        mask[index] = 1
    return mask


def action_space() -> spaces.Discrete:
    return spaces.Discrete(ACTION_SIZE)


# -- the observation vector -----------------------------------------------------------------

DECK_MOST: Final = len(full_deck(draw_ten=True))
"""112: no pile, hand or penalty counts more cards than the largest deck (§28)."""
SCORE_CAP: Final = 2.0
"""Scores are fractions of the target, and a match ends once one reaches 1: only a last
round's points carry a score past 2, and it shows as 2."""
COPIES: Final = tuple(full_deck(draw_ten=True).count(face) for face in range(CARD_FACES))
"""How many cards of each face the largest deck holds: the most a hand can count."""
REFILL_MOST: Final = 6

FIELDS: Final[tuple[tuple[str, int, str], ...]] = (
    ("hand", CARD_FACES, "cards of each face (0-54) in the seat's hand"),
    ("top_card", CARD_FACES, "one-hot: the face on top of the discard pile"),
    ("colour", COLOUR_COUNT + 1,
     "one-hot: red, yellow, green, blue, or none (a turned Wild not yet named, §7)"),
    ("seats", MAX_PLAYERS, "1 for each seat at the table, by relative place"),
    ("hand_sizes", MAX_PLAYERS, "cards in each seat's hand, by relative place"),
    ("scores", MAX_PLAYERS,
     "each seat's score over the target score (§31: rounds won over the rounds), "
     "by relative place, at most 2"),
    ("acting", MAX_PLAYERS, "one-hot: the seat whose decision it is, by relative place"),
    ("decision", len(DecisionKind),
     "one-hot: this seat's decision kind (1-8); all 0 when it is not this seat's decision"),
    ("dealer", MAX_PLAYERS, "one-hot: the dealer, by relative place"),
    ("clockwise", 1, "1 when play goes clockwise, 0 counter-clockwise"),
    ("draw_pile", 1, "cards in the draw pile"),
    ("discard_pile", 1, "cards in the discard pile"),
    ("round", 1, "the round's number over the match's most rounds, at most 1"),
    ("turn", 1, "turns started in the round over the turn limit (§18), at most 1"),
    ("penalty", 1, "cards of the pending draw penalty (§21, §22)"),
    ("partner", MAX_PLAYERS, "one-hot: the other seat of this seat's exchange (§24)"),
    ("refills", MAX_PLAYERS, "cards each seat draws when it next empties its hand (§30)"),
    ("variants", len(VARIANTS), "1 for each variant in force, in rulebook order"),
)
"""The observation vector's fields in order: name, width, meaning."""


def _slices() -> dict[str, slice]:
    found, start = {}, 0
    for name, width, _ in FIELDS:
        found[name] = slice(start, start + width)
        start += width
    return found


SLICES: Final = _slices()
"""Each field's slice of the observation vector."""
OBSERVATION_SIZE: Final = SLICES[FIELDS[-1][0]].stop
"""212 values."""


def _highs() -> np.ndarray:
    high = np.ones(OBSERVATION_SIZE, dtype=np.float32)
    high[SLICES["hand"]] = COPIES
    high[SLICES["scores"]] = SCORE_CAP
    for name in ("hand_sizes", "draw_pile", "discard_pile", "penalty"):
        high[SLICES[name]] = DECK_MOST
    high[SLICES["refills"]] = REFILL_MOST
    return high


OBSERVATION_HIGH: Final = _highs()
"""The largest value of each entry (the smallest is 0)."""


def observation_space() -> spaces.Dict:
    """``{"observation": Box(0, OBSERVATION_HIGH), "action_mask": MultiBinary(128)}``."""
    return spaces.Dict({
        "observation": spaces.Box(np.zeros(OBSERVATION_SIZE, dtype=np.float32),
                                  OBSERVATION_HIGH.copy(), dtype=np.float32),
        "action_mask": spaces.MultiBinary(ACTION_SIZE),
    })


_HAND: Final = SLICES["hand"].start
_TOP: Final = SLICES["top_card"].start
_COLOUR: Final = SLICES["colour"].start
_SEATS: Final = SLICES["seats"].start
_SIZES: Final = SLICES["hand_sizes"].start
_SCORES: Final = SLICES["scores"].start
_ACTING: Final = SLICES["acting"].start
_DECISION: Final = SLICES["decision"].start
_DEALER: Final = SLICES["dealer"].start
_SCALARS: Final = slice(SLICES["clockwise"].start, SLICES["penalty"].stop)
"""clockwise, draw_pile, discard_pile, round, turn, penalty: neighbours in ``FIELDS``."""
_PARTNER: Final = SLICES["partner"].start
_REFILLS: Final = SLICES["refills"].start
_VARIANTS: Final = SLICES["variants"]


class Encoder:
    """Observation vectors for one table size and rule set (the scales come from both)."""

    def __init__(self, players: int, options: RuleOptions) -> None:
        if not 2 <= players <= MAX_PLAYERS:
            raise ValueError(f"UNO is for 2 to {MAX_PLAYERS} players, not {players}")
        self.players = players
        self.options = options
        lazy = options.lazy_scoring
        self._score_scale = 1.0 / (options.rounds if lazy else options.target_score)
        most_rounds = min(options.rounds, options.round_limit) if lazy else options.round_limit
        self._round_scale = 1.0 / most_rounds
        self._turn_scale = 1.0 / options.turn_limit
        template = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        template[_SEATS:_SEATS + players] = 1
        template[_VARIANTS] = [name in options.variants for name in VARIANTS]
        self._template = template

    def encode(self, observation: Observation) -> np.ndarray:
        """The vector of ``observation`` (a fresh float32 array of ``OBSERVATION_SIZE``).

        Written entry by entry or slice by slice: numpy's fancy indexing with a list costs
        more than a dozen single writes."""
        vector = self._template.copy()
        players = self.players
        seat = observation.seat
        colour = observation.colour
        ones = [_TOP + observation.top_card,
                _COLOUR + (colour if colour < NO_COLOUR else COLOUR_COUNT),
                _DEALER + (observation.dealer - seat) % players]
        if observation.current_seat >= 0:
            ones.append(_ACTING + (observation.current_seat - seat) % players)
        if observation.decision is not None:
            ones.append(_DECISION + observation.decision - 1)
        if observation.partner >= 0:
            ones.append(_PARTNER + (observation.partner - seat) % players)
        for index in ones:
            vector[index] = 1
        counts: dict[int, int] = {}
        for card in observation.hand:
            counts[card] = counts.get(card, 0) + 1
        for card, count in counts.items():
            vector[_HAND + card] = count
        sizes = observation.hand_sizes
        vector[_SIZES:_SIZES + players] = sizes[seat:] + sizes[:seat]
        scores = observation.scores
        scale = self._score_scale
        vector[_SCORES:_SCORES + players] = [
            min(score * scale, SCORE_CAP) for score in scores[seat:] + scores[:seat]]
        vector[_SCALARS] = (
            observation.direction > 0, observation.draw_pile_size,
            observation.discard_pile_size, min(observation.round_number * self._round_scale, 1.0),
            min(observation.turn * self._turn_scale, 1.0),
            min(observation.pending_penalty, DECK_MOST))
        refills = observation.refills
        if refills:
            vector[_REFILLS:_REFILLS + players] = refills[seat:] + refills[:seat]
        return vector
