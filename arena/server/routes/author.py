"""Logging in and out (a token, kept in an HttpOnly, SameSite=Strict cookie), and what a
logged-in author sees and does: their own bots' versions with build logs, check reports
and stderr logs (never another author's), and the submission form."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from arena.server.routes.author_actions import me_values
from arena.server.routes.common import (
    COOKIE,
    need_author,
    own_version,
    page,
    pages_author,
    refuse_cross_site,
    site_of,
)
from arena.server.routes.live import watching
from arena.server.routes.submissions import FORM_OVERHEAD, accept, read_capped
from arena.server.shown import ServerPaths
from arena.server.store import seated
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


def me(request: Request) -> Response:
    live = watching(request, "/live/me")
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
                message=message, error=None, queue=queue, live=live,
                **me_values(store, site.league, author))


def version_page(request: Request) -> Response:
    live = watching(request, "/live/me")
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
                reused_from=store.reused_from(version.id), live=live)


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
        received = await read_capped(request, site.league.uploads.max_bytes + FORM_OVERHEAD,
                                     author)

        async def replay() -> dict[str, Any]:
            return {"type": "http.request", "body": received.body, "more_body": False}

        try:
            async with Request(request.scope, replay).form(
                    max_files=1, max_fields=4, max_part_size=4096) as form:
                upload = form.get("archive")
                if upload is None or isinstance(upload, str):
                    raise UploadRefused(422, "choose a .tar.gz archive of the bot folder")
                archive = await upload.read()
        except (UploadRefused, HTTPException) as error:
            site.store().settle_upload(received.upload, f"refused: {error}"[:500])
            raise
        version = await accept(request, author, archive, received.upload)
    except (UploadRefused, HTTPException) as error:
        status = error.status if isinstance(error, UploadRefused) else error.status_code
        reason = error.reason if isinstance(error, UploadRefused) else str(error.detail)
        versions = site.store().versions("WHERE b.author_id = ?", (author.id,))
        return page(request, "server_me.html", status=status, versions=versions,
                    page_name="me", message=None, error=reason)
    return RedirectResponse(f"/me?submitted={version.id}", status_code=303)
