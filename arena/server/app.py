"""The HTTP side of the league server: pages (Jinja2, in the report's style, rendered per
request from the store) and a JSON API over the same data, their endpoints in
``arena.server.routes``. Endpoints that only read are plain functions, which Starlette
runs in its thread pool (each thread with a store connection of its own), so a token check
or a rating never holds up the others.

Who sees what:

* anyone: the ladder and the final standings (``/``, ``/final``, ``/api/standings``,
  ``/api/final``) and the match pages, replays and logs (as a published report shows them);
* an author (token): the bots' pages and rating histories, the match list, the rest of the
  API, submissions, and their own bots' build logs, check reports and stderr logs (never
  another author's).
* the organiser (the organiser's token, ``arena.server.organiser``): the league's state
  and the organiser's actions (``/organiser``, ``/api/organiser/state``).

A token comes as ``Authorization: Bearer TOKEN`` (the API, ``arena submit``) or, in a
browser, from the login form, kept in an HttpOnly, SameSite=Strict cookie.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.routing import Route

from arena.league.store import StoreError
from arena.report.data import read_match_log
from arena.server.config import League
from arena.server.live import Hub
from arena.server.organiser import organiser_token
from arena.server.routes import api, author, author_actions, organiser, public
from arena.server.routes import live as live_routes
from arena.server.routes.common import (
    COOKIE,
    SecurityHeaders,
    Site,
    environment,
    http_error,
    store_unreadable,
)
from arena.server.routes.submissions import Receiving
from arena.server.service import LeagueService
from arena.server.store import LeagueStore

__all__ = ["COOKIE", "create_app"]

MODELS_KEPT = 32
"""Match models kept for the match and replay pages (a long match's: a few MB)."""

ROUTES = [
    *live_routes.ROUTES,
    Route("/", public.home), Route("/index.html", public.home),
    Route("/final", public.final_page),
    Route("/api/standings", api.api_standings), Route("/api/final", api.api_final),
    Route("/api/league", api.api_league),
    Route("/bots/{name:str}.html", public.bot_page),
    Route("/head-to-head", public.head_to_head_page),
    Route("/api/head-to-head", api.api_head_to_head),
    Route("/{kind:str}/{match_id:str}.html", public.match_page),
    Route("/logs/{match_id:str}.jsonl.gz", public.match_log),
    Route("/replays/{match_id:str}.js", public.replay_data),
    Route("/assets/{name:str}", public.asset),
    Route("/login", author.login_form), Route("/login", author.login, methods=["POST"]),
    Route("/logout", author.logout, methods=["POST"]),
    Route("/matches", public.matches_page),
    Route("/me", author.me), Route("/me/versions/{version_id:int}", author.version_page),
    Route("/me/matches/{match_id:str}/stderr/{seat:int}", author.stderr_log),
    Route("/me/submit", author.submit_form, methods=["POST"]),
    Route("/api/me", api.api_me), Route("/api/versions/{version_id:int}", api.api_version),
    Route("/api/submissions", api.api_submit, methods=["POST"]),
    Route("/api/bots", api.api_bots), Route("/api/bots/{name:str}", api.api_bot),
    Route("/api/matches", api.api_matches),
    Route("/api/matches/{match_id:str}", api.api_match),
    Route("/me/bots/{name:str}/retire", author_actions.retire_form, methods=["POST"]),
    Route("/me/versions/{version_id:int}/delete", author_actions.delete_form,
          methods=["POST"]),
    Route("/me/challenges", author_actions.challenge_form, methods=["POST"]),
    Route("/api/bots/{name:str}/retire", author_actions.api_retire, methods=["POST"]),
    Route("/api/versions/{version_id:int}", author_actions.api_delete_version,
          methods=["DELETE"]),
    Route("/api/challenges", author_actions.api_challenges),
    Route("/api/challenges", author_actions.api_challenge, methods=["POST"]),
    Route("/organiser", organiser.state_page),
    Route("/organiser/login", organiser.login_form),
    Route("/organiser/login", organiser.login, methods=["POST"]),
    Route("/organiser/logout", organiser.logout, methods=["POST"]),
    Route("/organiser/actions", organiser.actions_page),
    Route("/organiser/actions", organiser.action, methods=["POST"]),
    Route("/api/organiser/state", organiser.api_state),
]
"""In order: the first that matches answers (``/bots/NAME.html`` before any other
``/KIND/ID.html``)."""


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """The league's background threads (validation, ladder, final), when the app runs
    them, and the live updates' watcher: started with it, stopped with it."""
    service: LeagueService = app.state.service
    background: bool = app.state.background
    live: Hub = app.state.live
    live.start()
    if background:
        service.start()
    try:
        yield
    finally:
        live.close()
        if background:
            await run_in_threadpool(service.stop)


def create_app(league: League, *, background: bool = True) -> Starlette:
    """The ASGI application; with ``background``, the validation and match threads run
    while it is up (started and stopped with it)."""
    # The data folder holds the store (token hashes, secret keys) and every bot's logs:
    # the organiser's alone (the sandbox mounts what a bot needs of it for the bot).
    league.data.mkdir(parents=True, exist_ok=True)
    league.data.chmod(0o700)
    LeagueStore(league.store_path).close()  # created (or checked) before anything listens
    service = LeagueService(league)
    app = Starlette(routes=ROUTES, lifespan=lifespan,
                    exception_handlers={HTTPException: http_error,
                                        StoreError: store_unreadable},
                    middleware=[Middleware(SecurityHeaders)])
    app.state.site = Site(league, environment())
    app.state.match_models = public.MatchModels(MODELS_KEPT, read_match_log)
    app.state.receiving = Receiving()
    app.state.service = service
    app.state.background = background
    app.state.live = Hub(league.store_path, league.data / "logs")
    app.state.organiser = organiser_token(league.data)
    app.state.started_at = time.time()
    return app
