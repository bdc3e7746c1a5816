"""``arena server``: run a league server, and the organiser's commands on its store.

    arena server LEAGUE.toml [--host H] [--port P]   start it (HTTP API, pages, ladder)
    arena server add-author NAME [--league F]        a new author; prints their token once
    arena server rotate-token NAME [--league F]      a new token for them; the old one stops
    arena server advance PHASE [--league F]          open -> frozen -> final, by hand
    arena server withdraw BOT | readmit BOT          take a bot off the ladder, or back
    arena server disqualify BOT --reason TEXT        the reason is shown publicly
    arena server final retry | final close           final matches the host failed three
                                                     times: play them again, or end without

The organiser's commands write the store directly (SQLite allows it while the server
runs); the server sees the change at its next step. ``--league`` defaults to LEAGUE.toml
in the current folder.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from arena.cli.common import port_number
from arena.league.store import StoreError
from arena.processes import raise_descriptor_limit

ACTIONS = ("add-author", "rotate-token", "advance", "withdraw", "disqualify", "readmit",
           "final")


def _fail(message: str) -> int:
    print(f"arena server: {message}", file=sys.stderr)
    return 2


def _server(args: argparse.Namespace) -> int:
    """Run a league server, or one of the organiser's commands on its store."""
    from arena.server.config import LeagueError, load_league

    words: list[str] = args.words
    action = words[0] if words[0] in ACTIONS else None
    argument = {"add-author": "NAME", "rotate-token": "NAME", "advance": "PHASE",
                "final": "retry|close"}
    if action is None:
        if len(words) != 1:
            return _fail(f"expected one league file, or an action ({', '.join(ACTIONS)}); "
                         f"got {' '.join(words)}")
        league_file = words[0]
    else:
        if len(words) != 2:
            return _fail(f"{action} takes one argument: arena server {action} "
                         f"{argument.get(action, 'BOT')}")
        league_file = args.league
    try:
        league = load_league(league_file)
    except LeagueError as error:
        return _fail(str(error))
    try:
        if action is None:
            return _serve(league, args)
        return _act(league, action, words[1], args)
    except StoreError as error:
        return _fail(str(error))


def _act(league: Any, action: str, value: str, args: argparse.Namespace) -> int:
    from arena.server import ladder
    from arena.server.store import Conflict, LeagueStore

    store = LeagueStore(league.store_path)
    try:
        if action == "add-author":
            try:
                token = store.add_author(value)
            except Conflict as error:
                return _fail(str(error))
            print(f"author {value} added; their token (shown only now, keep it secret):")
            print(token)
            return 0
        if action == "rotate-token":
            try:
                token = store.rotate_token(value)
            except Conflict as error:
                return _fail(str(error))
            print(f"a new token for {value} (shown only now, keep it secret; the old one no "
                  "longer works):")
            print(token)
            return 0
        if action == "advance":
            try:
                phase = ladder.advance(store, league, value)
            except ValueError as error:
                return _fail(str(error))
            print(f"league {league.name}: now {phase}")
            return 0
        if action == "final":
            if value == "retry":
                print(f"{store.retry_final()} failed final match(es) scheduled again")
                return 0
            if value == "close":
                print(f"the final ends without its {store.close_final()} failed match(es); "
                      "its keys are published at the server's next step")
                return 0
            return _fail(f"final takes retry or close, not {value!r}")
        if action == "disqualify" and not args.reason:
            return _fail("disqualify needs --reason TEXT (it is shown publicly)")
        verb = {"withdraw": "withdraw", "disqualify": "disqualify", "readmit": "readmit"}[action]
        try:
            store.act(value, verb, args.reason)
        except Conflict as error:
            return _fail(str(error))
        done = {"withdraw": "withdrawn", "disqualify": "disqualified",
                "readmit": "re-admitted"}[action]
        print(f"bot {value} {done}; its results so far are kept")
        return 0
    finally:
        store.close()


def _serve(league: Any, args: argparse.Namespace) -> int:
    import socket

    import uvicorn

    from arena.sandbox import SandboxError, require_containment
    from arena.server.app import create_app

    try:  # before anything listens: every submission would fail its validation
        require_containment(league.sandbox.backend, league.sandbox.trusted_bots)
    except SandboxError as error:
        return _fail(str(error))
    host = args.host or league.host
    port = league.port if args.port is None else args.port
    # The socket first: a port in use is one clear line, before anything starts.
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        return _fail(f"cannot listen on {host}:{port} ({error.strerror}); choose another "
                     "--port (or [league] port)")
    port = listener.getsockname()[1]
    raise_descriptor_limit()  # uvicorn does not time out a request whose headers never end
    from arena.server import events

    events.configure(args.log_format)
    app = create_app(league)
    print(f"league {league.name}: serving on http://{host}:{port}/ (data in {league.data})",
          flush=True)
    token = app.state.organiser
    print(f"league {league.name}: the organiser's token "
          f"{'was drawn into' if token.created else 'is in'} {token.path} (readable by you "
          f"only): it opens http://{host}:{port}/organiser", flush=True)
    events.event("serving", league=league.name, address=f"http://{host}:{port}/")
    config = uvicorn.Config(app, log_level="warning", lifespan="on",
                            timeout_graceful_shutdown=5)
    live = app.state.live

    class Serving(uvicorn.Server):
        """Told to stop, it ends the live event streams first: its graceful shutdown
        waits for every open response, and a stream never ends by itself."""

        def handle_exit(self, sig: int, frame: Any) -> None:
            live.close()
            super().handle_exit(sig, frame)

    server = Serving(config)
    server.run(sockets=[listener])
    return 0 if server.started else 1


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "server", help="run a league server (submissions, validation, ladder, final)",
        description=_server.__doc__, epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("words", nargs="+", metavar="LEAGUE.toml | ACTION ARG")
    parser.add_argument("--league", default="LEAGUE.toml",
                        help="the league file of an action (default: LEAGUE.toml here)")
    parser.add_argument("--host", help="listen here (default: the league file's, 127.0.0.1)")
    parser.add_argument("--port", type=port_number,
                        help="listen on this port (default: the file's; 0: any free port)")
    parser.add_argument("--reason", help="disqualify: why (shown publicly)")
    parser.add_argument("--log-format", choices=("text", "json"), default="text",
                        help="the server's log on stderr: a line per event (submission, "
                             "version stage, match, error), as text or JSON lines")
    parser.set_defaults(run=_server)
