"""The person's page: a small Starlette app on 127.0.0.1, opened once by a one-time token.

The address ``arena play --human`` prints carries a token; the first request with it gets
an HttpOnly, SameSite=Strict cookie holding a second secret and is sent on to ``/``. The
token then opens nothing: a second browser given the address gets 403, as does any request
with neither (tokens compared in constant time). Requests naming another host than
127.0.0.1 are refused too (a rebound DNS name would otherwise reach the page).

``/`` is the page, ``/events`` the Server-Sent Events it draws from (the table's state at
each change and the story's new lines), ``/act`` takes a choice, ``/leave`` ends the
command, ``/pages/`` serves the match and replay pages written at the end, ``/static/`` the
page's own script and style.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.human.table import Table

HOST = "127.0.0.1"
COOKIE = "arena_table"
KEEP_ALIVE_SECONDS = 15.0
"""A comment line on a quiet event stream this often: a closed page is then noticed."""
LINES_PER_MESSAGE = 500
"""Story lines in one event-stream message, at most (a page opened late catches up)."""
HEADERS = [
    # The page shows bot names and fault reasons, escaped; and in case something is not,
    # no script but the page's own runs.
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; "
     b"style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; "
     b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]
REFUSED = ("403: this table opens once, from the address `arena play --human` printed "
           "(its token works for one browser only)")


@dataclass
class Gate:
    """The one-time token of the address, and the cookie's secret it is exchanged for."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    used: bool = False

    def exchange(self, token: str) -> bool:
        """Whether ``token`` is the address's and not yet used (it is used from then on)."""
        if self.used or not secrets.compare_digest(token.encode(), self.token.encode()):
            return False
        self.used = True
        return True

    def admits(self, cookie: str | None) -> bool:
        return cookie is not None and secrets.compare_digest(cookie.encode(),
                                                             self.secret.encode())


class Guard:
    """ASGI middleware: every request needs the cookie, but the one that brings the
    address's token (answered with the cookie and sent on to ``/``); else 403."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app, self.gate = app, gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        gate = self.gate
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        tokens = query.get("token")
        response: Response | None = None
        if tokens is not None:
            if scope["path"] == "/" and len(tokens) == 1 and gate.exchange(tokens[0]):
                response = RedirectResponse("/", status_code=303)
                response.set_cookie(COOKIE, gate.secret, httponly=True, samesite="strict",
                                    path="/")
            else:
                response = PlainTextResponse(REFUSED, status_code=403)
        elif not gate.admits(_cookie(scope)):
            response = PlainTextResponse(REFUSED, status_code=403)
        if response is not None:
            await response(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)


def _cookie(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            morsel = SimpleCookie(value.decode("latin-1")).get(COOKIE)
            if morsel is not None:
                return morsel.value
    return None


def create_app(table: Table, gate: Gate, pages: Path, port: int) -> Starlette:
    """The page's app for ``table``, behind ``gate``; ``pages`` is where the match and
    replay pages are written at the end."""
    templates = Environment(loader=PackageLoader("arena.human", "templates"),
                            autoescape=select_autoescape(), undefined=StrictUndefined)
    origin = f"http://{HOST}:{port}"

    async def page(request: Request) -> Response:
        html = templates.get_template("table.html").render(seat=table.seat)
        return HTMLResponse(html)

    async def events(request: Request) -> Response:
        return StreamingResponse(_stream(table), media_type="text/event-stream")

    def same_origin(request: Request) -> bool:
        """A choice comes from the page itself: JSON, from its own origin."""
        return (request.headers.get("content-type", "").startswith("application/json")
                and request.headers.get("origin", origin) == origin)

    async def act(request: Request) -> Response:
        if not same_origin(request):
            return PlainTextResponse("403: choices come from the table's page",
                                     status_code=403)
        try:
            body = json.loads(await request.body())
            request_id, action = body["request"], body["action"]
            if type(request_id) is not int or type(action) is not int:
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "send {\"request\": ID, \"action\": CODE}"},
                                status_code=400)
        refused = table.choose(request_id, action)
        if refused is not None:
            return JSONResponse({"error": refused}, status_code=409)
        return Response(status_code=204)

    async def leave(request: Request) -> Response:
        if not same_origin(request):
            return PlainTextResponse("403: only the table's page leaves it", status_code=403)
        table.left.set()
        table.bump("You left the table: the command has ended.")
        return Response(status_code=204)

    pages.mkdir(parents=True, exist_ok=True)
    return Starlette(
        routes=[Route("/", page), Route("/events", events),
                Route("/act", act, methods=["POST"]), Route("/leave", leave, methods=["POST"]),
                Mount("/static", StaticFiles(packages=[("arena.human", "static")])),
                Mount("/pages", StaticFiles(directory=pages, html=True))],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=[HOST]),
                    Middleware(Guard, gate=gate)])


async def _stream(table: Table) -> AsyncIterator[str]:
    """The table's state at each change, with the story's lines the page has not had; a
    comment line when nothing changes for a while; the end once the person has left."""
    sent = table.dropped  # the story's lines sent, counted from the match's first
    version = -1
    while True:
        changed = table.changed
        if table.version != version:
            version = table.version
            sent = max(sent, table.dropped)
            new = table.lines[sent - table.dropped:][:LINES_PER_MESSAGE]
            message: dict[str, Any] = {"state": table.state(), "first": sent, "lines": new}
            sent += len(new)
            if len(new) == LINES_PER_MESSAGE:
                version = -1  # more to send at once
            yield f"data: {json.dumps(message)}\n\n"
            if table.left.is_set():
                return
            continue
        try:
            await asyncio.wait_for(changed.wait(), KEEP_ALIVE_SECONDS)
        except TimeoutError:
            yield ": still here\n\n"
