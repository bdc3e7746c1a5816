"""The referee's memory does not depend on what a bot sends.

Each attack plays a real match between a flooding bot and the greedy sample bot, both
sandboxed (bubblewrap, then fallback), while a thread samples this process's resident
memory, which is the referee's. The match must complete, the other bot untouched, with the
referee's memory growing by at most a few tens of MiB however much the attacker sends.
"""

from __future__ import annotations

import shutil

from referee.conftest import PeakMemory

from arena.referee.faults import FaultKind
from arena.referee.match import INBOX_MESSAGES

from .conftest import BOTS, HostileArena

MIB = 1024 * 1024
GROWTH = 64 * MIB
"""What a match may add to the referee's memory at most (its own work takes a few MiB)."""


def flooder(arena: HostileArena) -> None:
    """This file's hostile bot takes the place of the general one."""
    shutil.copy(BOTS / "flooder.py", arena.hostile_folder / "hostile.py")


def play(arena: HostileArena, mode: str) -> PeakMemory:
    flooder(arena)
    with PeakMemory() as memory:
        arena.play(mode)
    arena.assert_match_completed()
    arena.assert_none_left()
    return memory


def test_a_flood_of_messages_is_cut_off(arena: HostileArena) -> None:
    """Whether the flood overflows the seat's inbox before the seat is first asked (FLOODED)
    or its unasked messages strike it out first (OUT_OF_TURN, MALFORMED) depends on timing;
    either way it is disqualified and the referee holds at most INBOX_BYTES of it, where an
    unbounded inbox grows by hundreds of MiB a second (tests/referee has the exact case)."""
    memory = play(arena, "flood")
    assert arena.outcome is not None
    hostile = arena.outcome.seats[0]
    assert hostile.disqualified
    assert hostile.faults[-1].kind in (FaultKind.FLOODED, FaultKind.STRIKE_LIMIT)
    # How its stream ended depends on timing: cut off by its inbox (the stream ended,
    # saying why), or its connection closed, by its seat's byte budget
    # (arena.referee.relay) or by the match's teardown; or it was killed at the match's
    # end before it could say.
    ended = arena.reports().get("end", {"result": "match end"})["result"]
    assert ended == "match end" or (
        ended.startswith("RESOURCE_EXHAUSTED") and f"{INBOX_MESSAGES} messages" in ended) or (
        ended.startswith("UNAVAILABLE")), ended
    assert memory.growth < GROWTH, f"the referee grew by {memory.growth / MIB:.0f} MiB"


def test_silent_streams_neither_fill_memory_nor_keep_anyone_out(arena: HostileArena) -> None:
    """Before its hello the bot opens 300 connections, each with a stream that never says
    hello. A seat's socket holds one connection at a time: one of them is kept (its stream
    waits for a hello), the others are reset; the bot's own stream, opened after them,
    finds its seat's connection taken, and the bot is disqualified for no hello. It keeps
    out no one but itself: the opponent plays untouched, and the referee's memory stays
    flat."""
    memory = play(arena, "silent-streams")
    assert arena.outcome is not None
    hostile = arena.outcome.seats[0]
    assert not hostile.connected and [f.kind for f in hostile.faults] == [FaultKind.NO_HELLO]
    streams = arena.reports()["silent streams"]
    assert streams["started"] == 300 and streams["still_open"] <= 1, streams
    assert memory.growth < GROWTH, f"the referee grew by {memory.growth / MIB:.0f} MiB"


def test_huge_metadata_is_refused(arena: HostileArena) -> None:
    """A megabyte of metadata before the hello (gRPC takes 8 KB): more than a seat may send
    ahead of being asked (arena.referee.relay), so the bot is cut off there, FLOODED, before
    gRPC holds any of it; its opponent plays on."""
    memory = play(arena, "huge-metadata")
    assert arena.outcome is not None
    hostile, other = arena.outcome.seats
    assert [f.kind for f in hostile.faults] == [FaultKind.FLOODED], hostile.faults
    assert "more than its budget" in hostile.faults[0].reason
    assert other.faults == []
    # Cut off, it is not waited for: the match may end (and its sandbox, throttled off
    # turn, be killed) before it says what it saw; when it does, it was refused.
    seen = arena.reports().get("huge metadata")
    assert seen is None or seen["result"] not in ("accepted", "stream ended"), seen
    assert memory.growth < GROWTH
