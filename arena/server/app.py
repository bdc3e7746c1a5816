"""The HTTP side of the league server: pages (Jinja2, in the report's style, rendered per
request from the store) and a JSON API over the same data. Handlers that only read are
plain functions, which Starlette runs in its thread pool (each thread with a store
connection of its own), so a token check (argon2) or a rating never holds up the others.

Who sees what:

* anyone: the ladder and the final standings (``/``, ``/final``, ``/api/standings``,
  ``/api/final``) and the match pages, replays and logs (as a published report shows them);
* an author (token): the bots' pages and rating histories, the match list, the rest of the
  API, submissions, and their own bots' build logs, check reports and stderr logs (never
  another author's).

A token comes as ``Authorization: Bearer TOKEN`` (the API, ``arena submit``) or, in a
browser, from the login form, kept in an HttpOnly, SameSite=Strict cookie.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import math
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from jinja2 import ChoiceLoader, Environment, PackageLoader
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.league.store import StoredResult, StoreError
from arena.rating.trueskill_ratings import Leaderboard, Standing
from arena.report import render
from arena.report.charts import rating_chart
from arena.report.data import Bot as ReportBot
from arena.report.data import MatchRow, read_match_log
from arena.report.matchpage import MatchModel, data_script, read_model, time_chart
from arena.rules.seeds import key_commitment
from arena.server import ladder
from arena.server.config import League
from arena.server.kept import Kept
from arena.server.service import LeagueService
from arena.server.store import Author, Conflict, LeagueStore, StoredMatch, Version, seated
from arena.server.uploads import Caps, UploadRefused, unpack_isolated
from arena.text import file_label

COOKIE = "arena_token"
MATCHES_PER_PAGE = 200
"""Rows of a page of /matches (a league holds tens of thousands: one page is read)."""
API_MATCHES_DEFAULT, API_MATCHES_MOST = 100, 1000
"""/api/matches: matches an answer holds unless ``limit`` says, and at most."""
RECENT_MATCHES = 50
"""The matches a bot's or a version's page lists, newest first."""
STATUSES = ("scheduled", "running", "done", "failed", "discarded")
TOKEN_CACHE = 256
FORM_OVERHEAD = 64 * 1024
"""Room for a multipart form's boundaries and fields around the archive."""
UPLOADS_AT_ONCE = 2
"""Upload bodies one author may be sending at once."""
BODIES_AT_ONCE = 16
"""Upload bodies the server receives at once (each up to ``max_bytes``, held in memory)."""


class Unauthorized(HTTPException):
    def __init__(self) -> None:
        super().__init__(401, "a token is required: log in, or send Authorization: Bearer "
                         "TOKEN (`arena server add-author` gives one)")


# -- the store, one connection per thread ---------------------------------------------


class Stores(threading.local):
    store: LeagueStore | None = None


@dataclass
class Context:
    league: League
    stores: Stores
    environment: Environment
    wrong: Kept[str, bool] = dataclasses.field(default_factory=lambda: Kept(TOKEN_CACHE))
    """Digests of tokens found wrong: a token found wrong stays wrong (a secret is drawn
    at random once), and asked again it costs no argon2."""

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
        # Checked against the store at every request (a SHA-256 and a row): a token the
        # organiser rotated stops working at once (review, stop 38: it was cached).
        found = self.store().authenticate(token)
        if found is None:
            self.wrong.put(digest, True)
        return found


def _environment() -> Environment:
    # The server's templates first: its base.html (with the league's navigation) replaces
    # the report's, under the report's own match and replay templates.
    env = render._environment()
    env.loader = ChoiceLoader([PackageLoader("arena.server", "templates"),
                               PackageLoader("arena.report", "templates")])
    env.filters["when"] = lambda t: "" if t is None else time.strftime(
        "%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))
    return env


# -- what the pages show ----------------------------------------------------------------


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


MODELS_KEPT = 32
"""Match models kept for the match and replay pages (a long match's: a few MB)."""


@dataclass
class _Model:
    """A played match's pages' model, its log's header, and its replay's script once made."""

    model: MatchModel
    header: dict[str, Any]
    script: str | None = None


def _facts(league: League) -> dict[str, Any]:
    return {"rules": league.rules.to_dict()}


def _ladder_json(rows: list[ladder.LadderRow]) -> list[dict[str, Any]]:
    return [{"rank": row.rank, "bot": row.version.bot, "author": row.version.author,
             "version": row.version.number, "version_status": row.version.status,
             "state": row.version.bot_state, "reason": row.version.bot_reason,
             "mu": round(row.standing.mu, 4), "sigma": round(row.standing.sigma, 4),
             "conservative": round(row.standing.conservative, 4),
             "matches": row.standing.matches, "wins": row.standing.wins,
             "versions": row.versions} for row in rows]


def _final_json(store: LeagueStore) -> dict[str, Any]:
    standings = ladder.final_standings(store)
    versions = {v.id: v for v in store.versions()}
    key = store.meta("final_key")
    counts = store.status_counts("final")
    rows = []
    if standings is not None:
        rows = [{"rank": row.rank_label, "position": row.position,
                 "rank_interval": list(row.interval), "bot": versions[row.entrant_id].bot,
                 "version": versions[row.entrant_id].number,
                 "strength": round(row.strength, 6), "p_above_next": row.above_next,
                 "matches": row.matches} for row in standings.rows]
    return {
        "phase": None, "scheduled": bool(counts), "matches": counts,
        "complete": store.meta("final_complete") is not None,
        "key_commitment": key_commitment(store.key("final_key")) if key else None,
        "key": store.meta("final_key_revealed") or None,
        "standings": rows,
        "cannot_separate": [[versions[v].bot for v in group]
                            for group in (standings.groups if standings else ())],
    }


def _match_json(match: StoredMatch, versions: dict[int, Version],
                results: list[Any]) -> dict[str, Any]:
    return {"match_id": match.match_id, "kind": match.kind, "status": match.status,
            "seats": [{"bot": versions[v].bot, "version": versions[v].number}
                      for v in match.seats],
            "results": [{"seat": r.seat, "bot": versions[r.version_id].bot,
                         "place": r.place, "score": r.score,
                         "disqualified": r.disqualified} for r in results],
            "finished_at": match.finished_at, "seconds": match.seconds,
            "page": f"/matches/{match.match_id}.html"}


def _version_json(version: Version, own: bool) -> dict[str, Any]:
    shown = {"id": version.id, "bot": version.bot, "author": version.author,
             "number": version.number, "label": version.label,
             "content_hash": version.content_hash, "status": version.status,
             "submitted_at": version.submitted_at, "activated_at": version.activated_at,
             "retired_at": version.retired_at}
    if own:
        shown["build_log"] = version.build_log
        shown["check_report"] = version.check_report
    return shown


# -- the application ----------------------------------------------------------------------


def create_app(league: League, *, background: bool = True) -> Starlette:
    """The ASGI application; with ``background``, the validation and match threads run
    while it is up (started and stopped with it)."""
    context = Context(league, Stores(), _environment())
    # The data folder holds the store (token hashes, secret keys) and every bot's logs:
    # the organiser's alone (the sandbox mounts what a bot needs of it for the bot).
    league.data.mkdir(parents=True, exist_ok=True)
    league.data.chmod(0o700)
    LeagueStore(league.store_path).close()  # created (or checked) before anything listens
    service = LeagueService(league)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        if background:
            service.start()
        try:
            yield
        finally:
            if background:
                await run_in_threadpool(service.stop)

    def page(template: str, request: Request, status: int = 200, **values: Any
             ) -> HTMLResponse:
        store = context.store()
        versions = {v.id: v for v in store.versions()}
        html = context.environment.get_template(template).render(
            root="/", season=LeagueView(league.name, versions), facts=_facts(league),
            author=context.author(request), phase=ladder.current_phase(store, league),
            **values)
        return HTMLResponse(html, status_code=status)

    def need_author(request: Request) -> Author:
        author = context.author(request)
        if author is None:
            raise Unauthorized()
        return author

    def pages_author(request: Request) -> Author | Response:
        author = context.author(request)
        if author is None:
            # Back to the page asked for, its query too (?page=...), quoted whole.
            asked = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"/login?next={quote(asked, safe='/')}", status_code=303)
        return author

    # -- public --------------------------------------------------------------------------

    def home(request: Request) -> Response:
        store = context.store()
        board = ladder.ladder_ratings(store, league)
        rows = ladder.ladder_rows(store, board)
        key = store.key("ladder_key")
        counts = {"done": store.done_count("ladder"),
                  "running": store.count_matches("WHERE status = 'running'")}
        return page("server_ladder.html", request, rows=rows, counts=counts,
                    commitment=key_commitment(key), page_name="ladder",
                    revealed=store.meta("ladder_key_revealed"), actions=store.actions())

    def final_page(request: Request) -> Response:
        store = context.store()
        return page("server_final.html", request, final=_final_json(store),
                    note=store.meta("final_note"), page_name="final")

    def api_standings(request: Request) -> Response:
        store = context.store()
        board = ladder.ladder_ratings(store, league)
        key = store.key("ladder_key")
        return JSONResponse({"league": league.name,
                             "phase": ladder.current_phase(store, league),
                             "key_commitment": key_commitment(key),
                             "key": store.meta("ladder_key_revealed"),
                             "ladder": _ladder_json(ladder.ladder_rows(store, board))})

    def api_final(request: Request) -> Response:
        store = context.store()
        final = _final_json(store)
        final["phase"] = ladder.current_phase(store, league)
        return JSONResponse(final)

    def played_match(match_id: str) -> tuple[StoredMatch, MatchRow]:
        store = context.store()
        match = store.match(match_id)
        if match is None or match.status != "done":
            raise HTTPException(404, "no played match has that id")
        results = [StoredResult(r.match_id, r.version_id, r.seat, r.place, r.score,
                                r.rounds_won, r.strikes, r.disqualified, r.faults)
                   for r in store.results_of(match_id)]
        row = MatchRow(match.match_id, match.status, match.label, list(match.seats), results,
                       match.seconds, match.decisions, match.rounds,
                       match.round_limit_reached, match.log_path, match.error,
                       match.finished_at, match.log_sha256)
        return match, row

    models: Kept[tuple[object, ...], _Model] = Kept(MODELS_KEPT)

    def match_model(match: StoredMatch, row: MatchRow) -> _Model | render.LogProblem:
        """The match's pages' model, read from its log once checked against the store
        (no bot's stderr: an author sees their own bots' at /me), or what is wrong with the
        log. Kept for the few matches last asked (found by attack: each page read and
        checked its log again, half a second, and forty visitors slowed the whole site to
        seconds), by the log file as it is (a file changed or replaced is read again)."""
        path = Path(str(match.log_path))
        try:
            status = path.stat()
        except OSError:
            key: tuple[object, ...] | None = None
        else:
            key = (str(context.league.store_path), row.match_id, row.log_sha256, str(path),
                   status.st_ino, status.st_size, status.st_mtime_ns)
            kept = models.get(key)
            if kept is not None:
                return kept
        problem = render.check_log(row)
        if problem is not None:
            return problem
        versions = {v.id: v for v in context.store().versions()}
        names = [versions[v].bot for v in match.seats]
        records = read_match_log(path)
        found = _Model(read_model(records, names), records[0])
        if key is not None:
            models.put(key, found)
        return found

    def match_page(request: Request) -> Response:
        match, row = played_match(request.path_params["match_id"])
        checked = match_model(match, row)
        if isinstance(checked, render.LogProblem):
            return page("log_problem.html", request, status=200, page="match", match=row,
                        problem=checked, log_problems={row.match_id: checked})
        model, header = checked.model, checked.header
        versions = {v.id: v for v in context.store().versions()}
        standing = [{"seat": r.seat, "name": model.names[r.seat],
                     "version": f"v{versions[r.entrant_id].number}"
                     if r.entrant_id in versions else "",
                     "href": f"/bots/{model.names[r.seat]}.html", "place": r.place,
                     "score": r.score, "rounds_won": r.rounds_won, "strikes": r.strikes,
                     "disqualified": r.disqualified} for r in row.results]
        common: dict[str, Any] = {"model": model, "match_id": row.match_id, "match": row,
                                  "rounds": model.rounds, "names": model.names,
                                  "header": header}
        if request.path_params["kind"] == "replays":
            return page("replay.html", request, page="replay", **common)
        chart, summary = time_chart(model)
        return page("match.html", request, page="match", time_chart=chart,
                    time_summary=summary, standing=standing,
                    summary={"rounds": row.rounds, "decisions": row.decisions,
                             "seconds": row.seconds, "chance": row.chance,
                             "round_limit_reached": row.round_limit_reached}, **common)

    def replay_data(request: Request) -> Response:
        match, row = played_match(request.path_params["match_id"])
        checked = match_model(match, row)
        if isinstance(checked, render.LogProblem):
            raise HTTPException(404, "the log is missing or not the one recorded")
        if checked.script is None:
            checked.script = data_script(checked.model.data)
        return Response(checked.script, media_type="text/javascript")

    def match_log(request: Request) -> Response:
        match, row = played_match(request.path_params["match_id"])
        if render.check_log(row) is not None:
            raise HTTPException(404, "the log is missing or not the one recorded")
        return FileResponse(str(match.log_path), media_type="application/gzip")

    def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in render.ASSETS:
            raise HTTPException(404, "no such asset")
        data = (resources.files("arena.report") / "static" / name).read_bytes()
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        return Response(data, media_type=kind)

    # -- logging in ----------------------------------------------------------------------

    def login_form(request: Request) -> Response:
        return page("server_login.html", request, error=None, page_name="login",
                    next=request.query_params.get("next", "/me"))

    async def login(request: Request) -> Response:
        refuse_cross_site(request, league.public_url)
        async with request.form(max_files=0, max_fields=4, max_part_size=4096) as form:
            token = str(form.get("token", "")).strip()
            target = str(form.get("next", "/me"))
        if not target.startswith("/") or target.startswith("//"):
            target = "/me"
        found = await run_in_threadpool(lambda: context.store().authenticate(token)) \
            if token else None
        if found is None:
            return page("server_login.html", request, status=401, page_name="login",
                        error="That token is not valid.", next=target)
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict",
                            max_age=30 * 24 * 3600,
                            secure=request.url.scheme == "https")  # served over TLS: only so
        return response

    def logout(request: Request) -> Response:
        refuse_cross_site(request, league.public_url)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE, httponly=True, samesite="strict")
        return response

    # -- for authors ---------------------------------------------------------------------

    def bot_page(request: Request) -> Response:
        author = pages_author(request)
        if isinstance(author, Response):
            return author
        store = context.store()
        name = request.path_params["name"]
        bot = store.bot(name)
        if bot is None:
            raise HTTPException(404, "no bot has that name")
        board = ladder.ladder_ratings(store, league)
        standings = {s.entrant_id: s for s in board.standings}
        versions = store.versions("WHERE b.id = ?", (bot.id,))
        charts = {v.id: _chart(v, standings[v.id], board) for v in versions}
        where, ids = seated([v.id for v in versions])
        matches = store.matches(f"WHERE status = 'done' AND {where}", ids,
                                newest_first=True, limit=RECENT_MATCHES)
        return page("server_bot.html", request, bot=bot, versions=versions,
                    standings=standings, charts=charts, matches=matches,
                    own=bot.author_id == author.id, page_name="bot")

    def matches_page(request: Request) -> Response:
        author = pages_author(request)
        if isinstance(author, Response):
            return author
        store = context.store()
        number = _page_number(request)
        where = "WHERE status IN ('done', 'running', 'failed')"
        pages = max(1, math.ceil(store.count_matches(where) / MATCHES_PER_PAGE))
        if number > pages:
            raise HTTPException(404, f"there are {pages} page(s) of matches")
        matches = store.matches(where, newest_first=True, limit=MATCHES_PER_PAGE,
                                offset=(number - 1) * MATCHES_PER_PAGE)
        results: dict[str, list[Any]] = {}
        for result in store.results(match_ids=[m.match_id for m in matches]):
            results.setdefault(result.match_id, []).append(result)
        return page("server_matches.html", request, matches=matches, results=results,
                    page_name="matches", number=number, pages=pages)

    def me(request: Request) -> Response:
        author = pages_author(request)
        if isinstance(author, Response):
            return author
        store = context.store()
        versions = store.versions("WHERE b.author_id = ?", (author.id,))
        # The page says only what the server says: a text taken from the address would let
        # a link show anything on it, under the league's name (review, stop 38).
        submitted = request.query_params.get("submitted", "")
        message = next((f"Submitted {v.bot} version {v.number}: queued for validation"
                        for v in versions if submitted.isdigit() and v.id == int(submitted)),
                       None)
        return page("server_me.html", request, versions=versions, page_name="me",
                    message=message, error=None)

    def version_page(request: Request) -> Response:
        author = pages_author(request)
        if isinstance(author, Response):
            return author
        version = own_version(author, int(request.path_params["version_id"]))
        store = context.store()
        where, ids = seated([version.id])
        matches = store.matches(f"WHERE {where}", ids, newest_first=True,
                                limit=RECENT_MATCHES)
        return page("server_version.html", request, version=version, matches=matches,
                    page_name="me")

    def stderr_log(request: Request) -> Response:
        author = need_author(request)
        store = context.store()
        match = store.match(request.path_params["match_id"])
        seat = int(request.path_params["seat"])
        if match is None or not 0 <= seat < len(match.seats):
            raise HTTPException(404, "no such match or seat")
        version = own_version(author, match.seats[seat])
        path = league.data / "output" / match.match_id / \
            f"{file_label(f'seat{seat}-{version.bot}')}.stderr.log"
        if not path.is_file():
            raise HTTPException(404, "no stderr log for that seat")
        return PlainTextResponse(path.read_bytes().decode("utf-8", errors="replace"))

    def own_version(author: Author, version_id: int) -> Version:
        version = context.store().version(version_id)
        if version is None:
            raise HTTPException(404, "no such version")
        if version.author_id != author.id:
            raise HTTPException(403, "that version belongs to another author: its logs are "
                                "theirs to see")
        return version

    receiving: dict[int, int] = {}
    """Bodies being read, by author (the event loop's own: no lock)."""

    async def submit_form(request: Request) -> Response:
        # The token's check (argon2) in a thread: never on the event loop, which answers
        # everyone (found by attack: wrong tokens sent here slowed every page to seconds).
        refuse_cross_site(request, league.public_url)
        author = await run_in_threadpool(pages_author, request)
        if isinstance(author, Response):
            return author
        try:
            body = await read_capped(request, league.uploads.max_bytes + FORM_OVERHEAD,
                                     author)

            async def replay() -> dict[str, Any]:
                return {"type": "http.request", "body": body, "more_body": False}

            async with Request(request.scope, replay).form(
                    max_files=1, max_fields=4, max_part_size=4096) as form:
                upload = form.get("archive")
                if upload is None or isinstance(upload, str):
                    raise UploadRefused(422, "choose a .tar.gz archive of the bot folder")
                archive = await upload.read()
            version = await accept(author, archive)
        except (UploadRefused, HTTPException) as error:
            status = error.status if isinstance(error, UploadRefused) else error.status_code
            reason = error.reason if isinstance(error, UploadRefused) else str(error.detail)
            store = context.store()
            versions = store.versions("WHERE b.author_id = ?", (author.id,))
            return page("server_me.html", request, status=status, versions=versions,
                        page_name="me", message=None, error=reason)
        return RedirectResponse(f"/me?submitted={version.id}", status_code=303)

    async def api_submit(request: Request) -> Response:
        author = await run_in_threadpool(need_author, request)  # as submit_form's
        try:
            archive = await read_capped(request, league.uploads.max_bytes, author)
            version = await accept(author, archive)
        except UploadRefused as error:
            headers = {"Retry-After": "600"} if error.status == 429 else None
            return JSONResponse({"error": error.reason}, status_code=error.status,
                                headers=headers)
        return JSONResponse(_version_json(version, True), status_code=201,
                            headers={"Location": f"/api/versions/{version.id}"})

    async def read_capped(request: Request, cap: int, author: Author) -> bytes:
        """The upload's body, refused before it is read when its author is past the hourly
        limit or already sending ``UPLOADS_AT_ONCE``, or the server is receiving
        ``BODIES_AT_ONCE``: 60 stalled bodies held 335 MiB, and a body was read whole only
        to be refused by the limit (review, stop 38)."""
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > cap:
            raise UploadRefused(413, f"the upload is {declared} bytes; the league accepts "
                                f"at most {cap} (max_bytes)")
        since = time.time() - 3600
        sent = await run_in_threadpool(lambda: context.store().uploads_since(author.id, since))
        if sent >= league.uploads.per_hour:
            raise UploadRefused(429, f"at most {league.uploads.per_hour} submissions an hour "
                                "(per_hour); try again later")
        mine = receiving.get(author.id, 0)
        if mine >= UPLOADS_AT_ONCE or sum(receiving.values()) >= BODIES_AT_ONCE:
            raise UploadRefused(429, "too many uploads are being received just now; try "
                                "again in a minute")
        receiving[author.id] = mine + 1
        try:
            chunks = []
            size = 0
            async for chunk in request.stream():
                size += len(chunk)
                if size > cap:
                    raise UploadRefused(413, f"the upload is over {cap} bytes; the league "
                                        "accepts no more (max_bytes)")
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            receiving[author.id] -= 1
            if not receiving[author.id]:
                del receiving[author.id]

    async def accept(author: Author, archive: bytes) -> Version:
        """Phase, rate limit (counted as the upload arrives), the archive's checks, the
        phase again (the organiser may have closed submissions meanwhile), then a new
        queued version."""
        store = context.store()

        def closed() -> UploadRefused | None:
            phase = ladder.current_phase(store, league)
            return None if phase == "open" else UploadRefused(
                409, f"the league is {phase}: submissions are closed")

        refusal = closed()
        if refusal is not None:
            raise refusal
        upload = store.reserve_upload(author.id, time.time() - 3600, league.uploads.per_hour)
        if upload is None:
            raise UploadRefused(429, f"at most {league.uploads.per_hour} submissions an hour "
                                "(per_hour); try again later")
        caps = Caps(league.uploads.max_bytes, league.uploads.max_unpacked_bytes,
                    league.uploads.max_files)
        try:
            unpacked = await run_in_threadpool(unpack_isolated, archive, caps, league.data / "bots")
            refusal = closed()
            if refusal is not None:
                raise refusal
            manifest = unpacked.manifest
            try:
                return store.add_version(author.id, manifest.name, manifest.version,
                                         unpacked.content_hash, unpacked.archive_sha256,
                                         str(manifest.folder),
                                         league.ladder.max_bots_per_author, upload)
            except Conflict as error:
                raise UploadRefused(409, str(error)) from None
        except UploadRefused as error:
            store.settle_upload(upload, f"refused: {error.reason}"[:500])
            raise
        except BaseException:
            store.settle_upload(upload, "refused: the server could not take it")
            raise

    # -- the API for authors -------------------------------------------------------------

    def api_me(request: Request) -> Response:
        author = need_author(request)
        versions = context.store().versions("WHERE b.author_id = ?", (author.id,),
                                            logs=True)
        return JSONResponse({"author": author.name,
                             "versions": [_version_json(v, True) for v in versions]})

    def api_version(request: Request) -> Response:
        author = need_author(request)
        version = own_version(author, int(request.path_params["version_id"]))
        return JSONResponse(_version_json(version, True))

    def api_bots(request: Request) -> Response:
        need_author(request)
        store = context.store()
        return JSONResponse({"bots": [
            {"name": b.name, "author": b.author, "state": b.state, "reason": b.reason,
             "versions": [_version_json(v, False)
                          for v in store.versions("WHERE b.id = ?", (b.id,))]}
            for b in store.bots()]})

    def api_bot(request: Request) -> Response:
        author = need_author(request)
        store = context.store()
        bot = store.bot(request.path_params["name"])
        if bot is None:
            raise HTTPException(404, "no such bot")
        board = ladder.ladder_ratings(store, league)
        standings = {s.entrant_id: s for s in board.standings}
        return JSONResponse({
            "name": bot.name, "author": bot.author, "state": bot.state,
            "reason": bot.reason,
            "versions": [{**_version_json(v, v.author_id == author.id),
                          "mu": standings[v.id].mu, "sigma": standings[v.id].sigma,
                          "matches": standings[v.id].matches,
                          "history": [{"match_id": m, "mu": mu, "sigma": sigma}
                                      for m, mu, sigma in standings[v.id].history]}
                         for v in store.versions("WHERE b.id = ?", (bot.id,),
                                                 logs=bot.author_id == author.id)]})

    def api_matches(request: Request) -> Response:
        """Matches by id, oldest first, a page at a time: ``limit`` (default 100, at most
        1,000), ``after`` (the last id of the page before), ``status`` and ``bot`` to
        filter; ``next`` is the address of the next page (None after the last)."""
        need_author(request)
        store = context.store()
        query = request.query_params
        unknown = sorted(set(query) - {"limit", "after", "status", "bot"})
        if unknown:
            raise HTTPException(400, f"unknown parameter(s) {', '.join(unknown)}; known: "
                                "limit, after, status, bot")
        limit = _integer(query, "limit", API_MATCHES_DEFAULT, 1, API_MATCHES_MOST)
        conditions: list[str] = []
        params: list[Any] = []
        if "after" in query:
            conditions.append("match_id > ?")
            params.append(query["after"])
        if "status" in query:
            if query["status"] not in STATUSES:
                raise HTTPException(400, f"status must be one of {', '.join(STATUSES)}")
            conditions.append("status = ?")
            params.append(query["status"])
        if "bot" in query:
            bot = store.bot(query["bot"])
            if bot is None:
                raise HTTPException(404, "no bot has that name")
            where, ids = seated([v.id for v in store.versions("WHERE b.id = ?", (bot.id,))])
            conditions.append(where)
            params += ids
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        matches = store.matches(where, params, limit=limit + 1)
        following = None
        if len(matches) > limit:
            matches = matches[:limit]
            url = request.url.include_query_params(after=matches[-1].match_id)
            following = f"{url.path}?{url.query}"
        versions = {v.id: v for v in store.versions()}
        results: dict[str, list[Any]] = {}
        for result in store.results(match_ids=[m.match_id for m in matches]):
            results.setdefault(result.match_id, []).append(result)
        return JSONResponse({"matches": [_match_json(m, versions, results.get(m.match_id, []))
                                         for m in matches], "next": following})

    def api_match(request: Request) -> Response:
        need_author(request)
        store = context.store()
        match = store.match(request.path_params["match_id"])
        if match is None:
            raise HTTPException(404, "no such match")
        versions = {v.id: v for v in store.versions()}
        return JSONResponse(_match_json(match, versions, store.results_of(match.match_id)))

    async def errors(request: Request, error: Exception) -> Response:
        # Error messages never quote the address: a link would otherwise put its own text
        # on the league's page, as the league's word (found by review).
        assert isinstance(error, HTTPException)
        if request.url.path.startswith("/api/") or error.status_code == 401:
            return JSONResponse({"error": error.detail}, status_code=error.status_code,
                                headers={"WWW-Authenticate": "Bearer"}
                                if error.status_code == 401 else None)
        return await run_in_threadpool(  # the page checks the visitor's token: a thread
            lambda: page("server_error.html", request, status=error.status_code,
                         page_name="error", message=error.detail, code=error.status_code))

    said: list[str] = []

    async def store_unreadable(request: Request, error: Exception) -> Response:
        """A damaged or unusable store: the organiser reads what and where in the server's
        log (once while it lasts); a visitor learns the site cannot answer for now, not
        the server's paths."""
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

    routes = [
        Route("/", home), Route("/index.html", home), Route("/final", final_page),
        Route("/api/standings", api_standings), Route("/api/final", api_final),
        Route("/bots/{name:str}.html", bot_page),
        Route("/{kind:str}/{match_id:str}.html", _only_kinds(match_page)),
        Route("/logs/{match_id:str}.jsonl.gz", match_log),
        Route("/replays/{match_id:str}.js", replay_data),
        Route("/assets/{name:str}", asset),
        Route("/login", login_form), Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/matches", matches_page),
        Route("/me", me), Route("/me/versions/{version_id:int}", version_page),
        Route("/me/matches/{match_id:str}/stderr/{seat:int}", stderr_log),
        Route("/me/submit", submit_form, methods=["POST"]),
        Route("/api/me", api_me), Route("/api/versions/{version_id:int}", api_version),
        Route("/api/submissions", api_submit, methods=["POST"]),
        Route("/api/bots", api_bots), Route("/api/bots/{name:str}", api_bot),
        Route("/api/matches", api_matches), Route("/api/matches/{match_id:str}", api_match),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: errors, StoreError: store_unreadable},
                    middleware=[Middleware(SecurityHeaders)])
    app.state.service = service
    return app


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


def refuse_cross_site(request: Request, public_url: str | None = None) -> None:
    """HTTP 403 for a browser's form sent from another site (its Origin, or else its
    Referer, names another host than the request's, or than the league's ``public_url``
    behind a proxy that rewrites Host; or is ``null``): no page elsewhere may log a visitor
    in to an account of its choosing (found by attack: then steer them to submit their bot
    to it), log them out, or submit for them. A request naming no origin (a script, the
    API's clients) is not a browser's form, and goes on."""
    said = request.headers.get("origin") or request.headers.get("referer")
    if said is None:
        return
    where = urlsplit(said)
    ours = {request.headers.get("host", "")}
    if public_url:
        ours.add(urlsplit(public_url).netloc)
    if said == "null" or where.netloc not in ours:
        raise HTTPException(403, "a form sent from another site is refused; use the "
                            "league's own pages")


def _page_number(request: Request) -> int:
    """The ``page`` a list's address asks for (1, the newest, when it says none)."""
    return _integer(request.query_params, "page", 1, 1, None)


def _integer(query: Any, name: str, default: int, least: int, most: int | None) -> int:
    """A whole-number query parameter, checked (HTTP 400 saying what is expected)."""
    text = query.get(name)
    if text is None:
        return default
    bound = f"from {least} to {most:,}" if most is not None else f"{least} or more"
    if not (text.isascii() and text.isdigit()) or len(text) > 12 or not (
            least <= int(text) and (most is None or int(text) <= most)):
        raise HTTPException(400, f"{name} must be a whole number {bound}")
    return int(text)


def _only_kinds(endpoint: Callable[[Request], Response]) -> Callable[[Request], Response]:
    def guarded(request: Request) -> Response:
        if request.path_params["kind"] not in ("matches", "replays"):
            raise HTTPException(404, "not found")
        return endpoint(request)

    return guarded


def _chart(version: Version, standing: Standing, board: Leaderboard) -> Markup:
    bot = ReportBot(version.id, version.bot, f"v{version.number}", version.folder,
                    version.content_hash, {}, version.bot, standing=standing)
    return rating_chart(bot, _chart_range(board))


_chart_ranges: Kept[int, tuple[Leaderboard, tuple[float, float]]] = Kept(4)
"""By the ratings' id, each with the ratings themselves (held: their id is not reused)."""


def _chart_range(board: Leaderboard) -> tuple[float, float]:
    """The rating axis every chart shares: the ladder's whole range, mu +- sigma over every
    version's history (a value per result: read once per ratings, which are cached too)."""
    found = _chart_ranges.get(id(board))
    if found is not None and found[0] is board:
        return found[1]
    values = [mu + k * sigma for s in board.standings for _, mu, sigma in s.history
              for k in (-1, 1)]
    low, high = (min(values) - 1, max(values) + 1) if values else (0.0, 50.0)
    bounds = (low if math.isfinite(low) else 0.0, high)
    _chart_ranges.put(id(board), (board, bounds))
    return bounds
