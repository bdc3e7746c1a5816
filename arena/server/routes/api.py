"""The JSON API: the standings and the final for anyone; the bots, their versions and
rating histories, the matches and submissions for an author (``Authorization: Bearer
TOKEN``), who alone sees their own versions' build logs and check reports."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from arena.rules.seeds import key_commitment
from arena.sandbox.fetch import fetched_ecosystems
from arena.server import ladder
from arena.server.config import League
from arena.server.moments import final_start
from arena.server.routes import botview
from arena.server.routes.common import integer, need_author, own_version, rated_bot, site_of
from arena.server.routes.submissions import accept, read_capped
from arena.server.store import LeagueStore, StoredMatch, Version, seated
from arena.server.uploads import UploadRefused

API_MATCHES_DEFAULT, API_MATCHES_MOST = 100, 1000
"""/api/matches: matches an answer holds unless ``limit`` says, and at most."""
STATUSES = ("scheduled", "running", "done", "failed", "discarded")


# -- the answers' shapes --------------------------------------------------------------------


def ladder_json(rows: list[ladder.LadderRow]) -> list[dict[str, Any]]:
    return [{"rank": row.rank, "bot": row.version.bot, "author": row.version.author,
             "version": row.version.number, "version_status": row.version.status,
             "state": row.version.bot_state, "reason": row.version.bot_reason,
             "mu": round(row.standing.mu, 4), "sigma": round(row.standing.sigma, 4),
             "conservative": round(row.standing.conservative, 4),
             "matches": row.standing.matches, "wins": row.standing.wins,
             "versions": row.versions} for row in rows]


def final_json(store: LeagueStore, league: League) -> dict[str, Any]:
    """The final's state and standings (the final's page shows the same), and when it
    starts while it has not (``starts``: ISO-8601 UTC with how far off; None in the final
    phase, or with no time in the league file).

    A row's ``rank`` is its place in the order of strength (exact ties share the best),
    and ``rank_interval`` the shortest run of ranks holding its rank in 95% of the
    bootstrap's resamples, which always holds ``rank``: one notion, the rank and its
    uncertainty. Rows whose intervals overlap are listed in ``cannot_separate``."""
    standings = ladder.final_standings(store)
    versions = {v.id: v for v in store.versions()}
    key = store.meta("final_key")
    counts = store.status_counts("final")
    phase = ladder.current_phase(store, league)
    rows = []
    if standings is not None:
        rows = [{"rank": row.position, "position": row.position,
                 # Reaching the rank shown: the interval reaches the row's own place, and
                 # exact ties show the best place of their run.
                 "rank_interval": [min(row.interval[0], row.position),
                                   max(row.interval[1], row.position)],
                 "bot": versions[row.entrant_id].bot,
                 "author": versions[row.entrant_id].author,
                 "version": versions[row.entrant_id].number,
                 "strength": round(row.strength, 6), "p_above_next": row.above_next,
                 "matches": row.matches} for row in standings.rows]
    return {
        "phase": phase, "starts": final_start(league.phases.frozen_until, phase, time.time()),
        "scheduled": bool(counts), "matches": counts,
        "complete": store.meta("final_complete") is not None,
        "key_commitment": key_commitment(store.key("final_key")) if key else None,
        "key": store.meta("final_key_revealed") or None,
        "standings": rows,
        "cannot_separate": [[versions[v].bot for v in group]
                            for group in (standings.groups if standings else ())],
    }


def match_json(match: StoredMatch, versions: dict[int, Version],
               results: list[Any]) -> dict[str, Any]:
    return {"match_id": match.match_id, "kind": match.kind, "status": match.status,
            "seats": [{"bot": versions[v].bot, "version": versions[v].number}
                      for v in match.seats],
            "results": [{"seat": r.seat, "bot": versions[r.version_id].bot,
                         "place": r.place, "score": r.score,
                         "disqualified": r.disqualified} for r in results],
            "finished_at": match.finished_at, "seconds": match.seconds,
            "page": f"/matches/{match.match_id}.html"}


def version_json(version: Version, own: bool, store: LeagueStore | None = None,
                 validators: int = 1) -> dict[str, Any]:
    """A version; with ``own`` (its author asks), its build log and check report too; with
    ``store``, where it stands in validation (``queue``: None once validated) and the
    version whose result it took (``reused_from``)."""
    shown: dict[str, Any] = {
        "id": version.id, "bot": version.bot, "author": version.author,
        "number": version.number, "label": version.label,
        "content_hash": version.content_hash, "status": version.status,
        "submitted_at": version.submitted_at, "activated_at": version.activated_at,
        "retired_at": version.retired_at}
    if store is not None:
        state = store.queue_state(version.id, validators)
        shown["queue"] = None if state is None else dataclasses.asdict(state)
        shown["reused_from"] = store.reused_from(version.id)
    if own:
        shown["build_log"] = version.build_log
        shown["check_report"] = version.check_report
    return shown


# -- for anyone -----------------------------------------------------------------------------


def api_standings(request: Request) -> Response:
    site = site_of(request)
    store = site.store()
    board = ladder.ladder_ratings(store, site.league)
    key = store.key("ladder_key")
    return JSONResponse({"league": site.league.name,
                         "phase": ladder.current_phase(store, site.league),
                         "key_commitment": key_commitment(key),
                         "key": store.meta("ladder_key_revealed"),
                         "ladder": ladder_json(ladder.ladder_rows(store, board))})


def api_league(request: Request) -> Response:
    """What a submission must fit: the upload caps, and how versions are validated."""
    site = site_of(request)
    league = site.league
    uploads = league.uploads
    return JSONResponse({
        "league": league.name, "phase": ladder.current_phase(site.store(), league),
        "uploads": {"max_bytes": uploads.max_bytes,
                    "max_unpacked_bytes": uploads.max_unpacked_bytes,
                    "max_files": uploads.max_files, "per_hour": uploads.per_hour},
        "validation": {"validators": league.validators,
                       "matches": league.validation_matches},
        "fetches": fetched_ecosystems(league.sandbox.fetch, league.sandbox.registries)})


def api_final(request: Request) -> Response:
    site = site_of(request)
    return JSONResponse(final_json(site.store(), site.league))


# -- for authors ----------------------------------------------------------------------------


def api_me(request: Request) -> Response:
    author = need_author(request)
    site = site_of(request)
    store = site.store()
    versions = store.versions("WHERE b.author_id = ?", (author.id,), logs=True)
    return JSONResponse({"author": author.name, "versions": [
        version_json(v, True, store, site.league.validators) for v in versions]})


def api_version(request: Request) -> Response:
    author = need_author(request)
    version = own_version(request, author, int(request.path_params["version_id"]))
    site = site_of(request)
    return JSONResponse(version_json(version, True, site.store(), site.league.validators))


def api_bots(request: Request) -> Response:
    store = site_of(request).store()
    return JSONResponse({"bots": [
        {"name": b.name, "author": b.author, "state": b.state, "reason": b.reason,
         "versions": [version_json(v, False)
                      for v in store.versions("WHERE b.id = ?", (b.id,))]}
        for b in store.bots()]})


def api_bot(request: Request) -> Response:
    """A bot: its versions with their ratings and histories, its record, its recent
    matches (opponents, result, score, rating change) and its head-to-head; its author
    also gets each version's build log and check report."""
    site = site_of(request)
    viewer = site.author(request)
    bot, _, standings = rated_bot(request, "no such bot")
    store = site.store()
    own = viewer is not None and bot.author_id == viewer.id
    versions = store.versions("WHERE b.id = ?", (bot.id,), logs=own)
    where, ids = seated([v.id for v in versions])
    matches = store.matches(f"WHERE status = 'done' AND {where}", ids,
                            newest_first=True, limit=site.pages.recent_matches)
    played = botview.record(store, bot.id)
    records = botview.head_to_head(store, site.league.store_path)
    return JSONResponse({
        "name": bot.name, "author": bot.author, "state": bot.state,
        "reason": bot.reason,
        "record": {"matches": played.matches, "wins": played.wins,
                   "win_rate": played.win_rate, "last_played": played.last_played},
        "versions": [{**version_json(v, own),
                      "mu": standings[v.id].mu, "sigma": standings[v.id].sigma,
                      "matches": standings[v.id].matches,
                      "history": [{"match_id": m, "mu": mu, "sigma": sigma}
                                  for m, mu, sigma in standings[v.id].history]}
                     for v in versions],
        "recent_matches": [line.to_json() for line in
                           botview.match_lines(store, versions, standings, matches)],
        "head_to_head": botview.head_to_head_json(
            {key: h for key, h in records.items() if key[0] == bot.name})})


def api_head_to_head(request: Request) -> Response:
    """Every two bots' ladder record: meetings, times the first finished ahead (ties
    half), the rate and its 95% interval."""
    site = site_of(request)
    return JSONResponse({"head_to_head": botview.head_to_head_json(
        botview.head_to_head(site.store(), site.league.store_path))})


def api_matches(request: Request) -> Response:
    """Matches by id, oldest first, a page at a time: ``limit`` (default 100, at most
    1,000), ``after`` (the last id of the page before), ``status`` and ``bot`` to
    filter; ``next`` is the address of the next page (None after the last)."""
    store = site_of(request).store()
    query = request.query_params
    unknown = sorted(set(query) - {"limit", "after", "status", "bot"})
    if unknown:
        raise HTTPException(400, f"unknown parameter(s) {', '.join(unknown)}; known: "
                            "limit, after, status, bot")
    limit = integer(query, "limit", API_MATCHES_DEFAULT, 1, API_MATCHES_MOST)
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
    return JSONResponse({"matches": [match_json(m, versions, results.get(m.match_id, []))
                                     for m in matches], "next": following})


def api_match(request: Request) -> Response:
    store = site_of(request).store()
    match = store.match(request.path_params["match_id"])
    if match is None:
        raise HTTPException(404, "no such match")
    versions = {v.id: v for v in store.versions()}
    return JSONResponse(match_json(match, versions, store.results_of(match.match_id)))


async def api_submit(request: Request) -> Response:
    """A bot's archive as the body: 201 with the new version, or the refusal's status and
    reason (429 with ``Retry-After``)."""
    # The token's check in a thread, never on the event loop, which answers everyone.
    author = await run_in_threadpool(need_author, request)
    site = site_of(request)
    try:
        received = await read_capped(request, site.league.uploads.max_bytes, author)
        version = await accept(request, author, received.body, received.upload)
    except UploadRefused as error:
        headers = {"Retry-After": "600"} if error.status == 429 else None
        return JSONResponse({"error": error.reason}, status_code=error.status,
                            headers=headers)
    return JSONResponse(version_json(version, True, site.store(), site.league.validators),
                        status_code=201,
                        headers={"Location": f"/api/versions/{version.id}"})
