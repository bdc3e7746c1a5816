"""An author's actions on their own bots besides submitting, as forms on /me (and the bot
page) and as the API, with the same checks and answers: retiring a bot
(``arena.server.own_bots``), deleting a failed version, asking for a challenge match
(``arena.server.challenges``); and what /me shows of them.

* retiring a bot: ``POST /me/bots/NAME/retire``, ``POST /api/bots/NAME/retire``;
* deleting a failed version: ``POST /me/versions/ID/delete``, ``DELETE /api/versions/ID``;
* asking for a challenge: ``POST /me/challenges`` (form fields ``bot`` and ``opponent``),
  ``POST /api/challenges`` (the same as JSON); ``GET /api/challenges`` lists them.

A form sent from another site is refused (``refuse_cross_site``; the login cookie is
SameSite=Strict besides). Each action is logged as an event (``bot``, ``version`` with the
status ``deleted``, ``challenge``, ``challenge_refused``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from arena.formats import json_value
from arena.server import ladder
from arena.server.challenges import Challenge, TooSoon
from arena.server.config import League
from arena.server.events import event
from arena.server.own_bots import Deleted, remove_files
from arena.server.routes.api import match_json
from arena.server.routes.common import (
    need_author,
    own_version,
    page,
    pages_author,
    refuse_cross_site,
    site_of,
)
from arena.server.store import Author, Bot, Conflict, LeagueStore

CHALLENGES_SHOWN = 50
"""The challenges /me and /api/challenges list, newest first."""
BODY_MOST = 4096
"""Bytes of a challenge's request (two bot names)."""


@dataclass
class Refused(Exception):
    """An action refused: its HTTP status and why; ``retry_at`` past the rate limit."""

    status: int
    reason: str
    retry_at: float | None = None


# -- the actions ----------------------------------------------------------------------------


def _own_bot(store: LeagueStore, author: Author, name: str) -> Bot:
    bot = store.bot(name)
    if bot is None:
        raise Refused(404, "no bot has that name")
    if bot.author_id != author.id:
        raise Refused(403, f"the bot {name!r} belongs to another author: only its author "
                      "may retire it or challenge with it")
    return bot


def _not_in_final(store: LeagueStore, league: League, what: str) -> None:
    phase = ladder.current_phase(store, league)
    if phase == "final":
        raise Refused(409, f"the league is in its final: {what}")


def retire(request: Request, author: Author, name: str) -> list[int]:
    """Retire the author's bot ``name``: the numbers of the versions retired with it."""
    site = site_of(request)
    store = site.store()
    bot = _own_bot(store, author, name)
    _not_in_final(store, site.league, "its entrants are set")
    numbers = {v.id: v.number for v in store.versions("WHERE b.id = ?", (bot.id,))}
    try:
        retired = store.retire_bot(bot.id)
    except Conflict as error:
        raise Refused(409, str(error)) from None
    event("bot", bot=bot.name, author=author.name, state="retired",
          retired_versions=retired)
    return [numbers[v] for v in retired]


def delete(request: Request, author: Author, version_id: int) -> Deleted:
    """Delete the author's failed version ``version_id``, and its files."""
    site = site_of(request)
    try:
        own_version(request, author, version_id)
    except HTTPException as error:
        raise Refused(error.status_code, str(error.detail)) from None
    try:
        deleted = site.store().delete_failed_version(version_id, site.league.data)
    except Conflict as error:
        raise Refused(409, str(error)) from None
    remove_files(deleted)
    event("version", version_id=version_id, status="deleted", author=author.name,
          bot=deleted.bot, number=deleted.number, bot_retired=deleted.bot_retired)
    return deleted


def challenge(request: Request, author: Author, bot_name: str, opponent_name: str) -> str:
    """A challenge of the author's bot ``bot_name`` against ``opponent_name``: its id."""
    site = site_of(request)
    store = site.store()
    per_hour = site.league.challenges.per_hour
    try:
        if not per_hour:
            raise Refused(409, "this league takes no challenges ([challenges] per_hour = 0)")
        _not_in_final(store, site.league, "challenges are over")
        bot = _own_bot(store, author, bot_name)
        opponent = store.bot(opponent_name)
        if opponent is None:
            raise Refused(404, "no bot has the opponent's name")
        if opponent.id == bot.id:
            raise Refused(409, "a bot cannot challenge itself; choose another opponent")
        try:
            match_id = store.ask_challenge(author.id, bot.id, opponent.id, per_hour)
        except TooSoon as error:
            raise Refused(429, str(error), error.retry_at) from None
        except Conflict as error:
            raise Refused(409, str(error)) from None
    except Refused as refusal:
        event("challenge_refused", author=author.name, status=refusal.status,
              reason=refusal.reason[:300])
        raise
    match = store.match(match_id)
    assert match is not None
    event("challenge", match_id=match_id, author=author.name, bot=bot.name,
          opponent=opponent.name, seats=list(match.seats))
    return match_id


# -- what /me shows -------------------------------------------------------------------------


def me_values(store: LeagueStore, league: League, author: Author) -> dict[str, Any]:
    """The author's bots (retirable or not), their failed versions that may be deleted,
    their challenges (asked, or against their bots) with results, and who may challenge
    whom."""
    bots = [b for b in store.bots() if b.author_id == author.id]
    versions = store.versions("WHERE b.author_id = ?", (author.id,))
    active = store.versions("WHERE v.status = 'active' AND b.state = 'entered'")
    challenges = store.challenges([v.id for v in versions], author.id, CHALLENGES_SHOWN)
    results: dict[str, list[Any]] = {}
    for result in store.results(match_ids=[c.match.match_id for c in challenges]):
        results.setdefault(result.match_id, []).append(result)
    phase = ladder.current_phase(store, league)
    deletable = store.deletable_versions(author.id)
    return {
        "own_bots": bots, "in_final": phase == "final",
        "deletable": [v for v in versions if v.id in deletable],
        "challenges": challenges, "challenge_results": results,
        "challengers": sorted({v.bot for v in active if v.author_id == author.id}),
        "opponents": sorted({(v.bot, v.author) for v in active}),
        "quota": store.challenge_quota(author.id, league.challenges.per_hour),
    }


def me_page(request: Request, author: Author, status: int = 200, message: str | None = None,
            error: str | None = None) -> Response:
    """/me, saying what an action did (``message``) or why it was refused (``error``)."""
    site = site_of(request)
    store = site.store()
    versions = store.versions("WHERE b.author_id = ?", (author.id,))
    queue = {v.id: store.queue_state(v.id, site.league.validators) for v in versions}
    return page(request, "server_me.html", status=status, versions=versions, page_name="me",
                message=message, error=error, queue=queue,
                **me_values(store, site.league, author))


async def _form_action(request: Request, act: Any) -> Response:
    """A form's action for the logged-in author: /me saying what it did, or why not."""
    refuse_cross_site(request)
    author = await run_in_threadpool(pages_author, request)
    if isinstance(author, Response):
        return author
    fields: dict[str, str] = {}
    if request.headers.get("content-type", "").startswith(
            ("application/x-www-form-urlencoded", "multipart/form-data")):
        async with request.form(max_files=0, max_fields=4, max_part_size=BODY_MOST) as form:
            fields = {key: str(value).strip() for key, value in form.items()}

    def done() -> Response:
        try:
            message = act(author, fields)
        except Refused as refusal:
            return me_page(request, author, refusal.status, error=refusal.reason)
        return me_page(request, author, message=message)

    return await run_in_threadpool(done)


async def retire_form(request: Request) -> Response:
    name = request.path_params["name"]

    def act(author: Author, _: dict[str, str]) -> str:
        numbers = retire(request, author, name)
        kept = f" (version {', '.join(map(str, numbers))} retired with it)" if numbers else ""
        return (f"Retired {name}{kept}: it has left the ladder and does not count towards "
                "your bot limit; a new version of it brings it back.")

    return await _form_action(request, act)


async def delete_form(request: Request) -> Response:
    version_id = int(request.path_params["version_id"])

    def act(author: Author, _: dict[str, str]) -> str:
        deleted = delete(request, author, version_id)
        return (f"Deleted {deleted.bot} version {deleted.number}"
                + (f"; {deleted.bot} has no version left, and is retired" if
                   deleted.bot_retired else "") + ".")

    return await _form_action(request, act)


async def challenge_form(request: Request) -> Response:
    def act(author: Author, fields: dict[str, str]) -> str:
        match_id = challenge(request, author, fields.get("bot", ""),
                             fields.get("opponent", ""))
        return (f"Challenge {match_id} of {fields['bot']} against {fields['opponent']} is "
                "queued: it is listed below, and on both bots' pages once played.")

    return await _form_action(request, act)


# -- the API --------------------------------------------------------------------------------


def _refused_json(refusal: Refused) -> JSONResponse:
    body: dict[str, Any] = {"error": refusal.reason}
    headers = None
    if refusal.retry_at is not None:
        body["next_allowed_at"] = refusal.retry_at
        headers = {"Retry-After": str(max(1, math.ceil(refusal.retry_at - time.time())))}
    return JSONResponse(body, status_code=refusal.status, headers=headers)


def api_retire(request: Request) -> Response:
    refuse_cross_site(request)
    author = need_author(request)
    name = request.path_params["name"]
    try:
        numbers = retire(request, author, name)
    except Refused as refusal:
        return _refused_json(refusal)
    return JSONResponse({"bot": name, "state": "retired", "retired_versions": numbers})


def api_delete_version(request: Request) -> Response:
    refuse_cross_site(request)
    author = need_author(request)
    try:
        deleted = delete(request, author, int(request.path_params["version_id"]))
    except Refused as refusal:
        return _refused_json(refusal)
    return JSONResponse({"deleted": {"id": deleted.version_id, "bot": deleted.bot,
                                     "number": deleted.number},
                         "bot_retired": deleted.bot_retired})


def challenge_json(store: LeagueStore, found: Challenge) -> dict[str, Any]:
    versions = {v.id: v for v in store.versions()}
    return {**match_json(found.match, versions, store.results_of(found.match.match_id)),
            "asked_by": found.asked_by, "asked_at": found.asked_at,
            "api": f"/api/matches/{found.match.match_id}"}


async def api_challenge(request: Request) -> Response:
    """``{"bot": MINE, "opponent": THEIRS}``: 201 with the challenge, queued."""
    refuse_cross_site(request)
    author = await run_in_threadpool(need_author, request)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > BODY_MOST:
            return JSONResponse({"error": f"the request is over {BODY_MOST} bytes"},
                                status_code=413)
    try:
        asked = json_value(body)
    except ValueError:
        asked = None
    if not (isinstance(asked, dict) and isinstance(asked.get("bot"), str)
            and isinstance(asked.get("opponent"), str)):
        return JSONResponse({"error": 'send {"bot": "YOUR_BOT", "opponent": "OTHER_BOT"} '
                             "as JSON"}, status_code=422)

    def ask() -> Response:
        try:
            match_id = challenge(request, author, asked["bot"], asked["opponent"])
        except Refused as refusal:
            return _refused_json(refusal)
        store = site_of(request).store()
        found = next(c for c in store.challenges([], author.id, CHALLENGES_SHOWN)
                     if c.match.match_id == match_id)
        return JSONResponse(challenge_json(store, found), status_code=201,
                            headers={"Location": f"/api/matches/{match_id}"})

    return await run_in_threadpool(ask)


def api_challenges(request: Request) -> Response:
    """The author's challenges, asked or against their bots, newest first, and how many
    more they may ask for (``left``)."""
    author = need_author(request)
    site = site_of(request)
    store = site.store()
    mine = [v.id for v in store.versions("WHERE b.author_id = ?", (author.id,))]
    quota = store.challenge_quota(author.id, site.league.challenges.per_hour)
    return JSONResponse({
        "per_hour": quota.per_hour, "left": quota.left, "next_allowed_at": quota.next_at,
        "challenges": [challenge_json(store, c)
                       for c in store.challenges(mine, author.id, CHALLENGES_SHOWN)]})
