"""``arena submit BOT_FOLDER --server URL``: pack a bot folder and submit it to a league
server as a new version of the bot its bot.toml names.

The token comes from ``ARENA_TOKEN``, else ``--token-file``, else the config file
``~/.config/uno-arena/token`` (its first line).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from arena.cli.common import checked
from arena.formats import json_value
from arena.text import visible

TOKEN_VARIABLE = "ARENA_TOKEN"
FINAL_STATUSES = ("active", "failed", "retired")


def default_token_file() -> Path:
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "uno-arena" / "token"


def read_token(token_file: str | None) -> str | None:
    if os.environ.get(TOKEN_VARIABLE):
        return os.environ[TOKEN_VARIABLE].strip()
    path = Path(token_file) if token_file else default_token_file()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return lines[0].strip() if lines else None


def _fail(message: str, code: int = 1) -> int:
    print(f"arena submit: {message}", file=sys.stderr)
    return code


def _submit(args: argparse.Namespace) -> int:
    """Pack a bot folder and submit it to a league server (a new version of the bot)."""
    import httpx

    from arena.sandbox.fetch import left_out
    from arena.sandbox.manifest import ManifestError, load_manifest
    from arena.server.uploads import TooLarge, pack

    token = read_token(args.token_file)
    if not token:
        return _fail(f"no token: set {TOKEN_VARIABLE}, or put it in "
                     f"{args.token_file or default_token_file()}", 2)
    folder = Path(args.bot)
    base = args.server.rstrip("/")
    try:
        manifest = load_manifest(folder)
        caps, fetched = _caps(base, args.timeout)
        leave_out = left_out(manifest, fetched)
        for name, lockfile, size in leave_out:
            print(f"left out {name}/ ({_size(size)}): the server fetches it from {lockfile}",
                  flush=True)
        archive = pack(manifest.folder, caps, tuple(name for name, _, _ in leave_out))
    except TooLarge as error:
        return _fail(str(error))
    except ManifestError as error:
        return _fail(str(error), 2)
    except OSError as error:
        return _fail(f"{folder}: cannot read the bot folder ({error.strerror})", 2)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/gzip"}
    try:
        with httpx.Client(base_url=base, headers={"Authorization": headers["Authorization"]},
                          timeout=args.timeout) as client:
            response = client.post("/api/submissions", content=archive,
                                   headers={"Content-Type": "application/gzip"})
            if response.status_code != 201:
                return _fail(f"{base} refused the submission ({response.status_code}): "
                             f"{refusal_text(response)}")
            version = _answer(response)
            print(shown(f"submitted {version['bot']} version {version['number']} "
                        f"({len(archive)} bytes, sources {version['content_hash'][:16]}): "
                        f"{version['status']}"), flush=True)
            if not args.wait:
                return 0
            return _wait(client, version)
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        return _fail(f"cannot reach {base}: {error}")
    except NotALeagueServer as error:
        return _fail(f"{base} is not a league server, or not this version's: {error}")


def _caps(base: str, timeout: float) -> tuple[Any, list[str]]:
    """The league's upload caps (``/api/league``), so that a folder too large is refused
    while it packs (None when the server does not say: it still checks the upload), and
    the ecosystems whose dependencies it fetches itself (left out of the upload)."""
    import httpx

    from arena.server.uploads import Caps

    try:
        answer = json_value(httpx.get(f"{base}/api/league", timeout=timeout).content)
    except (httpx.HTTPError, httpx.InvalidURL, ValueError):
        return None, []
    try:
        uploads = answer["uploads"]
        caps = Caps(int(uploads["max_bytes"]), int(uploads["max_unpacked_bytes"]),
                    int(uploads["max_files"]))
    except (ValueError, KeyError, TypeError):
        caps = None
    fetches = answer.get("fetches") if isinstance(answer, dict) else None
    return caps, [str(name) for name in fetches] if isinstance(fetches, list) else []


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 1e6 else f"{count / 1e3:.0f} kB"


class NotALeagueServer(ValueError):
    """An answer that is not what a league server answers."""


VERSION_FIELDS = ("id", "bot", "number", "content_hash", "status")


def _answer(response: Any) -> dict[str, Any]:
    """A version as the server gave it, with the fields this command reads."""
    try:
        version = json_value(response.content)
    except ValueError:
        raise NotALeagueServer(f"its answer is not JSON ({refusal_text(response)})") from None
    if not isinstance(version, dict) or not all(
            isinstance(version.get(name), int if name in ("id", "number") else str)
            for name in VERSION_FIELDS):
        raise NotALeagueServer("its answer is not a version") from None
    return version


def shown(text: str) -> str:
    """What the server sent, as text: a server's escape sequences are not run by the
    author's terminal."""
    return "\n".join(visible(line) for line in text.splitlines())


def refusal_text(response: Any) -> str:
    """What a server's answer says went wrong (its ``error``), as text to show."""
    try:
        return shown(str(json_value(response.content).get("error", response.text)))
    except (ValueError, AttributeError):
        # Not JSON (another web server): its status line and the start of its text.
        gist = " ".join(response.text.split())[:120]
        return shown(f"{response.reason_phrase}; {gist}" if gist else response.reason_phrase)


WAIT_RETRY_SECONDS = 600.0
"""How long ``--wait`` keeps asking a server that does not answer (one restarting, say)."""
UNAVAILABLE = (502, 503, 504)
"""What a proxy answers while the server behind it restarts."""


def describe(version: dict[str, Any]) -> str:
    """A version's status, with where it stands in validation."""
    queue = version.get("queue")
    if not isinstance(queue, dict):
        return str(version["status"])
    estimate = queue.get("estimate_seconds")
    about = f", done in about {round(estimate)} s" if isinstance(estimate, int | float) else ""
    if queue.get("position"):
        return f"{version['status']}: number {queue['position']} in the {queue.get('lane')} " \
               f"lane{about}"
    started = queue.get("stage_started_at")
    since = time.strftime(" since %H:%M:%S", time.localtime(started)) \
        if isinstance(started, int | float) else ""
    return f"{version['status']}{since}{about}"


def _wait(client: Any, version: dict[str, Any]) -> int:
    import httpx

    seen = describe(version)
    silent_since: float | None = None
    while version["status"] not in FINAL_STATUSES:
        time.sleep(1.0)
        try:
            response = client.get(f"/api/versions/{version['id']}")
            trouble = None if response.status_code not in UNAVAILABLE else \
                f"{response.status_code} {response.reason_phrase}"
        except httpx.TransportError as error:
            trouble = str(error) or type(error).__name__
        if trouble is not None:
            if silent_since is None:
                silent_since = time.monotonic()
                print(shown(f"  the server does not answer ({trouble}): asking again for up "
                            f"to {WAIT_RETRY_SECONDS:.0f} s"), flush=True)
            elif time.monotonic() - silent_since > WAIT_RETRY_SECONDS:
                return _fail(f"the server has not answered for {WAIT_RETRY_SECONDS:.0f} s "
                             f"({trouble}); the version may still be validated: see /me")
            continue
        silent_since = None
        if response.status_code != 200:
            return _fail(f"cannot follow the version ({response.status_code}): "
                         f"{refusal_text(response)}")
        version = _answer(response)
        now = describe(version)
        if now != seen and (version["status"] in FINAL_STATUSES or _moved(seen, now)):
            print(shown(f"  {now}"), flush=True)
        seen = now
    if version["status"] == "failed":  # what failed: the check's report, or the build's log
        print(shown(str(version.get("check_report") or version.get("build_log") or "")),
              flush=True)
        return 1
    return 0


def _moved(before: str, now: str) -> bool:
    """Whether the status or the place in the queue changed (not just the estimate)."""
    return before.split(", done in")[0] != now.split(", done in")[0]


def register(commands: Any) -> None:
    parser = commands.add_parser("submit", help="submit a bot folder to a league server",
                                 description=_submit.__doc__, epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bot", metavar="BOT_FOLDER")
    parser.add_argument("--server", required=True, metavar="URL",
                        help="the league server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token-file", help="a file whose first line is your token")
    parser.add_argument("--wait", action="store_true",
                        help="follow the version until it is active or failed")
    parser.add_argument("--timeout", default=60.0,
                        type=checked(float, lambda s: 0 < s < math.inf,
                                     "'{text}' is not a number of seconds above 0"),
                        help="seconds to wait for the server's answers (default 60)")
    parser.set_defaults(run=_submit)
