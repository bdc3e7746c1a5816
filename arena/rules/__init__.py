"""The official UNO rules (docs/rules.md §1-§19) and the house-rule variants (§21-§32): pure, no
I/O, no clock, seeded chance only."""

from arena.rules.actions import (
    ACCEPT,
    CHALLENGE,
    CHOOSE_COLOUR,
    CHOOSE_SEAT,
    DRAW,
    GIVE_CARD,
    KEEP,
    PASS,
    UNO_CALL,
    Action,
    DecisionKind,
    action_name,
    calls_uno,
    choose,
    choose_seat,
    chosen_colour,
    give,
    is_play,
    parse_action,
    play,
    played_card,
)
from arena.rules.cards import (
    CARD_COLOUR,
    CARD_KIND,
    CARD_POINTS,
    CARD_RANK,
    DRAW_TEN,
    NO_COLOUR,
    WILD,
    WILD_DRAW_FOUR,
    Card,
    Colour,
    Kind,
    card_name,
    full_deck,
    parse_card,
    parse_cards,
    points,
)
from arena.rules.match import MAX_PLAYERS, MIN_PLAYERS, Match, arrange_round
from arena.rules.observation import Observation
from arena.rules.options import OFFICIAL, VARIANTS, RuleOptions
from arena.rules.scoring import places
from arena.rules.state import IllegalActionError, Round

__all__ = [
    "ACCEPT", "CARD_COLOUR", "CARD_KIND", "CARD_POINTS", "CARD_RANK", "CHALLENGE",
    "CHOOSE_COLOUR", "CHOOSE_SEAT", "DRAW", "DRAW_TEN", "GIVE_CARD", "KEEP", "MAX_PLAYERS",
    "MIN_PLAYERS", "NO_COLOUR", "OFFICIAL", "PASS", "UNO_CALL", "VARIANTS", "WILD",
    "WILD_DRAW_FOUR", "Action", "Card", "Colour", "DecisionKind", "IllegalActionError",
    "Kind", "Match", "Observation", "Round", "RuleOptions", "action_name", "arrange_round",
    "calls_uno", "card_name", "choose", "choose_seat", "chosen_colour", "full_deck", "give",
    "is_play", "parse_action", "parse_card", "parse_cards", "places", "play", "played_card",
    "points",
]
