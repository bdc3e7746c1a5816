"""An author's commands on a league server besides ``arena submit``, with its token and
options:

    arena bot retire NAME --server URL           # off the ladder; frees a place of the limit
    arena version delete ID --server URL         # a failed version that never played
    arena challenge MYBOT OPPONENT --server URL  # an unranked match (--wait: its result)

The token comes from ``ARENA_TOKEN``, else ``--token-file``, else the config file
``~/.config/uno-arena/token`` (its first line). Exit codes: 0 done, 1 refused or
unreachable, 2 with no token.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from arena.cli.common import checked
from arena.cli.submit import TOKEN_VARIABLE, default_token_file, read_token, refusal_text, shown
from arena.formats import json_value

MATCH_OVER = ("done", "failed", "discarded")
"""A challenge's statuses once it is over."""
WAIT_SECONDS = 1.0
"""How often ``arena challenge --wait`` asks how the match stands."""


def _call(args: argparse.Namespace, command: str,
          ask: Callable[[Any], tuple[Any, int]], say: Callable[[Any, Any], int]) -> int:
    """``ask`` the server with the author's token (the answer and the status it should
    have), then ``say`` what it answered; a refusal or no answer is one line, exit 1."""
    import httpx

    token = read_token(args.token_file)
    if not token:
        print(f"arena {command}: no token: set {TOKEN_VARIABLE}, or put it in "
              f"{args.token_file or default_token_file()}", file=sys.stderr)
        return 2
    base = args.server.rstrip("/")
    try:
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"},
                          timeout=args.timeout) as client:
            response, expected = ask(client)
            if response.status_code != expected:
                print(f"arena {command}: {base} refused ({response.status_code}): "
                      f"{refusal_text(response)}", file=sys.stderr)
                return 1
            return say(client, json_value(response.content))
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        print(f"arena {command}: cannot reach {base}: {error}", file=sys.stderr)
        return 1
    except (ValueError, KeyError, TypeError):
        print(f"arena {command}: {base} is not a league server, or not this version's",
              file=sys.stderr)
        return 1


def _retire(args: argparse.Namespace) -> int:
    """Retire one of your bots: it leaves the ladder and does not count towards your
    bot limit; its results stay, and a new version of it brings it back."""

    def say(_: Any, answer: dict[str, Any]) -> int:
        numbers = answer["retired_versions"]
        kept = f" (version {', '.join(map(str, numbers))} retired with it)" if numbers else ""
        print(shown(f"retired {answer['bot']}{kept}"))
        return 0

    address = f"/api/bots/{quote(args.name, safe='')}/retire"
    return _call(args, "bot retire", lambda client: (client.post(address), 200), say)


def _delete(args: argparse.Namespace) -> int:
    """Delete one of your failed versions that never played, with its stored sources and
    logs."""

    def say(_: Any, answer: dict[str, Any]) -> int:
        deleted = answer["deleted"]
        alone = f"; {deleted['bot']} has no version left, and is retired" \
            if answer["bot_retired"] else ""
        print(shown(f"deleted {deleted['bot']} version {deleted['number']}{alone}"))
        return 0

    return _call(args, "version delete",
                 lambda client: (client.delete(f"/api/versions/{args.id}"), 200), say)


def _players(match: dict[str, Any]) -> str:
    if match["results"]:
        return " · ".join(f"{r['bot']} place {r['place']} ({r['score']})"
                          for r in match["results"])
    return " against ".join(f"{s['bot']} v{s['version']}" for s in match["seats"])


def _challenge(args: argparse.Namespace) -> int:
    """Ask for an unranked match of your bot against another active bot (any author's):
    it changes no rating, and is played as soon as a match slot takes it."""
    base = args.server.rstrip("/")

    def say(client: Any, match: dict[str, Any]) -> int:
        print(shown(f"challenge {match['match_id']} {match['status']}: {_players(match)}"),
              flush=True)
        while args.wait and match["status"] not in MATCH_OVER:
            time.sleep(WAIT_SECONDS)
            response = client.get(f"/api/matches/{match['match_id']}")
            if response.status_code != 200:
                print(f"arena challenge: cannot follow it ({response.status_code}): "
                      f"{refusal_text(response)}", file=sys.stderr)
                return 1
            match = json_value(response.content)
        if args.wait:
            print(shown(f"  {match['status']}: {_players(match)}"
                        + (f"; {base}{match['page']}" if match["status"] == "done" else "")))
            return 0 if match["status"] == "done" else 1
        return 0

    return _call(args, "challenge", lambda client: (client.post(
        "/api/challenges", json={"bot": args.bot, "opponent": args.opponent}), 201), say)


def _server_options(parser: argparse.ArgumentParser) -> None:
    """``arena submit``'s options: the server, the token file, the answers' timeout."""
    parser.add_argument("--server", required=True, metavar="URL",
                        help="the league server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token-file", help="a file whose first line is your token")
    parser.add_argument("--timeout", default=60.0,
                        type=checked(float, lambda s: 0 < s < math.inf,
                                     "'{text}' is not a number of seconds above 0"),
                        help="seconds to wait for the server's answers (default 60)")


def _said(command: Callable[..., int]) -> str:
    """A command's docstring as one paragraph (its help's description)."""
    return " ".join((command.__doc__ or "").split())


def register(commands: Any) -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    bot = commands.add_parser("bot", help="act on one of your bots on a league server",
                              epilog=__doc__, formatter_class=formatter)
    bot_actions = bot.add_subparsers(dest="action", required=True)
    retire = bot_actions.add_parser("retire", help="retire one of your bots",
                                    description=_said(_retire))
    retire.add_argument("name", metavar="NAME")
    _server_options(retire)
    retire.set_defaults(run=_retire)

    version = commands.add_parser("version", help="act on one of your versions on a league "
                                  "server", epilog=__doc__, formatter_class=formatter)
    version_actions = version.add_subparsers(dest="action", required=True)
    delete = version_actions.add_parser("delete", help="delete a failed version",
                                        description=_said(_delete))
    delete.add_argument("id", metavar="ID", type=checked(
        int, lambda n: n > 0, "'{text}' is not a version id (a whole number above 0)"))
    _server_options(delete)
    delete.set_defaults(run=_delete)

    challenge = commands.add_parser("challenge", help="ask a league server for an unranked "
                                    "match against another bot", description=_said(_challenge),
                                    epilog=__doc__, formatter_class=formatter)
    challenge.add_argument("bot", metavar="MYBOT")
    challenge.add_argument("opponent", metavar="OPPONENT")
    challenge.add_argument("--wait", action="store_true",
                           help="follow the match until it is played, and print its result")
    _server_options(challenge)
    challenge.set_defaults(run=_challenge)
