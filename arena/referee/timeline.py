"""What each seat is told: the match's events and faults in order, as each seat sees them
(docs/rules.md §19), encoded for the wire once and sent to each seat once."""

from __future__ import annotations

from arena.protocol import pb
from arena.protocol.wire import event_entry, fault_entry
from arena.referee.faults import Fault, FaultKind
from arena.rules import events as ev

_PUBLIC_REASON = {kind: kind.name.lower().replace("_", " ") for kind in FaultKind}
"""What the other seats are told of a fault: its kind, in words (the reason quotes what
the bot sent, which could carry a message to a partner)."""


class Timeline:
    """The engine's events and the faults, in the order they happened."""

    def __init__(self, players: int) -> None:
        self.items: list[ev.Event | Fault] = []
        self.cursors = [0] * players
        """Per seat, how much of the timeline is encoded for it."""
        self.encoded: list[list[bytes]] = [[] for _ in range(players)]
        """Per seat, the encoded items not sent yet."""

    def extend(self, items: list[ev.Event]) -> None:
        self.items.extend(items)

    def append(self, item: ev.Event | Fault) -> None:
        self.items.append(item)

    def unsent(self, seat: int) -> bytes:
        """What the seat has not been sent, as ``PlayResponse.events`` entries (a response's
        bytes are its events' then its payload's: protobuf writes fields in number order)."""
        self.encode(seat)
        out, self.encoded[seat] = self.encoded[seat], []
        return b"".join(out)

    def encode(self, seat: int) -> None:
        """Encode what the seat has not been sent: done for the other seats while a bot
        thinks, so that their next request encodes only what happened since."""
        items, start = self.items, self.cursors[seat]
        self.cursors[seat] = len(items)
        out = self.encoded[seat]
        for item in items[start:]:
            if isinstance(item, Fault):
                out.append(fault_entry(pb.Fault(
                    seat=item.seat, kind=int(item.kind),  # type: ignore[arg-type]
                    reason=item.reason if item.seat == seat else _PUBLIC_REASON[item.kind],
                    strikes=item.strikes, disqualified=item.disqualified,
                    penalised=item.penalised)))
            else:
                out.append(event_entry(ev.seen_by(item, seat)))  # cached: encoded once
