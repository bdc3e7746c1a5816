"""The person's seat as a protocol client: it joins the referee as any bot does (its seat's
socket, its one-time token, a hello), tells the table what it hears, and sends the
person's choices as decisions."""

from __future__ import annotations

from typing import Any

import grpc

from arena.human.table import FaultHeard, Table
from arena.protocol import PROTOCOL_VERSION, pb, pb_grpc
from arena.protocol.convert import (
    action_from_message,
    action_message,
    card_from_message,
    observation_from_request,
    variants_to_wire,
)
from arena.referee.faults import FaultKind
from arena.rules import events as ev
from arena.rules.actions import Action
from arena.rules.options import VARIANTS

NAME, VERSION = "human", "browser"
"""What the seat's hello says (the log names the seat as ``arena play`` entered it)."""

_EVENT_CLASSES: dict[str, Any] = {field.name: ev.EVENT_TYPES[field.message_type.name]
                  for field in pb.Event.DESCRIPTOR.oneofs_by_name["event"].fields
                  if field.message_type.name in ev.EVENT_TYPES}
"""The engine's event type of each field of ``Event``'s oneof (all but ``fault``)."""


def _rules_value(field: Any, value: Any) -> Any:
    """One field of a wire event as the engine's event holds it."""
    if field.message_type is not None:
        if field.message_type.name == "Hand":
            return tuple(tuple(card_from_message(c) for c in hand.cards) for hand in value)
        if field.is_repeated:
            return tuple(card_from_message(c) for c in value)
        return card_from_message(value)
    if field.enum_type is not None:
        name = field.enum_type.name
        if name == "Colour":
            return value - 1 if value else 4
        if name == "Direction":
            return 1 if value == pb.DIRECTION_CLOCKWISE else -1
        if name == "DrawReason":
            return ev.DrawReason(value)
    return tuple(value) if field.is_repeated else value


def event_from_message(message: pb.Event) -> ev.Event | FaultHeard | None:
    """A wire event as the engine's event (or a fault, in words); None for a kind this
    side does not know."""
    which = message.WhichOneof("event")
    if which == "fault":
        fault = message.fault
        try:
            kind = FaultKind(fault.kind).name.lower().replace("_", " ")
        except ValueError:
            kind = "fault"
        outcome = "disqualified" if fault.disqualified else f"strike {fault.strikes}"
        return FaultHeard(fault.seat, f"{kind} ({outcome}): {fault.reason}")
    cls = _EVENT_CLASSES.get(which or "")
    if cls is None:
        return None
    body = getattr(message, which)
    fields = body.DESCRIPTOR.fields_by_name
    values = [_rules_value(fields[name], getattr(body, name)) for name in cls._fields]
    event: ev.Event = cls(*values)
    return event


def _decision(request_id: int, action: Action, legal: list[Action]) -> pb.Decision:
    if action in legal:
        return pb.Decision(request_id=request_id, action_index=legal.index(action))
    # A play without the UNO call the legal list carries (or with one it does not): legal,
    # at its §14 cost, sent as the action itself.
    return pb.Decision(request_id=request_id, action=action_message(action))


async def play_seat(address: str, token: str, table: Table) -> None:
    """Play the seat at ``address`` with ``token`` to the match's end, the person deciding
    through ``table``. A broken stream is told to the table, never raised."""
    hello = pb.PlayRequest(hello=pb.Hello(
        token=token, bot_name=NAME, bot_version=VERSION, protocol_version=PROTOCOL_VERSION,
        variants=variants_to_wire(VARIANTS)))  # type: ignore[arg-type]
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]
            call = stub.Play()
            await call.write(hello)
            while True:
                response = await call.read()
                if response is grpc.aio.EOF:
                    table.lose("the referee ended the stream before the match ended")
                    return
                heard = [event_from_message(message) for message in response.events]
                table.hear([item for item in heard if item is not None])
                kind = response.WhichOneof("message")
                if kind == "match_start":
                    players = sorted(response.match_start.players, key=lambda p: p.seat)
                    table.start([player.name for player in players])
                elif kind == "decision_request":
                    request = response.decision_request
                    legal = [action_from_message(a) for a in request.legal_actions]
                    action = await table.ask(request.request_id,
                                             observation_from_request(request), legal)
                    await call.write(pb.PlayRequest(
                        decision=_decision(request.request_id, action, legal)))
                elif kind == "match_end":
                    end = response.match_end
                    table.end(list(end.scores), list(end.places), end.rounds)
                    await call.done_writing()  # hang up: the referee can finish at once
                    return
    except grpc.aio.AioRpcError as error:
        table.lose(f"{error.code().name}: {error.details()}")
