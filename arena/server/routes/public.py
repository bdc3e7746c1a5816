"""What anyone sees, logged in or not: the ladder, each bot's page (versions, rating
history, matches), the match list, the head-to-head table, the final, and each played
match's page, replay and log as a published report shows them (no bot's stderr: an
author sees their own bots' at /me), with the report's assets."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from arena.league.store import StoredResult
from arena.report.charts import time_chart
from arena.report.data import MatchRow
from arena.report.matchmodel import MatchModel, read_model
from arena.report.matchpage import data_script
from arena.report.render import ASSETS, LogProblem, check_log
from arena.rules.seeds import key_commitment
from arena.server import ladder
from arena.server.kept import Kept
from arena.server.routes import botview
from arena.server.routes import live as live_view
from arena.server.routes.api import final_json
from arena.server.routes.common import page, page_number, rated_bot, site_of
from arena.server.store import StoredMatch, seated

MATCH_KINDS = ("matches", "replays")
"""The folders of a match's pages: ``/matches/ID.html`` and ``/replays/ID.html``."""


@dataclass
class MatchPages:
    """A played match's pages' model, its log's header, and its replay's script once made."""

    model: MatchModel
    header: dict[str, Any]
    script: str | None = None


class MatchModels:
    """The match pages' models of the few matches last asked (``request.app.state.
    match_models``): reading and checking a log takes about half a second, so each is read
    once while its file stays as it was (a file changed or replaced is read again)."""

    def __init__(self, most: int, read: Callable[[Path], list[dict[str, Any]]]) -> None:
        self.kept: Kept[tuple[object, ...], MatchPages] = Kept(most)
        self.read = read

    def get(self, request: Request, match: StoredMatch, row: MatchRow
            ) -> MatchPages | LogProblem:
        """The match's pages' model, read from its log once checked against the store,
        or what is wrong with the log."""
        site = site_of(request)
        path = Path(str(match.log_path))
        try:
            status = path.stat()
        except OSError:
            key: tuple[object, ...] | None = None
        else:
            key = (str(site.league.store_path), row.match_id, row.log_sha256, str(path),
                   status.st_ino, status.st_size, status.st_mtime_ns)
            kept = self.kept.get(key)
            if kept is not None:
                return kept
        problem = check_log(row)
        if problem is not None:
            return problem
        versions = {v.id: v for v in site.store().versions()}
        names = [versions[v].bot for v in match.seats]
        records = self.read(path)
        found = MatchPages(read_model(records, names), records[0])
        if key is not None:
            self.kept.put(key, found)
        return found


def match_models(request: Request) -> MatchModels:
    models: MatchModels = request.app.state.match_models
    return models


def home(request: Request) -> Response:
    live = live_view.watching(request, "/live/ladder")
    site = site_of(request)
    store = site.store()
    board = ladder.ladder_ratings(store, site.league)
    rows = ladder.ladder_rows(store, board)
    key = store.key("ladder_key")
    counts = {"done": store.done_count("ladder"),
              "running": store.count_matches("WHERE status = 'running' AND kind = 'ladder'")}
    return page(request, "server_ladder.html", rows=rows, counts=counts,
                commitment=key_commitment(key), page_name="ladder",
                revealed=store.meta("ladder_key_revealed"), actions=store.actions(), live=live)


def bot_page(request: Request) -> Response:
    """A bot's versions, rating history, record, head-to-head and recent matches; its
    author also finds links to each version's build log and check report."""
    live = live_view.watching(request, f"/live/bots/{request.path_params['name']}")
    bot, board, standings = rated_bot(request, "no bot has that name")
    site = site_of(request)
    store = site.store()
    viewer = site.author(request)
    versions = store.versions("WHERE b.id = ?", (bot.id,))
    charts = {v.id: botview.chart(v, standings[v.id], board) for v in versions}
    where, ids = seated([v.id for v in versions])
    matches = store.matches(f"WHERE status = 'done' AND {where}", ids,
                            newest_first=True, limit=site.pages.recent_matches)
    records = botview.head_to_head(store, site.league.store_path)
    opponents = sorted(((other, h) for (name, other), h in records.items()
                        if name == bot.name), key=lambda item: (-item[1].meetings, item[0]))
    return page(request, "server_bot.html", bot=bot, versions=versions,
                standings=standings, charts=charts, record=botview.record(store, bot.id),
                lines=botview.match_lines(store, versions, standings, matches),
                opponents=opponents, own=viewer is not None and bot.author_id == viewer.id,
                page_name="bot", live=live)


def matches_page(request: Request) -> Response:
    """The matches played, being played or failed, newest first, a page at a time (a
    league holds tens of thousands: one page is read)."""
    live = live_view.watching(request, "/live/matches")
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
                page_name="matches", number=number, pages=pages, live=live)


def head_to_head_page(request: Request) -> Response:
    """Every two bots on the ladder: how often each finished ahead of the other."""
    live = live_view.watching(request, "/live/head-to-head")
    site = site_of(request)
    store = site.store()
    board = ladder.ladder_ratings(store, site.league)
    names = list(dict.fromkeys(row.version.bot for row in ladder.ladder_rows(store, board)))
    return page(request, "server_head_to_head.html", names=names, page_name="head-to-head",
                records=botview.head_to_head(store, site.league.store_path), live=live)


def final_page(request: Request) -> Response:
    site = site_of(request)
    store = site.store()
    return page(request, "server_final.html", final=final_json(store, site.league),
                note=store.meta("final_note"), page_name="final")


def played_match(request: Request) -> tuple[StoredMatch, MatchRow]:
    """The match the address names, and its row as the report's pages take it; HTTP 404
    unless it was played."""
    store = site_of(request).store()
    match_id = request.path_params["match_id"]
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


def match_page(request: Request) -> Response:
    """``/matches/ID.html`` or ``/replays/ID.html``; a log that is not the one recorded
    is named on the page instead. A ladder match in play has its live replay."""
    if request.path_params["kind"] not in MATCH_KINDS:
        raise HTTPException(404, "not found")
    if request.path_params["kind"] == "replays":
        in_play = live_view.live_replay_page(request)
        if in_play is not None:
            return in_play
    match, row = played_match(request)
    checked = match_models(request).get(request, match, row)
    if isinstance(checked, LogProblem):
        return page(request, "log_problem.html", status=200, page="match", match=row,
                    problem=checked, log_problems={row.match_id: checked})
    model, header = checked.model, checked.header
    versions = {v.id: v for v in site_of(request).store().versions()}
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
        return page(request, "replay.html", page="replay", **common)
    chart, summary = time_chart(model)
    return page(request, "match.html", page="match", time_chart=chart,
                time_summary=summary, standing=standing,
                summary={"rounds": row.rounds, "decisions": row.decisions,
                         "seconds": row.seconds, "chance": row.chance,
                         "round_limit_reached": row.round_limit_reached}, **common)


def replay_data(request: Request) -> Response:
    in_play = live_view.live_replay_script(request)
    if in_play is not None:
        return in_play
    match, row = played_match(request)
    checked = match_models(request).get(request, match, row)
    if isinstance(checked, LogProblem):
        raise HTTPException(404, "the log is missing or not the one recorded")
    if checked.script is None:
        checked.script = data_script(checked.model.data)
    return Response(checked.script, media_type="text/javascript")


def match_log(request: Request) -> Response:
    match, row = played_match(request)
    if check_log(row) is not None:
        raise HTTPException(404, "the log is missing or not the one recorded")
    return FileResponse(str(match.log_path), media_type="application/gzip")


def asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in ASSETS:
        raise HTTPException(404, "no such asset")
    data = (resources.files("arena.report") / "static" / name).read_bytes()
    kind = "text/css" if name.endswith(".css") else "text/javascript"
    return Response(data, media_type=kind)
