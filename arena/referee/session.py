"""A referee session: the seats of one match (or one re-fed decision) served, their bots
started, their hellos awaited, and everything torn down after.

Each seat has a gRPC server of its own, on a private socket, behind the seat's relay
(``arena.referee.relay``), whose socket lies in a folder of its own under an unguessable
name: a bot reaches no other seat's socket, so it can neither crowd out another bot's
connection before its hello nor claim its seat. With a shared ``address`` (``arena play
--listen``, bots started by hand) every seat's bot connects there, with no relay.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import grpc

from arena.processes import owner_tag, raise_descriptor_limit
from arena.referee.connection import Connection
from arena.referee.launch import BotProcess, SeatLauncher
from arena.referee.relay import (
    BUDGET_BYTES,
    FRAME_COST,
    GRANT_BYTES,
    READ_COST,
    STREAM_COST,
    SeatRelay,
)
from arena.referee.servicer import PlayServicer, Seating, start_server
from arena.referee.spec import MatchSpec

HELLO_POLL = 0.05
"""How often the wait for hellos looks whether every missing bot has exited."""
GOODBYE_SECONDS = 1.0
"""How long bots may take to read the match end and hang up before they are killed."""


class Session:
    """``spec``'s seats: ``launchers`` start bots (a seat whose launcher is None is
    started by hand: ``announce`` is told its address and token); the ``in_process``
    seats need no bot. Use as ``async with``."""

    def __init__(self, spec: MatchSpec, launchers: dict[int, SeatLauncher | None],
                 in_process: set[int] | None = None, address: str | None = None,
                 announce: Callable[[int, str, str], None] | None = None) -> None:
        self.spec = spec
        self.launchers = launchers
        self.address = address
        self.announce = announce
        others = in_process or set()
        self.seating = Seating(len(launchers) + len(others), spec.options,
                               spec.limits.hello_timeout)
        self.seating.others.update(others)
        self.processes: dict[int, BotProcess] = {}
        self.folder: Path | None = None
        """The session's socket folder (mode 0711: it cannot be listed)."""
        self.addresses: dict[int, str] = {}
        self.folders: dict[int, Path] = {}
        """Each seat's socket folder, the only one its sandbox is shown."""
        self.servers: list[grpc.aio.Server] = []
        self.relays: list[SeatRelay] = []
        self.finished = False
        """Whether the match ended normally: its bots are then given time to hang up."""

    async def __aenter__(self) -> Session:
        try:
            await self._serve()
            self._start_bots()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def _serve(self) -> None:
        raise_descriptor_limit()  # a bot's connections must not use up the others' descriptors
        # Named after its owner (pid and start time): a start-up sweep removes it if we die.
        folder = self.folder = Path(tempfile.mkdtemp(prefix=f"arena-match-{owner_tag()}-"))
        os.chmod(folder, 0o711)  # bots may run under other uids: they may pass, not list
        hello_timeout = self.spec.limits.hello_timeout
        seats = list(self.launchers)
        if self.address is not None:
            self.servers.append(await start_server(
                PlayServicer(self.seating, None), self.address, hello_timeout))
            self.addresses = dict.fromkeys(seats, self.address)
            self.folders = dict.fromkeys(seats, folder)
            return
        private = folder / f"referee-{secrets.token_hex(8)}"  # where no bot can reach
        private.mkdir(mode=0o700)
        loop = asyncio.get_running_loop()
        for seat in seats:
            seat_folder = folder / f"seat{seat}-{secrets.token_hex(8)}"
            seat_folder.mkdir(mode=0o755)
            upstream = f"unix:{private / f'seat{seat}.sock'}"
            self.servers.append(await start_server(
                PlayServicer(self.seating, seat, seat_folder), upstream, hello_timeout))
            path = seat_folder / "referee.sock"
            relay = SeatRelay(loop, path, upstream, functools.partial(self._flooded, seat))
            self.relays.append(relay)
            self.seating.relays[seat] = relay
            os.chmod(path, 0o777)  # bots may run under other uids
            self.addresses[seat] = f"unix:{path}"
            self.folders[seat] = seat_folder

    def _start_bots(self) -> None:
        tokens = {seat: secrets.token_hex(16) for seat in self.launchers}
        self.seating.tokens = {token: seat for seat, token in tokens.items()}
        for seat, launcher in self.launchers.items():
            address, token = self.addresses[seat], tokens[seat]
            if launcher is not None:
                self.processes[seat] = launcher(
                    {"ARENA_ADDRESS": address, "ARENA_TOKEN": token, "ARENA_SEAT": str(seat)},
                    self.folders[seat])
            elif self.announce is not None:
                self.announce(seat, address, token)
            else:
                print(f"seat {seat}: start your bot with ARENA_ADDRESS={address} "
                      f"ARENA_TOKEN={token}", flush=True)

    def _flooded(self, seat: int, received: int) -> None:
        """The seat's relay cut its bot off for overspending its budget; its stream breaks
        as gRPC finds the connection closed."""
        self.seating.flooded(seat, (
            f"spent more than its budget of {BUDGET_BYTES} ahead of the referee (its "
            f"{received} bytes sent, and {READ_COST} for each read of them, {FRAME_COST} "
            f"for each HTTP/2 frame, {STREAM_COST} for each stream opened; each request "
            f"adds {GRANT_BYTES}); its connection was cut off"))

    def missing(self) -> list[int]:
        """The seats with no bot seated, in process or refused."""
        seating = self.seating
        return [seat for seat in self.launchers
                if seat not in seating.connections and seat not in seating.unsupported]

    def exited(self, seat: int) -> bool:
        process = self.processes.get(seat)
        return process is not None and process.poll() is not None

    async def wait_for_hellos(self, seconds: float | None = None) -> None:
        """Wait until every seat is seated or refused, for ``seconds`` at most (the hello
        timeout), or until every missing bot has exited or been cut off."""
        seating = self.seating
        deadline = time.perf_counter() + (self.spec.limits.hello_timeout if seconds is None
                                          else seconds)
        while not seating.all_in.is_set():
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return
            flooded = {seat for seat, _ in seating.floods}
            if all(seat in flooded or self.exited(seat) for seat in self.missing()):
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(seating.all_in.wait(), min(remaining, HELLO_POLL))

    async def close(self) -> None:
        """End the bots, streams and servers; remove the socket folder."""
        connections = list(self.seating.connections.values())
        try:
            for connection in connections:
                connection.finished.set()
            # Well-behaved bots read the match end and hang up before they are killed (not
            # when the match was cancelled or broke: nobody told them it ended).
            if self.finished:
                await _wait_closed(connections)
            for process in self.processes.values():
                process.kill()
            # Killed bots' streams break now: their handlers return before the servers stop,
            # rather than being cancelled mid-read (which grpc reports as an error).
            await _wait_closed(connections)
            await asyncio.sleep(0)
            await asyncio.gather(*(server.stop(grace=0.5) for server in self.servers))
        finally:
            for relay in self.relays:
                relay.close()
            # Also when cancelled in the clean-up above: no bot, no socket folder outlives
            # the session.
            for process in self.processes.values():
                process.kill()
            if self.folder is not None:
                shutil.rmtree(self.folder, ignore_errors=True)


async def _wait_closed(connections: list[Connection]) -> None:
    waiters = [asyncio.ensure_future(c.closed.wait())
               for c in connections if not c.closed.is_set()]
    if not waiters:
        return
    _, pending = await asyncio.wait(waiters, timeout=GOODBYE_SECONDS)
    for waiter in pending:
        waiter.cancel()
