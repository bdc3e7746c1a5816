"""Live updates over Server-Sent Events (``arena.server.live``): a stream for each page
that changes while it is open, the script the pages subscribe with, and the public view
of a ladder match in play (``arena.server.live_match``) for its replay page.

* ``/live/ladder`` (anyone): a match started, finished or failed; a version active,
  failed or retired; an organiser's action on a bot;
* ``/live/matches`` (anyone): a match started, finished or failed;
* ``/live/head-to-head`` (anyone): a ladder match finished; a version active, failed or
  retired;
* ``/live/bots/NAME`` (anyone): the bot's match finished; its version active, failed or
  retired; an action on it;
* ``/live/replays/ID`` (anyone): the ladder match in play wrote more moves; it ended;
* ``/live/me`` (an author, by their session): their own versions' stages, the queue
  moving, their bots' matches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from arena.report.matchmodel import MatchModel
from arena.report.matchpage import data_script
from arena.server.kept import Kept
from arena.server.live import Hub, Refused, Subscriber, Topic
from arena.server.live_match import flushed_records, partial_log, public_model
from arena.server.routes.common import need_author, page, site_of
from arena.server.store import StoredMatch

SCRIPT = Path(__file__).resolve().parent.parent / "static" / "live.js"
RETRY_AFTER = "30"
"""Seconds a client refused a stream is told to wait."""
MODELS_KEPT = 8
"""Public models of matches in play kept, each by its log's size (read again as it grows)."""


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.live
    return hub


def watching(request: Request, stream: str) -> dict[str, Any]:
    """What a page's live script needs: its stream, and the last change made before the
    page read the store (called first: a change after it is told to the page)."""
    return {"stream": stream, "since": hub_of(request).generation}


class EventStream(StreamingResponse):
    """A stream whose subscriber leaves however it ends (a client gone, the server
    stopping, the response cancelled)."""

    def __init__(self, hub: Hub, subscriber: Subscriber) -> None:
        super().__init__(hub.stream(subscriber), media_type="text/event-stream",
                         headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        self.hub, self.subscriber = hub, subscriber

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.hub.leave(self.subscriber)


def _since(request: Request) -> int | None:
    """The last change the page (or the stream before it reconnected) was told of."""
    text = request.headers.get("last-event-id") or request.query_params.get("since", "")
    return int(text) if text.isascii() and text.isdigit() and len(text) < 16 else None


def _open(request: Request, topic: Topic) -> Response:
    hub = hub_of(request)
    client = request.client.host if request.client else ""
    try:
        subscriber = hub.join(topic, client, _since(request))
    except Refused as refused:
        return PlainTextResponse(refused.reason, status_code=refused.status,
                                 headers={"Retry-After": RETRY_AFTER})
    return EventStream(hub, subscriber)


async def ladder_stream(request: Request) -> Response:
    return _open(request, Topic("ladder"))


async def matches_stream(request: Request) -> Response:
    return _open(request, Topic("matches"))


async def head_to_head_stream(request: Request) -> Response:
    return _open(request, Topic("head-to-head"))


async def bot_stream(request: Request) -> Response:
    return _open(request, Topic("bot", request.path_params["name"]))


async def replay_stream(request: Request) -> Response:
    return _open(request, Topic("replay", request.path_params["match_id"]))


async def me_stream(request: Request) -> Response:
    """The author's own: 401 without their session (the token's check in a thread)."""
    author = await run_in_threadpool(need_author, request)
    return _open(request, Topic("me", author=author.id))


def script(request: Request) -> Response:
    return Response(SCRIPT.read_bytes(), media_type="text/javascript")


# -- a ladder match in play -----------------------------------------------------------------


MODELS: Kept[tuple[object, ...], MatchModel] = Kept(MODELS_KEPT)


def match_in_play(request: Request) -> StoredMatch | None:
    """The ladder match the address names, if it is being played (a final's match is not
    shown in play: its deals are played again with the seats turned)."""
    match = site_of(request).store().match(request.path_params["match_id"])
    if match is None or match.status != "running" or match.kind != "ladder":
        return None
    return match


def live_model(request: Request, match: StoredMatch) -> MatchModel:
    """The public view of what its referee has written so far (read again as it grows)."""
    site = site_of(request)
    versions = {v.id: v for v in site.store().versions()}
    names = [versions[v].bot if v in versions else f"seat {seat}"
             for seat, v in enumerate(match.seats)]
    logs = site.league.data / "logs"
    # The whole log once the referee has closed it, before the result is recorded.
    finished = logs / f"{match.match_id}.jsonl.gz"
    path = partial_log(logs, match.match_id) or (finished if finished.is_file() else None)
    try:
        size = path.stat().st_size if path is not None else 0
    except OSError:
        path, size = None, 0
    key = (str(site.league.store_path), match.match_id, str(path), size)
    found = MODELS.get(key)
    if found is None:
        records = flushed_records(path) if path is not None and size else []
        found = public_model(records, names)
        MODELS.put(key, found)
    return found


def live_replay_page(request: Request) -> Response | None:
    """``/replays/ID.html`` of a ladder match in play, or None for any other match."""
    stream = watching(request, f"/live/replays/{request.path_params['match_id']}")
    match = match_in_play(request)
    if match is None:
        return None
    model = live_model(request, match)
    return page(request, "replay.html", page="replay", model=model, match_id=match.match_id,
                rounds=model.rounds, names=model.names, header={}, live=stream,
                live_match=True)


def live_replay_script(request: Request) -> Response | None:
    """``/replays/ID.js`` of a ladder match in play (its public view), or None."""
    match = match_in_play(request)
    if match is None:
        return None
    return Response(data_script(live_model(request, match).data),
                    media_type="text/javascript", headers={"Cache-Control": "no-store"})


def live_replay_data(request: Request) -> Response:
    """The public view of a match in play as JSON; ``over`` once it is no longer played
    (its page then shows the whole replay)."""
    match = match_in_play(request)
    if match is None:
        if site_of(request).store().match(request.path_params["match_id"]) is None:
            raise HTTPException(404, "no match has that id")
        return JSONResponse({"over": True})
    return JSONResponse({"over": False, "data": live_model(request, match).data},
                        headers={"Cache-Control": "no-store"})


ROUTES = [
    Route("/live/live.js", script),
    Route("/live/ladder", ladder_stream), Route("/live/matches", matches_stream),
    Route("/live/head-to-head", head_to_head_stream),
    Route("/live/bots/{name:str}", bot_stream),
    Route("/live/replays/{match_id:str}.json", live_replay_data),
    Route("/live/replays/{match_id:str}", replay_stream),
    Route("/live/me", me_stream),
]
"""The live endpoints, before the site's others (``app.ROUTES``)."""
