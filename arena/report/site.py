"""Render a season into a static site: standings, head-to-head, bots, matches, replays.

Pages use relative links only, so the folder works from disk, from ``arena serve``, or
from any static host. Rendering is deterministic (same store and logs, same bytes) and
incremental: a match's pages are rewritten only when its log or the templates changed.

Every played match's log is checked first: it must exist, match the SHA-256 recorded with
the result, and read whole. A log that does not is listed on the site (and in
``RenderSummary.log_problems``) and its match gets a page saying so, from the store's
result; everything else is rendered as usual.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.rating import SeasonRatings
from arena.rating.outcome import Outcome
from arena.report import workers
from arena.report.botpages import BotPages
from arena.report.charts import season_chart
from arena.report.data import MatchRow, SeasonData, attach_ratings, rate_outcomes, read_season_data
from arena.report.downloads import write_downloads, write_standings
from arena.report.incremental import (
    STATE_FILE,
    Inspection,
    MatchRecord,
    checked_stamp,
    inspect_site,
    list_key,
    list_page_context,
    log_key,
    match_row_keys,
    replace,
    state_json,
)
from arena.report.lists import (
    bots_by_name,
    chunks,
    opponent_options,
    page_file,
    page_links,
    players,
    remove_pages,
    result_rows,
)
from arena.report.logcheck import LogProblem, LogUnreadable, check_log, log_stat, read_whole
from arena.report.matchmodel import bot_stderr, read_model, seat_think_medians
from arena.report.matchpage import write_match_pages
from arena.report.templating import Site, copy_assets, environment, templates_version

MATCHES_PER_PAGE = 500
"""Rows of one page of the match list (about 350 KB): page k holds the season's matches
k*500+1 to (k+1)*500 in schedule order, so a page's address never changes as the season
goes on (the schedule is fixed; tie-break matches come after it)."""
H2H_GRID_LIMIT = 30
"""Above this many ranked bots the head-to-head page is one row a bot (a 200 x 200 grid
is 40,000 cells, megabytes); each bot page lists its record against every opponent."""


@dataclass(frozen=True)
class RenderSummary:
    pages: int
    match_pages_rendered: int
    match_pages_reused: int
    out: Path
    log_problems: tuple[LogProblem, ...] = ()
    processes: int = 1
    """Processes that wrote the bots' pages (helpers forked on a machine of several cores)."""


def render_site(store_path: Path, out: Path) -> RenderSummary:
    """Render the season in ``store_path`` into ``out`` (created if needed)."""
    with contextlib.ExitStack() as helpers:
        # What the last render left (its state, the site's files, each log's file) is
        # looked at by a helper while this process reads the store.
        inspecting = helpers.enter_context(workers.meanwhile([functools.partial(
            inspect_site, out, templates_version(), store_path)]))[0]
        rating: list[Future[SeasonRatings]] = []

        def rate_meanwhile(outcomes: list[Outcome], names: dict[int, str]) -> None:
            # The ratings (about 1.5 s at 50,000 results) are computed by a helper from the
            # moment the store is read, while this process makes the rest of the data and
            # the pages that do not show them.
            rating.extend(helpers.enter_context(workers.meanwhile(
                [functools.partial(rate_outcomes, outcomes, names)])))

        data = read_season_data(store_path, rate_meanwhile)
        return _render_site(data, out, rating[0], inspecting)


@dataclass
class _Played:
    """The played matches of a render, as its steps learn about them."""

    records: dict[str, MatchRecord] = field(default_factory=dict)
    """Each played match's record for the state (a settled one's as the last render left
    it)."""
    looked_at: list[MatchRow] = field(default_factory=list)
    """The played matches the inspection did not settle, in schedule order."""
    stats: dict[str, os.stat_result | None] = field(default_factory=dict)
    """Each looked-at match's log file, stated once: its check and its pages are reused
    under it."""
    settled_sizes: dict[str, int] = field(default_factory=dict)
    """The settled matches' log sizes (their copies in the site have them)."""
    problems: dict[str, LogProblem] = field(default_factory=dict)
    """The logs that cannot be shown, by match (in schedule order once the match pages
    are made)."""
    reused: int = 0
    """Matches whose pages were reused."""


def _render_site(data: SeasonData, out: Path, ratings: Future[SeasonRatings],
                 inspecting: Future[Inspection]) -> RenderSummary:
    env = environment()
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("bots", "matches", "replays", "logs", "assets"):
        (out / sub).mkdir(exist_ok=True)
    copy_assets(out)
    version = templates_version()
    try:
        inspection = inspecting.result()
    except Exception:  # a helper that died: the same looked at here
        inspection = inspect_site(out, version, None)
    played = _check_logs(data, inspection)
    problems = played.problems
    match_pages = page_links([m.match_id for m in data.matches], MATCHES_PER_PAGE,
                             functools.partial(page_file, "matches"))
    listed_on = {m.match_id: page_file("matches", index // MATCHES_PER_PAGE + 1)
                 for index, m in enumerate(data.matches)}
    grid = len(data.ranked) <= H2H_GRID_LIMIT
    match_players = players(data)
    common: dict[str, Any] = {
        "season": data, "facts": _facts(data), "log_problems": problems,
        "listed_on": listed_on, "paginated": len(match_pages) > 1, "grid": grid,
        "players": match_players, "bots_by_name": bots_by_name(data),
        "result_rows": result_rows(data, match_players),
        "opponent_options": opponent_options(data)}
    state: dict[str, str] = {"_templates": version}
    site = Site(env, out, common, version, inspection.previous, state,
                pages=2 * played.reused)
    # Match pages first: a log that passed its check but does not read whole (its SHA-256
    # recorded of damaged bytes) is found here, and the pages listing problems come after.
    rendered = _render_match_pages(site, data, played, inspection)
    _write_problem_pages(site, played)
    # A page of a list is rendered again only when something it shows changed (a season
    # of 80,000 matches has 160 pages of the match list and 200 bots' lists of 800
    # matches; a new result touches a few).
    season_key = list_page_context(data, problems, len(match_pages))
    row_keys = match_row_keys(data.matches, problems, listed_on)
    pages = [(list_key(version, season_key, number, (row_keys[m.match_id] for m in chunk)),
              chunk) for number, chunk in enumerate(chunks(data.matches, MATCHES_PER_PAGE),
                                                    start=1)]
    # The downloads of results and logs (about a second at 50,000 results, none of it
    # showing the ratings) are written by a helper while this process writes the pages.
    # A current copy of a log has its source's size (it was copied from the file stated).
    copied = {f"{m.match_id}.jsonl.gz": stat.st_size for m in played.looked_at
              if (stat := played.stats[m.match_id]) is not None
              and played.records[m.match_id][0] and m.match_id not in problems}
    copied.update((f"{match_id}.jsonl.gz", size)
                  for match_id, size in played.settled_sizes.items())
    with workers.meanwhile([functools.partial(write_downloads, data, out, pages,
                                              inspection.previous, played.records,
                                              copied)]) as (downloads,):
        for number, (key, chunk) in enumerate(pages, start=1):
            name = page_file("matches", number)
            if not site.reuse(name, key):
                site.write(name, "matches.html", 0, page="matches", matches=chunk,
                           pages=match_pages, current=number, per_page=MATCHES_PER_PAGE)
        remove_pages(out, os.listdir(out), "matches-", {page_file("matches", p.number)
                                                        for p in match_pages})
        # What shows the ratings.
        attach_ratings(data, ratings.result())
        site.write("index.html", "standings.html", 0, page="standings",
                   chart=season_chart(data.ranked, _season_order(data)),
                   failures=_failures(data))
        site.write("head-to-head.html", "head_to_head.html", 0, page="h2h",
                   records=[] if grid else _h2h_records(data))
        processes = BotPages(data, played.records, season_key, row_keys).render_all(site)
        write_standings(data, out)
        state.update(downloads.result())
    replace(out / STATE_FILE, state_json(state, played.records))
    return RenderSummary(site.pages, rendered, played.reused, out,
                         tuple(problems[key] for key in sorted(problems)), processes)


def _check_logs(data: SeasonData, inspection: Inspection) -> _Played:
    """Every played match's record, its log checked unless the inspection settled it or
    an earlier render checked the same file."""
    played = _Played()
    # A settled match is reused as it is (its row is the one the helper read while its log
    # was checked: a done match's row does not change, and the check's stamp holds its
    # SHA-256); the others are looked at here.
    for match in data.matches:
        if match.status != "done":
            continue
        settled = inspection.settled.get(match.match_id)
        if settled is not None and match.log_sha256 and settled[0][1].startswith(
                f"{match.log_sha256}:"):
            played.records[match.match_id], played.settled_sizes[match.match_id] = settled
            played.reused += 1
            continue
        played.looked_at.append(match)
    played.stats = {m.match_id: log_stat(m) for m in played.looked_at}
    for match in played.looked_at:
        record = played.records[match.match_id] = [None, None, None]
        stamp = (checked_stamp(match.log_sha256, stat)
                 if match.log_sha256 and (stat := played.stats[match.match_id]) else None)
        before = inspection.known.get(match.match_id)
        if stamp is not None and before is not None and before[1] == stamp:
            record[1] = stamp
            continue
        problem = check_log(match)
        if problem is not None:
            played.problems[match.match_id] = problem
        elif stamp is not None:
            record[1] = stamp
    return played


def _render_match_pages(site: Site, data: SeasonData, played: _Played,
                        inspection: Inspection) -> int:
    """The pages of every looked-at match whose log passed its check, but those rendered
    from the same log under the same templates and still all in the site (a site damaged
    by hand is mended); how many were rendered."""
    todo = []
    for match in played.looked_at:
        if match.match_id in played.problems:
            continue
        key = log_key(site.version,
                      played.stats[match.match_id] or Path(str(match.log_path)).stat())
        record, before = played.records[match.match_id], inspection.known.get(match.match_id)
        if before is not None and before[0] == key and match.match_id in inspection.whole:
            record[0], record[2] = key, before[2]
            played.reused += 1
            site.pages += 2
            continue
        todo.append((match, key))
    # A helper process takes the new matches' pages (about 20 ms each) from the back of
    # the list while this one takes them from the front.
    ends = workers.Ends(len(todo))
    theirs = ([functools.partial(_render_matches, site, data, todo, ends, True)]
              if len(todo) > 1 else [])
    with workers.meanwhile(theirs) as jobs:
        done = [_render_matches(site, data, todo, ends, False), *(j.result() for j in jobs)]
    rendered = 0
    for pages, made, found in done:
        site.pages += pages
        rendered += len(made)
        played.problems.update(found)
        for match_id, (key, medians) in made.items():
            played.records[match_id][0], played.records[match_id][2] = key, medians
    if played.problems:  # in schedule order, however the pages were shared
        in_order = sorted(played.problems.items(), key=lambda item: data.index_of(item[0]))
        played.problems.clear()
        played.problems.update(in_order)
    return rendered


def _render_matches(site: Site, data: SeasonData, todo: list[tuple[MatchRow, str]],
                    ends: workers.Ends, back: bool
                    ) -> tuple[int, dict[str, tuple[str, list[float | None]]],
                               dict[str, LogProblem]]:
    """Render the pages of the matches this process takes from ``todo`` (each with its
    pages' key; from its ``back`` or its front) and copy their logs: the pages written,
    each rendered match's key and seats' median think times, and the problems found in
    logs that do not read whole."""
    pages, made, problems = site.pages, {}, {}
    while (index := ends.take(back)) is not None:
        match, key = todo[index]
        log = Path(str(match.log_path))
        try:
            records = read_whole(log)
        except LogUnreadable as error:
            problems[match.match_id] = LogProblem(match.match_id, "damaged", str(error),
                                                  str(log))
            continue
        names = [data.bot(e).name for e in match.seats]
        try:
            model = read_model(records, names, bot_stderr(log, names))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
            problems[match.match_id] = LogProblem(
                match.match_id, "damaged", f"the log's lines do not hold what a match log's "
                f"lines hold ({type(error).__name__}: {error})", str(log))
            continue
        # Each seat's median think time, kept for the bots' charts (a reused match's
        # log is not read again).
        made[match.match_id] = (key, seat_think_medians(model))
        write_match_pages(site.write, site.out, model, match.match_id, header=records[0],
                          standing=_standing(data, match),
                          summary={"rounds": match.rounds, "decisions": match.decisions,
                                   "seconds": match.seconds, "chance": match.chance,
                                   "round_limit_reached": match.round_limit_reached})
        shutil.copyfile(log, site.out / "logs" / f"{match.match_id}.jsonl.gz")
    written, site.pages = site.pages - pages, pages  # counted by the caller
    return written, made, problems


def _write_problem_pages(site: Site, played: _Played) -> None:
    """A page for each match whose log has a problem, saying so; its replay and log copy
    removed (they would show a log that is not the one recorded)."""
    for match in played.looked_at:
        problem = played.problems.get(match.match_id)
        if problem is None:
            continue
        site.write(f"matches/{match.match_id}.html", "log_problem.html", 1, page="match",
                   match=match, problem=problem)
        played.records[match.match_id][0] = f"{site.version}:problem:{problem.kind}"
        for stale in (site.out / "replays" / f"{match.match_id}.html",
                      site.out / "replays" / f"{match.match_id}.js",
                      site.out / "logs" / f"{match.match_id}.jsonl.gz"):
            stale.unlink(missing_ok=True)


def _season_order(data: SeasonData) -> list[str]:
    """Done matches in schedule order: the x axis of the season's rating chart."""
    return [m.match_id for m in data.matches if m.status == "done"]


def _failures(data: SeasonData) -> list[dict[str, Any]]:
    """Failed matches, grouped by their reason's last line (what the organiser must fix)."""
    reasons: dict[str, list[str]] = {}
    for match in data.matches:
        if match.status == "failed":
            lines = str(match.error or "unknown error").strip().splitlines() or ["?"]
            reasons.setdefault(lines[-1], []).append(match.match_id)
    return [{"reason": reason, "matches": ids} for reason, ids in sorted(
        reasons.items(), key=lambda item: (-len(item[1]), item[0]))]


def _facts(data: SeasonData) -> dict[str, Any]:
    settings = data.settings
    finished = [m.finished_at for m in data.matches if m.finished_at]
    return {
        "rules": settings.get("rules", {}),
        "limits": settings.get("limits", {}),
        "sandbox": settings.get("sandbox", {}),
        "table_size": settings.get("table_size"),
        "matches_per_group": settings.get("matches_per_group"),
        "duplicate_deals": settings.get("duplicate_deals"),
        "key_commitment": data.key_commitment,
        "revealed_key": data.revealed_key,
        "first": min(finished) if finished else None,
        "last": max(finished) if finished else None,
        "done": data.counts.get("done", 0),
        "failed": data.counts.get("failed", 0),
        "scheduled": data.counts.get("scheduled", 0),
        "tiebreak": data.tiebreak,
    }


def _standing(data: SeasonData, match: MatchRow) -> list[dict[str, Any]]:
    """The match page's final standing, each bot linked to its page."""
    rows = []
    for result in match.results:
        bot = data.bot(result.entrant_id)
        rows.append({"seat": result.seat, "name": bot.name, "version": bot.version,
                     "href": f"../bots/{bot.slug}.html", "place": result.place,
                     "score": result.score, "rounds_won": result.rounds_won,
                     "strikes": result.strikes, "disqualified": result.disqualified})
    return rows


def _h2h_records(data: SeasonData) -> list[dict[str, Any]]:
    """One row a bot for a large season's head-to-head page: its record over every
    opponent, its best and worst opponent, and its duplicate deals."""
    rows = []
    for bot in data.ranked:
        met = [(other, data.head_to_head.get((bot.id, other.id))) for other in data.ranked
               if other.id != bot.id]
        records = [(other, h) for other, h in met if h is not None and h.meetings]
        meetings = sum(h.meetings for _, h in records)
        wins = sum(h.wins for _, h in records)
        best = max(records, key=lambda item: (item[1].rate, item[1].meetings), default=None)
        worst = min(records, key=lambda item: (item[1].rate, -item[1].meetings),
                    default=None)
        deals = sum(h.deals for _, h in records)
        rows.append({
            "bot": bot, "opponents": len(records), "of": len(met), "meetings": meetings,
            "wins": wins, "rate": wins / meetings if meetings else None,
            "best": best, "worst": worst, "deals": deals,
            "deals_ahead": sum(h.deals_ahead for _, h in records),
            "deals_even": sum(h.deals_even for _, h in records),
            "net_points": sum(h.net_points for _, h in records)})
    return rows
