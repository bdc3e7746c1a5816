"""One match with a person at the table: the referee, the person's protocol client and the
page's server, together on one event loop, until the person leaves."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import webbrowser
from collections.abc import Callable, Generator
from pathlib import Path

import uvicorn

from arena.human.app import HOST, Gate, create_app
from arena.human.client import play_seat
from arena.human.table import Table
from arena.referee.match import MatchOutcome, MatchSpec, Seat, run_match

SHUTDOWN_SECONDS = 2
"""How long the page's server waits for open requests as it stops."""


class _Server(uvicorn.Server):
    """uvicorn's server, leaving Ctrl-C to the event loop's runner: it cancels the match
    and the server together, and the referee tears the bots down."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def listen() -> socket.socket:
    """A socket on 127.0.0.1 (loopback only), on a free port the system picks."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind((HOST, 0))
    return listener


async def host_match(spec: MatchSpec, seats: list[Seat], seat: int, pages: Path,
                     render: Callable[[], Path | None], *, open_browser: bool = True,
                     say: Callable[[str], None] = print) -> MatchOutcome:
    """Play ``spec`` with ``seats`` (``seats[seat]`` None: the person's), serving the
    person's page until they leave it. ``render()`` writes the match's pages into
    ``pages`` once the match is over and gives its replay page's path (None: not written);
    ``say`` tells the terminal where the page is."""
    table = Table(seat)
    gate = Gate()
    listener = listen()
    port = listener.getsockname()[1]
    server = _Server(uvicorn.Config(create_app(table, gate, pages, port), log_level="warning",
                                    lifespan="off",
                                    timeout_graceful_shutdown=SHUTDOWN_SECONDS))
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    clients: list[asyncio.Task[None]] = []
    try:
        while not server.started:
            if serving.done():
                serving.result()  # its error, if it could not start
                raise RuntimeError("the page's server stopped before it started")
            await asyncio.sleep(0.01)
        address = f"http://{HOST}:{port}/?token={gate.token}"
        say(f"your seat is {seat}: play at {address} (it opens in one browser, once)")
        if open_browser:
            # A browser of the terminal may hold the call until it exits.
            threading.Thread(target=webbrowser.open, args=(address,), daemon=True).start()

        def announce(_: int, seat_address: str, token: str) -> None:
            clients.append(asyncio.create_task(play_seat(seat_address, token, table)))

        outcome = await run_match(spec, seats, announce=announce)
        await asyncio.gather(*clients)
        replay = await asyncio.to_thread(render)
        if replay is None:
            table.written(None, "The match is over; its pages could not be written (the "
                                "terminal says why).")
        else:
            table.written(f"/pages/{replay.relative_to(pages).as_posix()}",
                          "The match is over.")
        say("the match is over: its replay is linked from the page; leave the table there "
            "(or press Ctrl-C) to end")
        await table.left.wait()
        return outcome
    finally:
        for client in clients:
            client.cancel()
        table.left.set()  # the pages' event streams end, so the server can stop
        table.bump()
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await serving
