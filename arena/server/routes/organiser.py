"""The organiser's pages: the league's state (``/organiser``, and as JSON at
``/api/organiser/state``) and the organiser's commands as forms (``/organiser/actions``),
behind the organiser's token (``arena.server.organiser``): ``Authorization: Bearer
TOKEN``, or the cookie the organiser's login form sets (HttpOnly, SameSite=Strict).

The actions are those of ``arena server``'s command line, doing what it does (the same
store calls): each is logged as an ``organiser_action`` event and confirmed on the page.
A form sent from another site is refused, as every form of the server's is
(``refuse_cross_site``)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from arena.server import ladder
from arena.server.config import PHASES, League
from arena.server.events import event
from arena.server.organiser import OrganiserToken
from arena.server.overview import organiser_state
from arena.server.routes.common import page, refuse_cross_site, site_of
from arena.server.service import LeagueService
from arena.server.store import Conflict, LeagueStore

COOKIE = "arena_organiser"
COOKIE_SECONDS = 12 * 3600
"""How long a browser keeps the organiser's login."""
NO_STORE = {"Cache-Control": "no-store"}
"""On every organiser page: a token shown once (a new author's) stays out of caches."""
BOT_ACTIONS = {"withdraw": "withdrawn", "disqualify": "disqualified", "readmit": "re-admitted"}
ACTIONS = ("add-author", "rotate-token", "advance", *BOT_ACTIONS, "final-retry",
           "final-close")
"""As ``arena server ACTION``: ``final-retry`` and ``final-close`` are ``final retry`` and
``final close``."""


def _given(request: Request) -> str:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.cookies.get(COOKIE, "")


def is_organiser(request: Request) -> bool:
    token: OrganiserToken = request.app.state.organiser
    given = _given(request)
    return bool(given) and token.matches(given)


def need_organiser(request: Request) -> None:
    """HTTP 401 unless the request shows the organiser's token."""
    if not is_organiser(request):
        raise HTTPException(401, "the organiser's token is required (Authorization: Bearer "
                            "TOKEN, or log in at /organiser/login): `arena server` prints "
                            "the file that holds it" if not _given(request) else
                            "that is not the organiser's token of this league")


def _refused(request: Request) -> Response:
    """The organiser's login form, answered 401 (a page asked without the token)."""
    response = page(request, "server_organiser_login.html", status=401,
                    page_name="organiser", next=request.url.path,
                    error="That is not the organiser's token." if _given(request) else None)
    response.headers["WWW-Authenticate"] = "Bearer"
    return response


# -- logging in -----------------------------------------------------------------------------


def login_form(request: Request) -> Response:
    return page(request, "server_organiser_login.html", page_name="organiser", error=None,
                next=request.query_params.get("next", "/organiser"))


async def login(request: Request) -> Response:
    refuse_cross_site(request)
    async with request.form(max_files=0, max_fields=4, max_part_size=4096) as form:
        given = str(form.get("token", "")).strip()
        target = str(form.get("next", "/organiser"))
    if not target.startswith("/organiser"):
        target = "/organiser"
    token: OrganiserToken = request.app.state.organiser
    if not given or not token.matches(given):
        event("organiser_login", status="refused")
        return await run_in_threadpool(
            lambda: page(request, "server_organiser_login.html", status=401,
                         page_name="organiser", error="That is not the organiser's token.",
                         next=target))
    event("organiser_login", status="done")
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(COOKIE, given, httponly=True, samesite="strict",
                        max_age=COOKIE_SECONDS, secure=request.url.scheme == "https")
    return response


def logout(request: Request) -> Response:
    refuse_cross_site(request)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(COOKIE, httponly=True, samesite="strict")
    return response


# -- the state ------------------------------------------------------------------------------


def _state(request: Request) -> Any:
    service: LeagueService = request.app.state.service
    site = site_of(request)
    return organiser_state(site.store(), site.league, service, request.app.state.started_at)


def state_page(request: Request) -> Response:
    if not is_organiser(request):
        return _refused(request)
    response = page(request, "server_organiser.html", page_name="organiser",
                    state=_state(request))
    response.headers.update(NO_STORE)
    return response


def api_state(request: Request) -> Response:
    need_organiser(request)
    return JSONResponse(dataclasses.asdict(_state(request)), headers=NO_STORE)


# -- the actions ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Done:
    """What an action did, as the page confirms it."""

    message: str
    token: str | None = None
    """A new author's token (shown only on this page, as the command line prints it once)."""


def actions_page(request: Request, done: Done | None = None, error: str | None = None,
                 status: int = 200) -> Response:
    if not is_organiser(request):
        return _refused(request)
    site = site_of(request)
    store = site.store()
    phase = ladder.current_phase(store, site.league)
    authors = [row[0] for row in store.db.execute("SELECT name FROM authors ORDER BY name")]
    response = page(request, "server_organiser_actions.html", status=status,
                    page_name="organiser", done=done, error=error,
                    later_phases=PHASES[PHASES.index(phase) + 1:], bots=store.bots(),
                    authors=authors, final=store.status_counts("final"),
                    actions=store.actions()[-20:])
    response.headers.update(NO_STORE)
    return response


def act(store: LeagueStore, league: League, action: str, fields: dict[str, str]) -> Done:
    """One of the command line's actions, on the store as ``arena server ACTION`` does it;
    Conflict or ValueError (the message says why) when the store refuses it."""
    name = fields.get("name", "")
    if action == "add-author":
        token = store.add_author(name)
        return Done(f"Author {name} added. Their token, shown only now: give it to them "
                    "and keep it secret.", token)
    if action == "rotate-token":
        token = store.rotate_token(name)
        return Done(f"A new token for {name}, shown only now; their old one stops working "
                    "at once.", token)
    if action == "advance":
        phase = ladder.advance(store, league, fields.get("phase", ""))
        return Done(f"League {league.name} is now {phase}.")
    if action == "final-retry":
        return Done(f"{store.retry_final()} failed final match(es) scheduled again.")
    if action == "final-close":
        return Done(f"The final ends without its {store.close_final()} failed match(es); "
                    "its keys are published at the server's next step.")
    bot, reason = fields.get("bot", ""), fields.get("reason", "").strip() or None
    if action == "disqualify" and not reason:
        raise ValueError("disqualifying needs a reason (it is shown publicly)")
    store.act(bot, action, reason)
    return Done(f"Bot {bot} {BOT_ACTIONS[action]}; its results so far are kept.")


async def action(request: Request) -> Response:
    """``POST /organiser/actions`` with ``action`` (one of ``ACTIONS``) and its fields
    (``name``, ``phase``, ``bot``, ``reason``): done, logged, and confirmed on the page."""
    refuse_cross_site(request)
    if not is_organiser(request):
        return await run_in_threadpool(_refused, request)
    async with request.form(max_files=0, max_fields=8, max_part_size=4096) as form:
        fields = {key: str(value) for key, value in form.items()}
    chosen = fields.get("action", "")
    if chosen not in ACTIONS:
        raise HTTPException(400, f"action must be one of {', '.join(ACTIONS)}")
    site = site_of(request)
    # What the action was on, as the log names it (an author's name as ``author``).
    target: dict[str, Any] = {{"name": "author"}.get(key, key): fields[key]
                              for key in ("name", "phase", "bot", "reason") if key in fields}

    def run() -> Response:
        started = time.monotonic()
        try:
            done = act(site.store(), site.league, chosen, fields)
        except (Conflict, ValueError) as error:
            event("organiser_action", action=chosen, status="refused", refusal=str(error),
                  **target)
            return actions_page(request, error=str(error), status=409)
        event("organiser_action", action=chosen, status="done", message=done.message,
              seconds=round(time.monotonic() - started, 3), **target)
        return actions_page(request, done=done)

    return await run_in_threadpool(run)
