"""The referee's hot path on the wire: a decision request and its events as protobuf bytes,
assembled from fragments serialized once, byte for byte what ``SerializeToString`` gives.

Building a ``DecisionRequest`` message card by card and serializing it cost the referee
about a third of its own time per decision (``benchmarks/referee.py``). Protobuf's
encoding is a concatenation: fields in number order, each a tag then its value, a repeated
field one tagged entry per element. So every card, top card and legal action is serialized
once here, with its tag, by protobuf itself, and a request is joined from those fragments
and a few varints. ``tests/test_protocol_wire.py`` checks the bytes against
``decision_request(...).SerializeToString()`` over many matches, variants included.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from arena.protocol import pb
from arena.protocol.convert import (
    ACTION_MESSAGES,
    CARD_MESSAGES,
    colour_to_wire,
    event_message,
    observation_message,
)
from arena.rules import events as ev
from arena.rules.actions import Action
from arena.rules.observation import Observation

_SMALL = 512
"""Varints below this are precomputed (hand sizes, pile sizes, seats, most scores)."""


def varint(value: int) -> bytes:
    """A protobuf varint; a negative value as its 64-bit two's complement (int32 rules)."""
    if 0 <= value < _SMALL:
        return _VARINTS[value]
    return _large_varint(value + (1 << 64) if value < 0 else value)


@functools.lru_cache(maxsize=256)
def _large_varint(value: int) -> bytes:
    """Cached: a match repeats its few large values (the deadline, the time bank)."""
    return _encode_varint(value)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_VARINTS = tuple(_encode_varint(v) for v in range(_SMALL))


def _tag(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def _scalar(tag: bytes, value: int) -> bytes:
    """A singular proto3 scalar: absent when zero."""
    return tag + varint(value) if value else b""


def _packed(tag: bytes, values: Sequence[int]) -> bytes:
    """A packed repeated scalar: absent when empty."""
    if not values:
        return b""
    body = b"".join([varint(v) for v in values])
    return tag + varint(len(body)) + body


def _submessage(tag: bytes, body: bytes) -> bytes:
    return tag + varint(len(body)) + body


# Observation's fields (referee.proto), by number; the variants' fields (13-16) are never
# sent in official play, and a variant observation is built as a message.
_SEAT, _DIRECTION = _tag(1, 0), _tag(5, 0)
_HAND_SIZES, _DRAW_PILE, _DISCARD_PILE = _tag(6, 2), _tag(7, 0), _tag(8, 0)
_DEALER, _SCORES, _ROUND, _TURN = _tag(9, 0), _tag(10, 2), _tag(11, 0), _tag(12, 0)
# DecisionRequest's.
_REQUEST_ID, _KIND, _OBSERVATION = _tag(1, 0), _tag(2, 0), _tag(3, 2)
_DEADLINE, _BANK = _tag(5, 0), _tag(6, 0)

_HAND_ENTRY = tuple(pb.Observation(hand=[card]).SerializeToString() for card in CARD_MESSAGES)
"""Observation field 2 (``hand``), one card, tagged."""
_TOP_CARD = tuple(pb.Observation(top_card=card).SerializeToString() for card in CARD_MESSAGES)
_LEGAL_ENTRY = {action: pb.DecisionRequest(legal_actions=[message]).SerializeToString()
                for action, message in ACTION_MESSAGES.items()}
"""DecisionRequest field 4 (``legal_actions``), one action, tagged."""
_COLOUR = tuple(pb.Observation(colour=colour_to_wire(colour)).SerializeToString()  # type: ignore[arg-type]
                for colour in range(5))
"""Observation field 4 (``colour``) for each engine colour (4: none yet, not sent)."""
_CLOCKWISE = _DIRECTION + varint(pb.DIRECTION_CLOCKWISE)
_COUNTER_CLOCKWISE = _DIRECTION + varint(pb.DIRECTION_COUNTER_CLOCKWISE)


def _field_table(tag: bytes) -> tuple[bytes, ...]:
    """A scalar field's bytes for each value below ``_SMALL`` (absent when zero): one
    lookup on the hot path instead of a varint's encoding."""
    return (b"", *(tag + _VARINTS[value] for value in range(1, _SMALL)))


def _field(table: tuple[bytes, ...], tag: bytes, value: int) -> bytes:
    """``_scalar(tag, value)`` from the field's table, for the values it holds."""
    return table[value] if 0 <= value < _SMALL else _scalar(tag, value)


_SEAT_FIELD, _DRAW_PILE_FIELD = _field_table(_SEAT), _field_table(_DRAW_PILE)
_DISCARD_PILE_FIELD, _DEALER_FIELD = _field_table(_DISCARD_PILE), _field_table(_DEALER)
_ROUND_FIELD, _TURN_FIELD = _field_table(_ROUND), _field_table(_TURN)
_KIND_FIELD = _field_table(_KIND)


@functools.lru_cache(maxsize=4096)
def _hand_sizes_field(sizes: tuple[int, ...]) -> bytes:
    """Cached: a match's hand sizes take few distinct values."""
    return _packed(_HAND_SIZES, sizes)


@functools.lru_cache(maxsize=1024)
def _scores_field(scores: tuple[int, ...]) -> bytes:
    """Cached: the scores change once a round."""
    return _packed(_SCORES, scores)


@functools.lru_cache(maxsize=256)
def _clock_fields(deadline_ms: int, time_bank_ms: int) -> bytes:
    """Cached: a match's deadline is fixed and its time bank rarely changes."""
    return _scalar(_DEADLINE, deadline_ms) + _scalar(_BANK, time_bank_ms)


def observation_bytes(observation: Observation) -> bytes:
    """``observation_message(observation).SerializeToString()``, from cached fragments."""
    if observation.variants:
        # The variants' observation adds fields that official play never sends; it is rare
        # enough to build as a message (it stays exact, and it is not the hot path).
        wire: bytes = observation_message(observation).SerializeToString()
        return wire
    hand_entry = _HAND_ENTRY
    return b"".join((
        _field(_SEAT_FIELD, _SEAT, observation.seat),
        b"".join([hand_entry[card] for card in observation.hand]),
        _TOP_CARD[observation.top_card],
        _COLOUR[observation.colour],
        _CLOCKWISE if observation.direction > 0 else _COUNTER_CLOCKWISE,
        _hand_sizes_field(observation.hand_sizes),
        _field(_DRAW_PILE_FIELD, _DRAW_PILE, observation.draw_pile_size),
        _field(_DISCARD_PILE_FIELD, _DISCARD_PILE, observation.discard_pile_size),
        _field(_DEALER_FIELD, _DEALER, observation.dealer),
        _scores_field(observation.scores),
        _field(_ROUND_FIELD, _ROUND, observation.round_number),
        _field(_TURN_FIELD, _TURN, observation.turn),
    ))


def decision_request_bytes(request_id: int, observation: Observation,
                           legal: Sequence[Action], deadline_ms: int,
                           time_bank_ms: int) -> bytes:
    """``decision_request(...).SerializeToString()`` (arena.protocol.convert), from cached
    fragments."""
    assert observation.decision is not None
    legal_entry = _LEGAL_ENTRY
    return b"".join((
        _scalar(_REQUEST_ID, request_id),
        _KIND_FIELD[observation.decision],
        _submessage(_OBSERVATION, observation_bytes(observation)),
        b"".join([legal_entry[action] for action in legal]),
        _clock_fields(deadline_ms, time_bank_ms),
    ))


_RESPONSE_REQUEST = _tag(3, 2)
"""``PlayResponse.decision_request``."""


@functools.lru_cache(maxsize=4096, typed=True)  # typed: events of two kinds may be equal tuples
def event_entry(event: ev.Event) -> bytes:
    """One event as a tagged entry of ``PlayResponse.events``: a response's events are the
    concatenation of their entries. Cached: the same events recur (a card played, a draw
    seen from outside) within a match and across a worker's matches."""
    if (type(event) is ev.Drew or type(event) is ev.Dealt) and event.cards:
        # A seat's own draw or deal, shown with its cards, is mostly new: joined from
        # fragments, not built as a message (a third of the referee's time on events in
        # a match's rhythm, measured).
        return _cards_entry(event)
    entry: bytes = pb.PlayResponse(events=[event_message(event)]).SerializeToString()
    return entry


_EVENTS = _tag(1, 2)
"""``PlayResponse.events``."""
_DEALT, _DREW = _tag(4, 2), _tag(10, 2)
"""``Event.dealt`` and ``Event.drew``."""
# Dealt's and Drew's fields: seat 1, cards 2 (one Card message each), amount 3; Drew's
# reason 4.
_CARDS_SEAT, _AMOUNT, _REASON = _tag(1, 0), _tag(3, 0), _tag(4, 0)
_CARDS_SEAT_FIELD = _field_table(_CARDS_SEAT)
_CARD_ENTRY = tuple(pb.Drew(cards=[card]).SerializeToString() for card in CARD_MESSAGES)
"""Field 2 (``cards``) of Dealt and Drew, one card, tagged."""


def _cards_entry(event: ev.Drew | ev.Dealt) -> bytes:
    card_entry = _CARD_ENTRY
    drew = type(event) is ev.Drew
    body = b"".join((
        _field(_CARDS_SEAT_FIELD, _CARDS_SEAT, event.seat),
        b"".join([card_entry[card] for card in event.cards]),
        _scalar(_AMOUNT, event.amount),
        _scalar(_REASON, int(event.reason)) if drew else b"",  # type: ignore[union-attr]
    ))
    return _submessage(_EVENTS, _submessage(_DREW if drew else _DEALT, body))


def fault_entry(fault: pb.Fault) -> bytes:
    """A fault, as a tagged entry of ``PlayResponse.events``."""
    entry: bytes = pb.PlayResponse(events=[pb.Event(fault=fault)]).SerializeToString()
    return entry


def request_entry(request: bytes) -> bytes:
    """A serialized ``DecisionRequest`` as ``PlayResponse.decision_request``."""
    return _submessage(_RESPONSE_REQUEST, request)
