"""Logging in and out (a token, kept in an HttpOnly, SameSite=Strict cookie), and what a
logged-in author sees and does: the bots' pages and rating histories, the match list,
their own bots' versions with build logs, check reports and stderr logs (never another
author's), and the submission form."""

from __future__ import annotations

import math
from typing import Any

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from arena.rating.trueskill_ratings import Leaderboard, Standing
from arena.report.charts import rating_chart
from arena.report.data import Bot as ReportBot
from arena.server.kept import Kept
from arena.server.routes.common import (
    COOKIE,
    need_author,
    own_version,
    page,
    page_number,
    pages_author,
    rated_bot,
    refuse_cross_site,
    site_of,
)
from arena.server.routes.submissions import FORM_OVERHEAD, accept, read_capped
from arena.server.shown import ServerPaths
from arena.server.store import Version, seated
from arena.server.uploads import UploadRefused
from arena.text import file_label

COOKIE_SECONDS = 30 * 24 * 3600
"""How long a browser keeps the login cookie."""

# -- logging in -----------------------------------------------------------------------------


def login_form(request: Request) -> Response:
    return page(request, "server_login.html", error=None, page_name="login",
                next=request.query_params.get("next", "/me"))


async def login(request: Request) -> Response:
    """The token checked, kept in the cookie, and back to the page asked for (one of this
    site's: a ``next`` elsewhere goes to /me)."""
    refuse_cross_site(request)
    async with request.form(max_files=0, max_fields=4, max_part_size=4096) as form:
        token = str(form.get("token", "")).strip()
        target = str(form.get("next", "/me"))
    if not target.startswith("/") or target.startswith("//"):
        target = "/me"
    site = site_of(request)
    found = await run_in_threadpool(lambda: site.store().authenticate(token)) \
        if token else None
    if found is None:
        return page(request, "server_login.html", status=401, page_name="login",
                    error="That token is not valid.", next=target)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict",
                        max_age=COOKIE_SECONDS,
                        secure=request.url.scheme == "https")  # served over TLS: only so
    return response


def logout(request: Request) -> Response:
    refuse_cross_site(request)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(COOKIE, httponly=True, samesite="strict")
    return response


# -- pages ----------------------------------------------------------------------------------


def bot_page(request: Request) -> Response:
    author = pages_author(request)
    if isinstance(author, Response):
        return author
    bot, board, standings = rated_bot(request, "no bot has that name")
    site = site_of(request)
    store = site.store()
    versions = store.versions("WHERE b.id = ?", (bot.id,))
    charts = {v.id: chart(v, standings[v.id], board) for v in versions}
    where, ids = seated([v.id for v in versions])
    matches = store.matches(f"WHERE status = 'done' AND {where}", ids,
                            newest_first=True, limit=site.pages.recent_matches)
    return page(request, "server_bot.html", bot=bot, versions=versions,
                standings=standings, charts=charts, matches=matches,
                own=bot.author_id == author.id, page_name="bot")


def matches_page(request: Request) -> Response:
    """The matches played, being played or failed, newest first, a page at a time (a
    league holds tens of thousands: one page is read)."""
    author = pages_author(request)
    if isinstance(author, Response):
        return author
    site = site_of(request)
    store = site.store()
    number = page_number(request)
    per_page = site.pages.matches_per_page
    where = "WHERE status IN ('done', 'running', 'failed')"
    pages = max(1, math.ceil(store.count_matches(where) / per_page))
    if number > pages:
        raise HTTPException(404, f"there are {pages} page(s) of matches")
    matches = store.matches(where, newest_first=True, limit=per_page,
                            offset=(number - 1) * per_page)
    results: dict[str, list[Any]] = {}
    for result in store.results(match_ids=[m.match_id for m in matches]):
        results.setdefault(result.match_id, []).append(result)
    return page(request, "server_matches.html", matches=matches, results=results,
                page_name="matches", number=number, pages=pages)


def me(request: Request) -> Response:
    author = pages_author(request)
    if isinstance(author, Response):
        return author
    site = site_of(request)
    store = site.store()
    versions = store.versions("WHERE b.author_id = ?", (author.id,))
    queue = {v.id: store.queue_state(v.id, site.league.validators) for v in versions}
    # The page says only what the server says: a text taken from the address would let
    # a link show anything on it, under the league's name.
    submitted = request.query_params.get("submitted", "")
    message = next((f"Submitted {v.bot} version {v.number}: queued for validation"
                    for v in versions if submitted.isdigit() and v.id == int(submitted)),
                   None)
    return page(request, "server_me.html", versions=versions, page_name="me",
                message=message, error=None, queue=queue)


def version_page(request: Request) -> Response:
    author = pages_author(request)
    if isinstance(author, Response):
        return author
    version = own_version(request, author, int(request.path_params["version_id"]))
    site = site_of(request)
    where, ids = seated([version.id])
    matches = site.store().matches(f"WHERE {where}", ids, newest_first=True,
                                   limit=site.pages.recent_matches)
    store = site.store()
    return page(request, "server_version.html", version=version, matches=matches,
                page_name="me", queue=store.queue_state(version.id, site.league.validators),
                reused_from=store.reused_from(version.id))


def stderr_log(request: Request) -> Response:
    """What the author's bot wrote to stderr in a match, as text."""
    author = need_author(request)
    site = site_of(request)
    match = site.store().match(request.path_params["match_id"])
    seat = int(request.path_params["seat"])
    if match is None or not 0 <= seat < len(match.seats):
        raise HTTPException(404, "no such match or seat")
    version = own_version(request, author, match.seats[seat])
    path = site.league.data / "output" / match.match_id / \
        f"{file_label(f'seat{seat}-{version.bot}')}.stderr.log"
    if not path.is_file():
        raise HTTPException(404, "no stderr log for that seat")
    text = path.read_bytes().decode("utf-8", errors="replace")
    return PlainTextResponse(ServerPaths(site.league.data).mask(text))


async def submit_form(request: Request) -> Response:
    """The form's archive made a queued version, then /me saying so; a refusal is said on
    /me, with its status."""
    refuse_cross_site(request)
    # The token's check in a thread, never on the event loop, which answers everyone.
    author = await run_in_threadpool(pages_author, request)
    if isinstance(author, Response):
        return author
    site = site_of(request)
    try:
        body = await read_capped(request, site.league.uploads.max_bytes + FORM_OVERHEAD,
                                 author)

        async def replay() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async with Request(request.scope, replay).form(
                max_files=1, max_fields=4, max_part_size=4096) as form:
            upload = form.get("archive")
            if upload is None or isinstance(upload, str):
                raise UploadRefused(422, "choose a .tar.gz archive of the bot folder")
            archive = await upload.read()
        version = await accept(request, author, archive)
    except (UploadRefused, HTTPException) as error:
        status = error.status if isinstance(error, UploadRefused) else error.status_code
        reason = error.reason if isinstance(error, UploadRefused) else str(error.detail)
        versions = site.store().versions("WHERE b.author_id = ?", (author.id,))
        return page(request, "server_me.html", status=status, versions=versions,
                    page_name="me", message=None, error=reason)
    return RedirectResponse(f"/me?submitted={version.id}", status_code=303)


# -- rating charts --------------------------------------------------------------------------


def chart(version: Version, standing: Standing, board: Leaderboard) -> Markup:
    """The version's rating history, on the axis every chart of the ladder shares."""
    bot = ReportBot(version.id, version.bot, f"v{version.number}", version.folder,
                    version.content_hash, {}, version.bot, standing=standing)
    return rating_chart(bot, chart_range(board))


CHART_RANGES: Kept[int, tuple[Leaderboard, tuple[float, float]]] = Kept(4)
"""By the ratings' id, each with the ratings themselves (held: their id is not reused)."""


def chart_range(board: Leaderboard) -> tuple[float, float]:
    """The rating axis every chart shares: the ladder's whole range, mu +- sigma over every
    version's history (a value per result: read once per ratings, which are cached too)."""
    found = CHART_RANGES.get(id(board))
    if found is not None and found[0] is board:
        return found[1]
    values = [mu + k * sigma for s in board.standings for _, mu, sigma in s.history
              for k in (-1, 1)]
    low, high = (min(values) - 1, max(values) + 1) if values else (0.0, 50.0)
    bounds = (low if math.isfinite(low) else 0.0, high)
    CHART_RANGES.put(id(board), (board, bounds))
    return bounds
