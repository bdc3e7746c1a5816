"""What every endpoint shares: the site's state (``request.app.state.site``), who is asking,
the pages' rendering in the league's layout, the error answers, the security headers, and
the checks on what a request may ask."""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from jinja2 import ChoiceLoader, Environment, PackageLoader
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.rating.trueskill_ratings import Leaderboard, Standing
from arena.report import render
from arena.server import ladder
from arena.server.config import League
from arena.server.kept import Kept
from arena.server.store import Author, Bot, LeagueStore, Version

COOKIE = "arena_token"
TOKEN_CACHE = 256
"""Digests of wrong tokens kept (each then refused without a look at the store)."""
LAYOUT = "server_layout.html"
"""The league's navigation and footer, around any page the server renders."""


class Unauthorized(HTTPException):
    def __init__(self, given: bool = False) -> None:
        super().__init__(401, (
            "that token is not valid here: check it is this league's, and not one the "
            "organiser has rotated (`arena server add-author` gives a new one)" if given else
            "a token is required: log in, or send Authorization: Bearer TOKEN "
            "(`arena server add-author` gives one)"))


@dataclass
class PageSizes:
    """How long the lists are."""

    matches_per_page: int = 200
    """Rows of a page of /matches (a league holds tens of thousands: one page is read)."""
    recent_matches: int = 50
    """The matches a bot's or a version's page lists, newest first."""


class Stores(threading.local):
    """A store connection per thread (SQLite's connections are not shared across them)."""

    store: LeagueStore | None = None


@dataclass
class Site:
    """The league, its templates and what is kept between requests; a store connection
    for each thread that asks."""

    league: League
    environment: Environment
    pages: PageSizes = dataclasses.field(default_factory=PageSizes)
    stores: Stores = dataclasses.field(default_factory=Stores)
    wrong: Kept[str, bool] = dataclasses.field(default_factory=lambda: Kept(TOKEN_CACHE))
    """Digests of tokens found wrong: a token found wrong stays wrong (a secret is drawn
    at random once), and asked again it costs no look at the store."""
    said: list[str] = dataclasses.field(default_factory=list)
    """The store's trouble last told in the server's log (told once while it lasts)."""

    def store(self) -> LeagueStore:
        if self.stores.store is None:
            self.stores.store = LeagueStore(self.league.store_path)
        return self.stores.store

    def author(self, request: Request) -> Author | None:
        header = request.headers.get("authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else \
            request.cookies.get(COOKIE, "")
        if not token:
            return None
        digest = hashlib.sha256(token.encode()).hexdigest()
        if digest in self.wrong:
            return None
        # Checked against the store at every request (a SHA-256 and a row), never cached:
        # a token the organiser rotated stops working at once.
        found = self.store().authenticate(token)
        if found is None:
            self.wrong.put(digest, True)
        return found


def site_of(request: Request) -> Site:
    site: Site = request.app.state.site
    return site


def environment() -> Environment:
    """The report's environment, loading the server's templates first and then the
    report's (``base.html`` and the match and replay pages)."""
    env = render.environment()
    env.loader = ChoiceLoader([PackageLoader("arena.server", "templates"),
                               PackageLoader("arena.report", "templates")])
    env.filters["when"] = lambda t: "" if t is None else time.strftime(
        "%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))
    return env


# -- who is asking --------------------------------------------------------------------------


def need_author(request: Request) -> Author:
    """The author the request's token names; HTTP 401 without one."""
    author = site_of(request).author(request)
    if author is None:
        header = request.headers.get("authorization", "")
        raise Unauthorized(given=bool(header[7:].strip() if header.lower().startswith(
            "bearer ") else request.cookies.get(COOKIE, "")))
    return author


def pages_author(request: Request) -> Author | Response:
    """The author the request's token names, or a redirect to the login form that comes
    back to the page asked for."""
    author = site_of(request).author(request)
    if author is None:
        # Back to the page asked for, its query too (?page=...), quoted whole.
        asked = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(asked, safe='/')}", status_code=303)
    return author


def own_version(request: Request, author: Author, version_id: int) -> Version:
    """The author's own version; HTTP 404 for none, 403 for another author's."""
    version = site_of(request).store().version(version_id)
    if version is None:
        raise HTTPException(404, "no such version")
    if version.author_id != author.id:
        raise HTTPException(403, "that version belongs to another author: its logs are "
                            "theirs to see")
    return version


def rated_bot(request: Request, missing: str
              ) -> tuple[Bot, Leaderboard, dict[int, Standing]]:
    """The bot the address names, the ladder's ratings, and its standings by version id;
    HTTP 404 saying ``missing`` when no bot has the name."""
    site = site_of(request)
    store = site.store()
    bot = store.bot(request.path_params["name"])
    if bot is None:
        raise HTTPException(404, missing)
    board = ladder.ladder_ratings(store, site.league)
    return bot, board, {s.entrant_id: s for s in board.standings}


def refuse_cross_site(request: Request) -> None:
    """HTTP 403 for a browser's form sent from another site (its Origin, or else its
    Referer, names another host than the request's, or than the league's ``public_url``
    behind a proxy that rewrites Host; or is ``null``): no page elsewhere may log a visitor
    in to an account of its choosing (and then steer them to submit their bot to it), log
    them out, or submit for them. A request naming no origin (a script, the API's clients)
    is not a browser's form, and goes on."""
    said = request.headers.get("origin") or request.headers.get("referer")
    if said is None:
        return
    where = urlsplit(said)
    ours = {request.headers.get("host", "")}
    public_url = site_of(request).league.public_url
    if public_url:
        ours.add(urlsplit(public_url).netloc)
    if said == "null" or where.netloc not in ours:
        raise HTTPException(403, "a form sent from another site is refused; use the "
                            "league's own pages")


# -- pages ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BotRef:
    """What the report's templates need of a bot (``bot_link``)."""

    name: str
    version: str

    @property
    def slug(self) -> str:
        return self.name


class LeagueView:
    """The report templates' ``season``: the league's name and its versions by id."""

    def __init__(self, name: str, versions: dict[int, Version]) -> None:
        self.name = name
        self.versions = versions

    def bot(self, version_id: int) -> BotRef:
        version = self.versions[version_id]
        return BotRef(version.bot, f"v{version.number}")


def page(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    """``template`` (the server's or the report's) in the league's layout, with what every
    page shows: the league, its rules, its phase and who is logged in."""
    site = site_of(request)
    store = site.store()
    versions = {v.id: v for v in store.versions()}
    html = site.environment.get_template(LAYOUT).render(
        page_template=template, root="/", season=LeagueView(site.league.name, versions),
        facts={"rules": site.league.rules.to_dict()}, author=site.author(request),
        phase=ladder.current_phase(store, site.league), **values)
    return HTMLResponse(html, status_code=status)


# -- errors ---------------------------------------------------------------------------------


async def http_error(request: Request, error: Exception) -> Response:
    """JSON for the API and for a missing token (with ``WWW-Authenticate``), else a page.
    The message never quotes the address: a link would otherwise put its own text on the
    league's page, as the league's word."""
    assert isinstance(error, HTTPException)
    if request.url.path.startswith("/api/") or error.status_code == 401:
        return JSONResponse({"error": error.detail}, status_code=error.status_code,
                            headers={"WWW-Authenticate": "Bearer"}
                            if error.status_code == 401 else None)
    return await run_in_threadpool(  # the page checks the visitor's token: a thread
        lambda: page(request, "server_error.html", status=error.status_code,
                     page_name="error", message=error.detail, code=error.status_code))


async def store_unreadable(request: Request, error: Exception) -> Response:
    """A damaged or unusable store: the organiser reads what and where in the server's
    log (once while it lasts); a visitor learns the site cannot answer for now, not
    the server's paths."""
    said = site_of(request).said
    if not said or said[-1] != str(error):
        said[:] = [str(error)]
        print(f"arena server: {request.url.path} cannot be answered: {error}",
              file=sys.stderr, flush=True)
    message = ("the league's store cannot be read just now; the organiser has been "
               "told (the server's log says what to do)")
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=503)
    return HTMLResponse(f"<!doctype html><title>503</title><h1>503</h1><p>{message}</p>",
                        status_code=503)


SECURITY_HEADERS = [
    # Pages show what authors wrote (bot names, version labels, build logs, stderr): all
    # escaped, and in case something is not, no script but the site's own runs, and a
    # log is never taken for HTML.
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; "
     b"style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; "
     b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]


class SecurityHeaders:
    """ASGI middleware: the headers above on every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


# -- what a request may ask -----------------------------------------------------------------


def page_number(request: Request) -> int:
    """The ``page`` a list's address asks for (1, the newest, when it says none)."""
    return integer(request.query_params, "page", 1, 1, None)


def integer(query: Any, name: str, default: int, least: int, most: int | None) -> int:
    """A whole-number query parameter, checked (HTTP 400 saying what is expected)."""
    text = query.get(name)
    if text is None:
        return default
    bound = f"from {least} to {most:,}" if most is not None else f"{least} or more"
    if not (text.isascii() and text.isdigit()) or len(text) > 12 or not (
            least <= int(text) and (most is None or int(text) <= most)):
        raise HTTPException(400, f"{name} must be a whole number {bound}")
    return int(text)
