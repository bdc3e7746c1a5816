"""Conversions between rules values (ints, NamedTuples) and protobuf messages."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from arena.protocol import pb
from arena.rules import events as ev
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
)
from arena.rules.cards import CARD_COLOUR, CARD_FACES, CARD_KIND, CARD_RANK, Card, Kind
from arena.rules.observation import Observation
from arena.rules.options import LAZY_ROUNDS, VARIANTS, RuleOptions

# Engine colours are 0..3 (4 = none); wire colours are 1..4 (0 = unspecified).
_WIRE_COLOUR = (pb.COLOUR_RED, pb.COLOUR_YELLOW, pb.COLOUR_GREEN, pb.COLOUR_BLUE,
                pb.COLOUR_UNSPECIFIED)
_WIRE_KIND = {
    Kind.NUMBER: pb.CARD_KIND_NUMBER, Kind.SKIP: pb.CARD_KIND_SKIP,
    Kind.REVERSE: pb.CARD_KIND_REVERSE, Kind.DRAW_TWO: pb.CARD_KIND_DRAW_TWO,
    Kind.WILD: pb.CARD_KIND_WILD, Kind.WILD_DRAW_FOUR: pb.CARD_KIND_WILD_DRAW_FOUR,
    Kind.DRAW_TEN: pb.CARD_KIND_DRAW_TEN,
}
CARD_MESSAGES: tuple[pb.Card, ...] = tuple(
    pb.Card(
        colour=_WIRE_COLOUR[CARD_COLOUR[face]],
        kind=_WIRE_KIND[CARD_KIND[face]],
        number=CARD_RANK[face] if CARD_KIND[face] is Kind.NUMBER else 0,
    )
    for face in range(CARD_FACES)
)
_FACE_BY_KEY = {(m.colour, m.kind, m.number): face for face, m in enumerate(CARD_MESSAGES)}


class ProtocolError(ValueError):
    """A message that does not describe a valid card or action."""


def card_message(card: Card) -> pb.Card:
    return CARD_MESSAGES[card]


def card_from_message(message: pb.Card) -> Card:
    try:
        return _FACE_BY_KEY[(message.colour, message.kind, message.number)]
    except KeyError:
        raise ProtocolError(f"not a card: {message}".strip()) from None


def colour_to_wire(colour: int) -> int:
    return _WIRE_COLOUR[colour]


def colour_from_wire(colour: int) -> int:
    if not 1 <= colour <= 4:
        raise ProtocolError(f"not a colour: {colour}")
    return colour - 1


def _action_message(action: Action) -> pb.Action:
    if action < DRAW:
        return pb.Action(kind=pb.ACTION_KIND_PLAY, card=CARD_MESSAGES[action & ~UNO_CALL],
                         uno=bool(action & UNO_CALL))
    if action == DRAW:
        return pb.Action(kind=pb.ACTION_KIND_DRAW)
    if action == KEEP:
        return pb.Action(kind=pb.ACTION_KIND_KEEP)
    if action == CHALLENGE:
        return pb.Action(kind=pb.ACTION_KIND_CHALLENGE)
    if action == ACCEPT:
        return pb.Action(kind=pb.ACTION_KIND_ACCEPT)
    if action == PASS:
        return pb.Action(kind=pb.ACTION_KIND_PASS)
    if action >= GIVE_CARD:
        return pb.Action(kind=pb.ACTION_KIND_GIVE_CARD, card=CARD_MESSAGES[action - GIVE_CARD])
    if action >= CHOOSE_SEAT:
        return pb.Action(kind=pb.ACTION_KIND_CHOOSE_SEAT, seat=action - CHOOSE_SEAT)
    return pb.Action(kind=pb.ACTION_KIND_CHOOSE_COLOUR,
                     colour=_WIRE_COLOUR[action - CHOOSE_COLOUR])


_ACTION_CODES = [*range(CARD_FACES), *(f | UNO_CALL for f in range(CARD_FACES)),
                 DRAW, KEEP, CHALLENGE, ACCEPT, *(CHOOSE_COLOUR + c for c in range(4)),
                 PASS, *(CHOOSE_SEAT + seat for seat in range(SEATS)),
                 *(GIVE_CARD + f for f in range(CARD_FACES))]
ACTION_MESSAGES: dict[Action, pb.Action] = {a: _action_message(a) for a in _ACTION_CODES}


def action_message(action: Action) -> pb.Action:
    return ACTION_MESSAGES[action]


def action_from_message(message: pb.Action) -> Action:
    kind = message.kind
    if kind == pb.ACTION_KIND_PLAY:
        card = card_from_message(message.card)
        return card | UNO_CALL if message.uno else card
    if kind == pb.ACTION_KIND_DRAW:
        return DRAW
    if kind == pb.ACTION_KIND_KEEP:
        return KEEP
    if kind == pb.ACTION_KIND_CHALLENGE:
        return CHALLENGE
    if kind == pb.ACTION_KIND_ACCEPT:
        return ACCEPT
    if kind == pb.ACTION_KIND_CHOOSE_COLOUR:
        return CHOOSE_COLOUR + colour_from_wire(message.colour)
    if kind == pb.ACTION_KIND_PASS:
        return PASS
    if kind == pb.ACTION_KIND_CHOOSE_SEAT:
        if message.seat >= SEATS:
            raise ProtocolError(f"not a seat: {message.seat}")
        return CHOOSE_SEAT + message.seat
    if kind == pb.ACTION_KIND_GIVE_CARD:
        return GIVE_CARD + card_from_message(message.card)
    raise ProtocolError(f"action of unknown kind {kind}")


# -- rule options and variants ------------------------------------------------------------

VARIANT_WIRE: dict[str, int] = {name: pb.Variant.Value(f"VARIANT_{name.upper()}")
                                for name in VARIANTS}
"""Each variant's ``uno_arena.v1.Variant`` value."""
_VARIANT_NAME = {value: name for name, value in VARIANT_WIRE.items()}


def variants_to_wire(names: Iterable[str]) -> list[int]:
    return [VARIANT_WIRE[name] for name in names]


def variants_from_wire(values: Iterable[int]) -> tuple[str, ...]:
    """Variant names, in rulebook order; values this referee does not know are left out."""
    known = {_VARIANT_NAME[v] for v in values if v in _VARIANT_NAME}
    return tuple(name for name in VARIANTS if name in known)


def rules_message(options: RuleOptions) -> pb.RuleOptions:
    """The options on the wire; ``rounds`` only with lazy scoring, so that an official match
    sends no field of a variant (a bot that knows none reads it whole)."""
    fields = options.to_dict()
    if not options.lazy_scoring:
        del fields["rounds"]
    return pb.RuleOptions(**fields)


def rules_from_message(message: pb.RuleOptions) -> RuleOptions:
    variants = {name: getattr(message, name) for name in VARIANTS}
    return RuleOptions(
        target_score=message.target_score, alternative_scoring=message.alternative_scoring,
        two_player_reverse_is_skip=message.two_player_reverse_is_skip,
        turn_limit=message.turn_limit, round_limit=message.round_limit,
        hand_size=message.hand_size,
        rounds=(message.rounds or LAZY_ROUNDS) if message.lazy_scoring else LAZY_ROUNDS,
        **variants,
    )


def _direction(direction: int) -> int:
    return pb.DIRECTION_CLOCKWISE if direction > 0 else pb.DIRECTION_COUNTER_CLOCKWISE


def observation_message(observation: Observation) -> pb.Observation:
    if observation.variants:  # an official observation carries no field of a variant
        return pb.Observation(
            seat=observation.seat,
            hand=[CARD_MESSAGES[c] for c in observation.hand],
            top_card=CARD_MESSAGES[observation.top_card],
            colour=_WIRE_COLOUR[observation.colour],
            direction=_direction(observation.direction),  # type: ignore[arg-type]
            hand_sizes=observation.hand_sizes,
            draw_pile_size=observation.draw_pile_size,
            discard_pile_size=observation.discard_pile_size,
            dealer=observation.dealer,
            scores=observation.scores,
            round_number=observation.round_number,
            turn=observation.turn,
            variants=variants_to_wire(observation.variants),  # type: ignore[arg-type]
            pending_penalty=observation.pending_penalty,
            partner=observation.partner,
            refills=observation.refills,
        )
    return pb.Observation(
        seat=observation.seat,
        hand=[CARD_MESSAGES[c] for c in observation.hand],
        top_card=CARD_MESSAGES[observation.top_card],
        colour=_WIRE_COLOUR[observation.colour],
        direction=_direction(observation.direction),  # type: ignore[arg-type]
        hand_sizes=observation.hand_sizes,
        draw_pile_size=observation.draw_pile_size,
        discard_pile_size=observation.discard_pile_size,
        dealer=observation.dealer,
        scores=observation.scores,
        round_number=observation.round_number,
        turn=observation.turn,
    )


def observation_from_request(request: pb.DecisionRequest) -> Observation:
    """The engine's Observation from a decision request (what the SDK hands a policy)."""
    message = request.observation
    colour = message.colour
    variants = variants_from_wire(message.variants)
    return Observation(
        seat=message.seat,
        hand=tuple(sorted(card_from_message(c) for c in message.hand)),
        decision=DecisionKind(request.kind),
        current_seat=message.seat,
        top_card=card_from_message(message.top_card),
        colour=colour - 1 if colour else 4,
        direction=1 if message.direction == pb.DIRECTION_CLOCKWISE else -1,
        hand_sizes=tuple(message.hand_sizes),
        draw_pile_size=message.draw_pile_size,
        discard_pile_size=message.discard_pile_size,
        dealer=message.dealer,
        scores=tuple(message.scores),
        round_number=message.round_number,
        turn=message.turn,
        variants=variants,
        pending_penalty=message.pending_penalty,
        partner=message.partner if variants else -1,
        refills=tuple(message.refills),
    )


def decision_request(
    request_id: int, observation: Observation, legal: Sequence[Action],
    deadline_ms: int, time_bank_ms: int,
) -> pb.DecisionRequest:
    assert observation.decision is not None
    return pb.DecisionRequest(
        request_id=request_id,
        kind=int(observation.decision),  # type: ignore[arg-type]
        observation=observation_message(observation),
        legal_actions=[ACTION_MESSAGES[a] for a in legal],
        deadline_ms=deadline_ms,
        time_bank_ms=time_bank_ms,
    )


# -- events -------------------------------------------------------------------------------

def _snake(name: str) -> str:
    return "".join("_" + ch.lower() if ch.isupper() else ch for ch in name).lstrip("_")


def _wire_value(key: str, value: Any) -> Any:
    if key == "card":
        return CARD_MESSAGES[value]
    if key in ("cards", "hand", "other_cards") and isinstance(value, tuple):
        return [CARD_MESSAGES[c] for c in value]
    if key == "hands":
        return [pb.Hand(cards=[CARD_MESSAGES[c] for c in hand]) for hand in value]
    if key == "colour":
        return _WIRE_COLOUR[value]
    if key == "direction":
        return _direction(value)
    if key == "reason":
        return int(value)
    return value


_EVENT_FIELD = {cls: _snake(name) for name, cls in ev.EVENT_TYPES.items()}


def event_message(event: ev.Event) -> pb.Event:
    """One engine event as the wire Event (already filtered with ``seen_by`` if needed)."""
    cls = type(event)
    body = {key: _wire_value(key, value)
            for key, value in zip(event._fields, event, strict=True)}
    message_cls = getattr(pb, cls.__name__)
    return pb.Event(**{_EVENT_FIELD[cls]: message_cls(**body)})


def event_messages(events: Iterable[ev.Event], seat: int) -> list[pb.Event]:
    seen_by = ev.seen_by
    return [event_message(seen_by(e, seat)) for e in events]
