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
import csv
import functools
import hashlib
import io
import json
import marshal
import os
import shutil
import tarfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from multiprocessing import get_context
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import orjson
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from arena.formats import json_value
from arena.league.store import SeasonStore, StoreError
from arena.rating import SeasonRatings
from arena.rating.outcome import Outcome
from arena.report.bytecode import bytecode_cache
from arena.report.charts import rating_chart, season_chart
from arena.report.data import (
    Bot,
    MatchRow,
    SeasonData,
    attach_ratings,
    rate_outcomes,
    read_match_log,
    read_season_data,
)
from arena.report.matchpage import (
    bot_stderr,
    bot_time_chart,
    move_items,
    read_model,
    seat_think_medians,
    write_match_pages,
)
from arena.rules.cards import CARD_COLOUR, CARD_NAMES
from arena.rules.narration import card_words, describe_rules, variant_lines
from arena.spreadsheet import safe_cell

COLOUR_NAMES = ("red", "yellow", "green", "blue", "wild")
ASSETS = ("style.css", "replay.js", "tables.js")
DOWNLOADS = ("standings.csv", "standings.json", "results.csv", "results.json", "logs.tar")
STATE_FILE = ".render-state.json"
STATE_FORMAT = 2
"""2: a record a match under ``matches`` (its page's key, its log's check, its seats'
median think times) rather than three string keys a match (150,000 keys at 50,000
results, each think time parsed from its own JSON string at every report)."""
MATCHES_PER_PAGE = 500
"""Rows of one page of the match list (about 350 KB): page k holds the season's matches
k*500+1 to (k+1)*500 in schedule order, so a page's address never changes as the season
goes on (the schedule is fixed; tie-break matches come after it)."""
BOT_MATCHES_PER_PAGE = 1000
"""Rows of one page of a bot's matches: a 200-entrant round robin of 4 matches a pair
(796 a bot) fits on one page."""
ROWS_PER_PART = 25
"""Rows of a bot's list of matches made as one part (see ``_write_in_parts``): a new
result changes the last part or two of its bots' lists."""
H2H_GRID_LIMIT = 30
"""Above this many ranked bots the head-to-head page is one row a bot (a 200 x 200 grid
is 40,000 cells, megabytes); each bot page lists its record against every opponent."""


@dataclass(frozen=True)
class PageLink:
    """One page of a paginated list, as the pager shows it."""

    number: int
    href: str
    """Relative to the folder of the pages it is linked from."""
    first: str
    last: str
    """The first and last match id on the page."""


def page_file(base: str, number: int) -> str:
    """``base``.html for the first page, ``base``-N.html after it (stable addresses)."""
    return f"{base}.html" if number == 1 else f"{base}-{number}.html"


def bot_matches_file(slug: str, number: int) -> str:
    """The pages of a bot's list of matches, beside its page ``slug``.html (slugs hold no
    dot: no clash)."""
    return page_file(f"{slug}.matches", number)


def _pages(ids: list[str], size: int, name: Any) -> list[PageLink]:
    return [PageLink(number, name(number), ids[start], ids[min(start + size, len(ids)) - 1])
            for number, start in enumerate(range(0, len(ids), size), start=1)]


def card_html(card: int) -> Markup:
    """A card as a readable chip: colour, symbol, and a text alternative."""
    colour = COLOUR_NAMES[CARD_COLOUR[card]]
    name = CARD_NAMES[card]
    symbol = {"W": "W", "W+4": "+4", "W+10": "+10"}.get(name, name[1:])
    symbol = {"S": "⊘", "R": "⇄"}.get(symbol, symbol)
    return Markup('<span class="card card-{}" title="{}" aria-label="{}">{}</span>').format(
        colour, card_words(card), card_words(card), symbol)


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("arena.report", "templates"),
                      autoescape=select_autoescape(), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                      # The templates do not change during a render: not a stat of the
                      # template's file each time a page asks for it (1,500 pages a report).
                      auto_reload=False,
                      # Compiled once, not by every process that renders (a quarter second).
                      bytecode_cache=bytecode_cache(_templates_version()))
    env.filters["card"] = card_html
    env.filters["move_items"] = move_items
    env.filters["pct"] = lambda x: "" if x is None else f"{x:.0%}"
    env.filters["num"] = lambda x, d=2: "" if x is None else f"{x:.{d}f}"
    # The rules in force (a RuleOptions dict from the store or a log header), §21-§32.
    env.filters["rules"] = describe_rules
    env.filters["variant_lines"] = variant_lines
    env.filters["signed"] = lambda x: "" if x is None else f"{x:+.2f}"
    env.filters["duration"] = _duration
    env.filters["names"] = _names
    # UTC, so the same store renders the same bytes on any machine.
    env.filters["date"] = lambda t: "" if t is None else (
        datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M UTC"))
    return env


@functools.cache
def _templates_version() -> str:
    """A digest of the templates and the code that renders them: once a process (they do
    not change while it runs, as ``auto_reload=False`` assumes; its environment and its
    render both ask)."""
    digest = hashlib.sha256()
    for package in ("templates", "static"):
        folder = resources.files("arena.report") / package
        for item in sorted(folder.iterdir(), key=lambda p: p.name):
            if item.is_file():
                digest.update(item.name.encode() + item.read_bytes())
    here = Path(__file__).parent
    for module in ("render.py", "data.py", "charts.py", "matchpage.py"):
        digest.update((here / module).read_bytes())
    digest.update((here.parent / "rules" / "narration.py").read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class LogProblem:
    """A played match whose log cannot be shown as it was recorded."""

    match_id: str
    kind: str
    """"missing", "altered" (not the bytes recorded with the result) or "damaged"."""
    detail: str
    path: str


@dataclass(frozen=True)
class RenderSummary:
    pages: int
    match_pages_rendered: int
    match_pages_reused: int
    out: Path
    log_problems: tuple[LogProblem, ...] = ()
    processes: int = 1
    """Processes that wrote the bots' pages (helpers forked on a machine of several cores)."""


def check_log(match: MatchRow) -> LogProblem | None:
    """What is wrong with the match's log, if anything. A log whose SHA-256 was recorded
    is checked against it (it was whole when recorded); an older store's log is read."""
    path = Path(match.log_path) if match.log_path else None
    if path is None or not path.is_file():
        where = str(path) if path else "(no log path recorded)"
        return LogProblem(match.match_id, "missing", "the log file is missing", where)
    try:
        content = path.read_bytes()
    except OSError as error:
        return LogProblem(match.match_id, "missing",
                          f"the log cannot be read ({error.strerror})", str(path))
    if match.log_sha256:
        if hashlib.sha256(content).hexdigest() != match.log_sha256:
            return LogProblem(match.match_id, "altered", "the log is not the one recorded "
                              "with the result (its SHA-256 differs)", str(path))
        return None
    try:
        _read_whole(path)
    except LogUnreadable as error:
        return LogProblem(match.match_id, "damaged", str(error), str(path))
    return None


class LogUnreadable(Exception):
    pass


def _read_whole(path: Path) -> list[dict[str, Any]]:
    try:
        records = read_match_log(path)
        if not records or records[0].get("type") != "header":
            raise ValueError("no header record")
        return records
    except (OSError, EOFError, ValueError, UnicodeDecodeError, zlib.error) as error:
        raise LogUnreadable(f"the log cannot be read ({type(error).__name__}: {error})"
                            ) from None


def render_site(store_path: Path, out: Path) -> RenderSummary:
    """Render the season in ``store_path`` into ``out`` (created if needed)."""
    with contextlib.ExitStack() as helpers:
        # What the last render left (its state, the site's files, each log's file) is
        # looked at by a helper while this process reads the store (see ``_inspect``).
        inspecting = helpers.enter_context(_meanwhile([functools.partial(
            _inspect, out, _templates_version(), store_path)]))[0]
        rating: list[Future[SeasonRatings]] = []

        def rate_meanwhile(outcomes: list[Outcome], entrant_ids: list[int]) -> None:
            # The ratings (about 1.5 s at 50,000 results) are computed by a helper from the
            # moment the store is read, while this process makes the rest of the data and
            # the pages that do not show them.
            rating.extend(helpers.enter_context(_meanwhile(
                [functools.partial(rate_outcomes, outcomes, entrant_ids)])))

        data = read_season_data(store_path, rate_meanwhile)
        return _render_site(data, out, rating[0], inspecting)


@dataclass(frozen=True)
class _Inspection:
    """The last render as it stands: what it left in the state file and the site, and
    which played matches need nothing done (``_inspect``)."""

    previous: dict[str, str]
    """The last render's keys of lists, parts and the archive."""
    known: dict[str, MatchRecord]
    """Its records of the matches not settled."""
    settled: dict[str, tuple[MatchRecord, int]]
    """Played matches whose log is the file checked last time and whose pages were
    rendered from it under these templates and are all in the site: the last render's
    record and the log's size, by match id."""
    whole: set[str]
    """Of the matches not settled, those whose files are all in the site."""


def _inspect(out: Path, version: str, store_path: Path | None) -> _Inspection:
    """Read the last render's state, list the site's folders and look at every played
    match's log file (``store_path``'s; None: none), to settle the matches a report has
    nothing to do for (at 50,000 results, nearly a second the report's own process does
    not spend: a helper does this while it reads the store). A store that does not read
    settles nothing: the report reads it and says why."""
    previous, known = _read_state(out / STATE_FILE)
    try:
        whole = _whole_matches(out)
    except OSError:  # no site yet, or a folder of it missing
        whole = set()
    logs: list[tuple[str, str | None, str | None]] = []
    with contextlib.suppress(StoreError):
        store = SeasonStore(store_path, read_only=True) if store_path else None
        try:
            logs = store.played_logs() if store else []
        finally:
            if store:
                store.close()
    settled: dict[str, tuple[MatchRecord, int]] = {}
    for match_id, log_path, sha in logs:
        before = known.get(match_id)
        if before is None or not sha or not log_path or match_id not in whole:
            continue
        try:
            stat = os.stat(log_path)
        except OSError:
            continue
        if before[1] == _checked_stamp(sha, stat) and before[0] == _log_key(version, stat):
            settled[match_id] = (before, stat.st_size)
            del known[match_id]
    return _Inspection(previous, known, settled, whole - settled.keys())


def _render_site(data: SeasonData, out: Path, ratings: Future[SeasonRatings],
                 inspecting: Future[_Inspection]) -> RenderSummary:
    env = _environment()
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("bots", "matches", "replays", "logs", "assets"):
        (out / sub).mkdir(exist_ok=True)
    for asset in ASSETS:
        source = resources.files("arena.report") / "static" / asset
        target = out / "assets" / asset
        content = source.read_bytes()
        if not target.exists() or target.read_bytes() != content:
            target.write_bytes(content)
    version = _templates_version()
    state_path = out / STATE_FILE
    try:
        inspection = inspecting.result()
    except Exception:  # a helper that died: the same looked at here
        inspection = _inspect(out, version, None)
    previous, known, whole = inspection.previous, inspection.known, inspection.whole
    state: dict[str, str] = {"_templates": version}
    # A played match's record: [its pages' key, its log's check stamp, its seats' median
    # think times], each None until known.
    match_state: dict[str, MatchRecord] = {}
    rendered = reused = 0
    # A settled match is reused as it is (its row is the one the helper read while its log
    # was checked: a done match's row does not change, and the check's stamp holds its
    # SHA-256); the others are looked at here.
    played, sizes = [], {}
    for match in data.matches:
        if match.status != "done":
            continue
        settled = inspection.settled.get(match.match_id)
        if settled is not None and match.log_sha256 and settled[0][1].startswith(
                f"{match.log_sha256}:"):
            match_state[match.match_id], sizes[match.match_id] = settled
            reused += 1
            continue
        played.append(match)
    problems: dict[str, LogProblem] = {}
    # Each log's file is looked at once: its check and its pages are reused under it.
    stats = {m.match_id: _log_stat(m) for m in played}
    for match in played:
        record = match_state[match.match_id] = [None, None, None]
        # A log checked by an earlier render is not read again while its file is the same
        # one: same inode, size, modification and change times (any write, rename over
        # it or touch changes the change time, which no user can set back).
        stamp = (_checked_stamp(match.log_sha256, stat)
                 if match.log_sha256 and (stat := stats[match.match_id]) else None)
        before = known.get(match.match_id)
        if stamp is not None and before is not None and before[1] == stamp:
            record[1] = stamp
            continue
        problem = check_log(match)
        if problem is not None:
            problems[match.match_id] = problem
        elif stamp is not None:
            record[1] = stamp
    match_pages = _pages([m.match_id for m in data.matches], MATCHES_PER_PAGE,
                         functools.partial(page_file, "matches"))
    listed_on = {m.match_id: page_file("matches", index // MATCHES_PER_PAGE + 1)
                 for index, m in enumerate(data.matches)}
    grid = len(data.ranked) <= H2H_GRID_LIMIT
    common = {"season": data, "facts": _facts(data), "log_problems": problems,
              "listed_on": listed_on, "paginated": len(match_pages) > 1, "grid": grid,
              "players": _players(data), "bots_by_name": _bots_by_name(data)}
    common["result_rows"] = _result_rows(data, common["players"])
    common["opponent_options"] = _opponent_options(data)

    site = _Site(env, out, common, version, previous, state, pages=2 * reused)
    write = site.write

    # A page is reused only while all its match's files are there (a site damaged by hand
    # is mended by the next render).
    # Match pages first: a log that passed its check but does not read whole (recorded so
    # by an older version) is found here, and the pages listing problems come after.
    todo = []
    for match in played:
        if match.match_id in problems:
            continue
        key = _log_key(version, stats[match.match_id] or Path(str(match.log_path)).stat())
        record, before = match_state[match.match_id], known.get(match.match_id)
        if before is not None and before[0] == key and match.match_id in whole:
            record[0], record[2] = key, before[2]
            reused += 1
            site.pages += 2
            continue
        todo.append((match, key))
    # A helper process takes the new matches' pages (about 20 ms each) from the back of
    # the list while this one takes them from the front.
    ends = _Ends(len(todo))
    theirs = ([functools.partial(_render_matches, site, data, todo, ends, True)]
              if len(todo) > 1 else [])
    with _meanwhile(theirs) as jobs:
        done = [_render_matches(site, data, todo, ends, False), *(j.result() for j in jobs)]
    for pages, made, found in done:
        site.pages += pages
        rendered += len(made)
        problems.update(found)
        for match_id, (key, medians) in made.items():
            match_state[match_id][0], match_state[match_id][2] = key, medians
    if problems:  # in schedule order, however the pages were shared (the site lists them)
        in_order = sorted(problems.items(), key=lambda item: data.index_of(item[0]))
        problems.clear()
        problems.update(in_order)
    for match in played:
        problem = problems.get(match.match_id)
        if problem is None:
            continue
        write(f"matches/{match.match_id}.html", "log_problem.html", 1, page="match",
              match=match, problem=problem)
        match_state[match.match_id][0] = f"{version}:problem:{problem.kind}"
        for stale in (out / "replays" / f"{match.match_id}.html",
                      out / "replays" / f"{match.match_id}.js",
                      out / "logs" / f"{match.match_id}.jsonl.gz"):
            stale.unlink(missing_ok=True)
    # A page of a list is rendered again only when something it shows changed (a season
    # of 80,000 matches has 160 pages of the match list and 200 bots' lists of 800
    # matches; a new result touches a few).
    season_key = _list_page_context(data, problems, len(match_pages))
    row_keys = _match_row_keys(data.matches, problems, listed_on)

    chunks = _chunks(data.matches, MATCHES_PER_PAGE)
    list_keys = [_list_key(version, season_key, number, (row_keys[m.match_id] for m in chunk))
                 for number, chunk in enumerate(chunks, start=1)]
    # The downloads of results and logs (about a second at 50,000 results, none of it
    # showing the ratings) are written by a helper while this process writes the pages.
    # A current copy of a log has its source's size (it was copied from the file stated).
    copied = {f"{m.match_id}.jsonl.gz": stat.st_size for m in played
              if (stat := stats[m.match_id]) is not None and match_state[m.match_id][0]
              and m.match_id not in problems}
    copied.update((f"{match_id}.jsonl.gz", size) for match_id, size in sizes.items())
    with _meanwhile([functools.partial(_write_downloads, data, out, list_keys, previous,
                                       match_state, copied)]) as (downloads,):
        for number, (chunk, key) in enumerate(zip(chunks, list_keys, strict=True), start=1):
            name = page_file("matches", number)
            if not site.reuse(name, key):
                write(name, "matches.html", 0, page="matches", matches=chunk,
                      pages=match_pages, current=number, per_page=MATCHES_PER_PAGE)
        _remove_pages(out, os.listdir(out), "matches-", {page_file("matches", p.number)
                                                         for p in match_pages})
        # What shows the ratings.
        attach_ratings(data, ratings.result())
        write("index.html", "standings.html", 0, page="standings",
              chart=season_chart(data.ranked, _season_order(data)),
              failures=_failures(data))
        write("head-to-head.html", "head_to_head.html", 0, page="h2h",
              records=[] if grid else _h2h_records(data))
        processes = _BotPages(data, match_state, season_key, row_keys).render_all(site)
        _write_standings(data, out)
        state.update(downloads.result())
    _replace(state_path, _state_json(state, match_state))
    return RenderSummary(site.pages, rendered, reused, out,
                         tuple(problems[key] for key in sorted(problems)), processes)


def _whole_matches(out: Path) -> set[str]:
    """The matches whose files are all in the site: page, replay, replay data and log
    (each folder listed once)."""
    def ids(names: list[str], suffix: str) -> set[str]:
        return {name.removesuffix(suffix) for name in names if name.endswith(suffix)}

    replays = os.listdir(out / "replays")
    return (ids(os.listdir(out / "matches"), ".html") & ids(replays, ".html")
            & ids(replays, ".js") & ids(os.listdir(out / "logs"), ".jsonl.gz"))


class _Ends:
    """The two ends of a list of work two processes share (forked after it is made): one
    takes from the front, the other from the back, until they meet; each item is taken
    once, by whichever process is free first."""

    def __init__(self, count: int) -> None:
        self._ends: Any = get_context("fork").Array("q", [0, count])

    def take(self, back: bool) -> int | None:
        with self._ends.get_lock():
            front, end = self._ends[0], self._ends[1]
            if front >= end:
                return None
            if back:
                self._ends[1] = end - 1
                return int(end - 1)
            self._ends[0] = front + 1
            return int(front)


def _render_matches(site: _Site, data: SeasonData, todo: list[tuple[MatchRow, str]],
                    ends: _Ends, back: bool
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
            records = _read_whole(log)
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


@dataclass
class _Site:
    """The site being written: its templates, folder and the context every page shares,
    the last render's keys (``previous``) and this one's (``state``), pages counted."""

    env: Environment
    out: Path
    common: dict[str, Any]
    version: str
    previous: dict[str, str]
    state: dict[str, str]
    pages: int = 0

    def write(self, path: str, template: str, depth: int, **context: Any) -> None:
        html = self.env.get_template(template).render(root="../" * depth, **self.common,
                                                      **context)
        target = self.out / path
        if not target.exists() or target.read_text(encoding="utf-8") != html:
            target.write_text(html, encoding="utf-8")
        self.pages += 1

    def reuse(self, name: str, key: str) -> bool:
        """Whether the page ``name`` was rendered under ``key`` and is still there."""
        self.state[f"list/{name}"] = key
        if self.previous.get(f"list/{name}") == key and (self.out / name).exists():
            self.pages += 1
            return True
        return False


@dataclass
class _BotPages:
    """Every bot's page and its list of matches: the largest part of a render after a few
    new results (each result moves every bot's standing), so shared between processes
    when the machine has more than one core (see ``render_all``)."""

    data: SeasonData
    match_state: dict[str, MatchRecord]
    season_key: str
    row_keys: dict[str, bytes]

    def render_all(self, site: _Site) -> int:
        """Render every bot's pages; the number of processes that did."""
        bots = list(self.data.bots.values())
        helpers = min(len(bots) // BOTS_PER_HELPER, _cores() - 1)
        if helpers <= 0:
            self.render(site, bots)
            return 1
        # Each helper writes its share of the pages and returns what it adds to the state.
        shares = [bots[index::helpers + 1] for index in range(helpers + 1)]
        with _meanwhile([functools.partial(self._render_share, site, share)
                         for share in shares[1:]]) as jobs:
            self.render(site, shares[0])
            for job in jobs:
                pages, state = job.result()
                site.pages += pages
                site.state.update(state)
        return helpers + 1

    def _render_share(self, site: _Site, bots: list[Bot]) -> tuple[int, dict[str, str]]:
        """In a helper: render these bots' pages; how many pages it counted and what it
        adds to the state."""
        site.pages, site.state = 0, {}
        self.render(site, bots)
        return site.pages, site.state

    def render(self, site: _Site, bots: list[Bot]) -> None:
        data, common, version, previous, state = (self.data, site.common, site.version,
                                                  site.previous, site.state)
        chart_range = _chart_range(data)
        deadline_ms = 1000 * float(
            data.settings.get("limits", {}).get("decision_deadline") or 1.0)
        h2h_heads = _h2h_heads(data)
        listed = os.listdir(site.out / "bots")
        for bot in bots:
            ids = [r.match_id for r in bot.results]
            bot_pages = _pages(ids, BOT_MATCHES_PER_PAGE,
                               functools.partial(bot_matches_file, bot.slug)) or [
                PageLink(1, bot_matches_file(bot.slug, 1), "", "")]
            # Every result moves every bot's standing: the bot page is rendered at every
            # report, so it is kept small; its long list of matches is on pages of their own.
            site.write(f"bots/{bot.slug}.html", "bot.html", 1, page="bot", bot=bot,
                       chart=rating_chart(bot, chart_range),
                       time_chart=bot_time_chart(bot.name,
                                                 _think_times(bot, self.match_state),
                                                 deadline_ms),
                       positions=_positions(bot), faults=_faults(data, bot),
                       h2h_rows=_h2h_rows(data, bot, common["paginated"],
                                          bool(common["facts"]["duplicate_deals"]), h2h_heads),
                       pages=bot_pages)
            bot_key = repr((bot.id, bot.label, bot.slug, len(ids), bot_pages))
            row_context = f"{self.season_key}{bot.id}"
            for number, chunk in enumerate(
                    _chunks(bot.results, BOT_MATCHES_PER_PAGE) or [[]], start=1):
                name = f"bots/{bot_matches_file(bot.slug, number)}"
                parts = f"parts/{Path(name).name}"
                # Each part of rows keyed by its rows, the page by its parts' keys (every
                # row hashed once).
                chunked = _chunks(chunk, ROWS_PER_PART)
                part_keys = [_list_key(version, row_context, part,
                                       (self.row_keys[r.match_id] for r in results))
                             for part, results in enumerate(chunked)]
                if site.reuse(name, _list_key(version, self.season_key + bot_key, number,
                                              (key.encode() for key in part_keys))):
                    if _parts_record(previous.get(parts)):  # where its rows are, for the
                        state[parts] = previous[parts]  # next time it changes
                    continue
                # A round of results adds rows to most bots' lists: the page is written
                # again around its rows, a part of rows that did not change copied from
                # the page written last time.
                html = site.env.get_template("bot_matches.html").render(
                    root="../", **{**common, "result_rows": lambda *_: _ROWS_HERE},
                    page="bot", bot=bot, results=chunk, pages=bot_pages, current=number)
                if html.count(_ROWS_HERE) != 1:  # a name holding the marker: the whole page
                    site.write(name, "bot_matches.html", 1, page="bot", bot=bot,
                               results=chunk, pages=bot_pages, current=number)
                    continue
                head, _, tail = html.partition(_ROWS_HERE)
                _write_in_parts(
                    site.out / name, head.encode(),
                    [(key, functools.partial(_rows_html, common["result_rows"], results))
                     for key, results in zip(part_keys, chunked, strict=True)],
                    b"\n", tail.encode(), previous, state)
                site.pages += 1
            _remove_pages(site.out / "bots", listed, f"{bot.slug}.matches",
                          {p.href for p in bot_pages})


BOTS_PER_HELPER = 20
"""Fewer bots than this a process are not worth a process's start."""

_WORK: list[Callable[[], Any]] = []
"""What the helpers ``_meanwhile`` forks will do (set just before they are forked)."""

T = TypeVar("T")


@contextlib.contextmanager
def _meanwhile(works: Sequence[Callable[[], Any]]) -> Iterator[list[Future[Any]]]:
    """Do ``works`` in helper processes, one each, while the caller goes on; the context
    ends when they all are done. The helpers are forked: they start from everything this
    process has read (nothing is pickled but what they return). On a machine of one core
    each work is done when its result is asked for."""
    if _cores() < 2 or not works:
        yield [_Later(work) for work in works]
        return
    global _WORK
    _WORK = list(works)
    try:
        with ProcessPoolExecutor(len(works), mp_context=get_context("fork")) as pool:
            # A fork-context pool forks all its processes at the first submit.
            jobs = [pool.submit(_do_work, index) for index in range(len(works))]
            _WORK = []
            yield jobs
    finally:
        _WORK = []


def _do_work(index: int) -> Any:
    return _WORK[index]()


class _Later(Future[T]):
    """A work done in this process when its result is first asked for."""

    def __init__(self, work: Callable[[], T]) -> None:
        super().__init__()
        self._work: Callable[[], T] | None = work

    def result(self, timeout: float | None = None) -> T:
        if self._work is not None:
            work, self._work = self._work, None
            try:
                self.set_result(work())
            except BaseException as error:
                self.set_exception(error)
        return super().result(timeout)


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


MatchRecord = list[Any]
"""What the state keeps of a played match: [its pages' key, its log's check stamp, its
seats' median think times (ms)], each None until known."""


def _read_state(path: Path) -> tuple[dict[str, str], dict[str, MatchRecord]]:
    """The last render's state: its keys of lists, parts and the archive, and its record
    of each played match. A state of the first format (three keys a match) is read into
    records, so a site rendered by an older version is not rendered again whole. A state
    that does not read is no state (everything is rendered again)."""
    try:
        loaded = json_value(path.read_text())
    except (OSError, ValueError):
        return {}, {}
    if not isinstance(loaded, dict):
        return {}, {}
    match_state: dict[str, MatchRecord] = {}
    if loaded.pop("format", None) == STATE_FORMAT:
        matches = loaded.pop("matches", None)
        if isinstance(matches, dict):
            match_state = {str(k): v for k, v in matches.items() if _is_record(v)}
        return {str(k): str(v) for k, v in loaded.items()}, match_state
    flat: dict[str, str] = {}
    for key, value in loaded.items():
        kind, slash, match_id = str(key).partition("/")
        if not slash and key != "_templates":
            match_state.setdefault(key, [None, None, None])[0] = value
        elif kind == "checked":
            match_state.setdefault(match_id, [None, None, None])[1] = value
        elif kind == "time":
            with contextlib.suppress(ValueError, TypeError):
                medians = json_value(value)
                if _is_record([None, None, medians]):
                    match_state.setdefault(match_id, [None, None, None])[2] = medians
        else:
            flat[str(key)] = str(value)
    return flat, match_state


def _is_record(value: object) -> bool:
    """Whether a state file's match record has a record's shape (a damaged or edited state
    loses that record only: its match is looked at again): its think times numbers of
    milliseconds from 0 to 2^63 (not NaN, not an integer the state file cannot hold)."""
    if not isinstance(value, list) or len(value) != 3:
        return False
    key, stamp, medians = value
    return (isinstance(key, str | None) and isinstance(stamp, str | None)
            and (medians is None or (isinstance(medians, list)
                                     and set(map(type, medians)) <= _MEDIAN_TYPES
                                     and all(m is None or 0 <= m < _MEDIAN_LIMIT
                                             for m in medians))))


_MEDIAN_TYPES = {int, float, type(None)}
_MEDIAN_LIMIT = 2 ** 63


def _state_json(state: dict[str, str], match_state: dict[str, MatchRecord]) -> bytes:
    """The state file, keys sorted (the same season gives the same file), compact as
    ``json.dumps(..., sort_keys=True, separators=(",", ":"))`` writes it, by orjson (a
    fifth of json's time: 10 MB at 50,000 results)."""
    whole = {**state, "format": STATE_FORMAT, "matches": match_state}
    try:
        return orjson.dumps(whole, option=orjson.OPT_SORT_KEYS) + b"\n"
    except orjson.JSONEncodeError:  # a think time past 64 bits, from a log made by hand
        return (json.dumps(whole, sort_keys=True, separators=(",", ":")) + "\n").encode()


def _think_times(bot: Bot, match_state: dict[str, MatchRecord]) -> list[float | None]:
    """The bot's median think time in each of its matches (schedule order), from the
    medians the match pages' render kept (None: no timing)."""
    times: list[float | None] = []
    for result in bot.results:
        record = match_state.get(result.match_id)
        medians = record[2] if record is not None and record[2] else ()
        times.append(medians[result.seat] if result.seat < len(medians) else None)
    return times


def _players(data: SeasonData) -> Any:
    """``players(match, root)``: a match's table, each bot linked with its place and
    score (as the ``match_players`` macro writes it), built once per match and folder
    depth: the match list and two bots' lists show every match, 240,000 rows a season of
    80,000 matches (the macro cost about 100 us a row, ``Markup.format`` 20)."""
    made: dict[tuple[str, str], Markup] = {}
    links = {(b.id, root): f'<a href="{root}bots/{escape(b.slug)}.html">{escape(b.name)}</a> '
                           f'<span class="muted">{escape(b.version)}</span>'
             for b in data.bots.values() for root in ("", "../")}

    def players(match: MatchRow, root: str) -> Markup:
        key = (match.match_id, root)
        html = made.get(key)
        if html is None:
            parts = []
            for seat, entrant in enumerate(match.seats):
                part = '<span class="player">' + links[(entrant, root)]
                if match.results:
                    result = match.results[seat]
                    place = result.place if result.place <= 3 else "n"
                    part += (f' <span class="place place-{place}">{result.place}</span> '
                             f'<span class="score">{result.score}</span>')
                    if result.disqualified:
                        part += ' <span class="badge bad" title="disqualified">DQ</span>'
                parts.append(part + "</span>")
            html = made[key] = Markup('<span class="vs"> · </span>'.join(parts))
        return html

    return players


def _opponent_options(data: SeasonData) -> Any:
    """``opponent_options(bot)``: the options of a bot's list's opponent filter, every
    other bot by name, written once rather than by a template loop on each of 200
    lists."""
    options = [(b.id, f'<option value="{escape(b.slug)}">{escape(b.name)}</option>')
               for b in _bots_by_name(data)]

    def opponent_options(bot: Bot) -> Markup:
        return Markup("".join(html for other, html in options if other != bot.id))

    return opponent_options


def _bots_by_name(data: SeasonData) -> list[Bot]:
    """The bots a filter offers (the ranked and the unrated) by name, case ignored, then
    by entrant: an order the ratings do not move (the pages of lists show it and are not
    rendered again when only the ratings changed)."""
    return sorted(data.ranked + data.unrated, key=lambda b: (b.name.lower(), b.id))


def _result_rows(data: SeasonData, players: Any) -> Any:
    """``result_rows(results, root)``: the rows of a bot's list of matches, written here
    rather than by a template loop (200 lists of 800 rows, most of them written again
    after a round of new results)."""
    slugs = {b.id: f"{escape(b.slug)} " for b in data.bots.values()}

    def result_rows(results: list[Any], root: str) -> Markup:
        rows = []
        for result in results:
            match = data.match(result.match_id)
            match_id = escape(result.match_id)
            place = result.place if result.place <= 3 else "n"
            rows.append(
                f'<tr data-bots="{"".join(slugs[e] for e in match.seats)}"><th scope="row">'
                f'<a href="{root}matches/{match_id}.html">{match_id}</a></th>'
                f'<td class="num">{result.seat}</td><td><span class="place place-{place}">'
                f'{result.place}</span></td><td class="num">{result.score}</td>'
                f'<td>{players(match, root)}</td></tr>')
        return Markup("\n".join(rows))

    return result_rows


_ROWS_HERE = Markup("\0rows\0")
"""Where the rows of a bot's list of matches go in its page (text no page holds: the
template escapes every name it shows)."""


def _rows_html(result_rows: Any, results: list[Any]) -> bytes:
    return str(result_rows(results, "../")).encode()


def _h2h_heads(data: SeasonData) -> dict[int, str]:
    """The start of every ranked bot's row in the head-to-head tables, by id (each is in
    the table of every other bot)."""
    return {other.id: f'<tr><th scope="row"><a href="../bots/{escape(other.slug)}.html">'
                      f'{escape(other.name)}</a> <span class="muted">'
                      f'{escape(other.version)}</span></th>' for other in data.ranked}


def _h2h_rows(data: SeasonData, bot: Bot, paginated: bool, deals: bool,
              heads: dict[int, str]) -> Markup:
    """The rows of a bot page's head-to-head table, its record against every ranked
    opponent, written here rather than by a template loop (200 bot pages of 200 rows,
    rendered at every report)."""
    rows = []
    for other in data.ranked:
        if other.id == bot.id:
            continue
        head = heads[other.id]
        h = data.head_to_head.get((bot.id, other.id))
        if h is None or not h.meetings:
            rows.append(f'{head}<td colspan="{6 if deals else 4}" class="muted">no meeting'
                        f'</td></tr>')
            continue
        low, high = h.interval()
        href = escape(f"{bot_matches_file(bot.slug, 1)}?opponent={other.slug}#results"
                      if paginated else
                      f"../matches.html?bot={bot.slug}&opponent={other.slug}")
        row = (f'{head}<td class="num">{h.wins:g}</td><td class="num">{h.meetings}</td>'
               f'<td class="heat" style="--rate: {h.rate:.3f}"><a class="cell-link" '
               f'href="{href}">{h.rate:.0%}</a></td><td>{low:.0%}\N{EN DASH}{high:.0%}</td>')
        if deals:
            behind = h.deals - h.deals_ahead - h.deals_even
            row += (f'<td class="num">{h.deals_ahead} / {h.deals_even} / {behind}</td>'
                    f'<td class="num">{h.net_points:+d}</td>' if h.deals
                    else '<td class="num"></td><td class="num"></td>')
        rows.append(row + "</tr>")
    return Markup("\n".join(rows))


def _list_page_context(data: SeasonData, problems: dict[str, LogProblem], pages: int
                       ) -> str:
    """What every page of the match list shows besides its rows."""
    bots = sorted((b.id, b.name, b.version, b.slug) for b in [*data.ranked, *data.unrated])
    # Nothing that moves with every result (the live ratings, the calibrated draw
    # probability: the footer gives it on the standings page only), or every page would.
    return repr((data.name, bots, [b.id for b in data.unrated],
                 sorted(data.settings.items()), data.tiebreak, len(data.matches), pages,
                 sorted((p.match_id, p.kind, p.detail) for p in problems.values())))


def _match_row_keys(matches: list[MatchRow], problems: dict[str, LogProblem],
                    listed_on: dict[str, str]) -> dict[str, bytes]:
    """Everything a match's row shows in a list (the match list, a bot's list of
    matches, the results download), to key the pages that list it. Marshalled (format 2:
    no references, no mark of interned strings, so equal values give equal bytes), which
    takes half of ``repr``'s time for the 80,000 rows of a large season."""
    dumps = marshal.dumps
    return {m.match_id: dumps((
        m.match_id, m.status, m.round, m.seats, m.chance,
        [(r.entrant_id, r.place, r.score, r.disqualified, len(r.faults)) for r in m.results],
        [(other, listed_on.get(other)) for other in m.deal_matches], m.net, m.rounds,
        m.round_limit_reached, m.decisions, m.seconds, m.finished_at, m.error,
        bool(m.log_path), m.match_id in problems), 2) for m in matches}


def _list_key(version: str, context: str, number: int, rows: Iterable[bytes]) -> str:
    """The digest of everything one page of a list shows: what every page shows besides
    its rows (``context``), its number and its rows' keys."""
    digest = hashlib.sha256(f"{version}\0{context}\0{number}".encode())
    for row in rows:
        digest.update(row)
    return digest.hexdigest()


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[start:start + size] for start in range(0, len(items), size)]


def _remove_pages(folder: Path, listed: list[str], prefix: str, keep: set[str]) -> None:
    """Pages of a list that has fewer pages now (a site rendered from another store):
    ``prefix``*.html among ``listed``, the folder's names (listed once for 200 bots' lists)
    but those in ``keep``."""
    for name in listed:
        if name.startswith(prefix) and name.endswith(".html") and name not in keep:
            (folder / name).unlink(missing_ok=True)


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


def _log_stat(match: MatchRow) -> os.stat_result | None:
    """The match's log file's stat (None: no log path recorded, or no file)."""
    if not match.log_path:
        return None
    try:
        return os.stat(match.log_path)
    except OSError:
        return None


def _checked_stamp(sha256: str, stat: os.stat_result) -> str:
    """What the check of a log recorded with this SHA-256 is reused under: the file it
    read (same inode, size, modification and change times)."""
    return f"{sha256}:{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}"


def _log_key(version: str, stat: os.stat_result) -> str:
    """A log's pages are reused while the templates and the log's size and time stay."""
    return f"{version}:{stat.st_size}:{stat.st_mtime_ns}"


def _replace(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` unless it holds it already, whole or not at all (a
    render killed midway leaves the last file or the new one, never a part of one)."""
    if path.is_file() and path.read_bytes() == content:
        return
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(content)
    os.replace(partial, path)


def standings_rows(data: SeasonData) -> list[dict[str, Any]]:
    """The standings as plain rows (the CSV and JSON downloads)."""
    rows = []
    for bot in data.ranked + data.unrated:
        row, live = bot.official, bot.standing
        rows.append({
            "rank": row.rank_label if row else "unrated",
            "position": row.position if row else None,
            "rank_interval_low": row.interval[0] if row else None,
            "rank_interval_high": row.interval[1] if row else None,
            "bot": bot.name, "version": bot.version,
            "strength": round(row.strength, 6) if row else None,
            "p_above_next": row.above_next if row else None,
            "live_mu": round(live.mu, 6) if live else None,
            "live_sigma": round(live.sigma, 6) if live else None,
            "matches": live.matches if live else 0,
            "wins": live.wins if live else 0,
            "average_place": round(live.average_place, 6) if live else None,
            "average_score": round(live.average_score, 6) if live else None,
            "faults": live.faults if live else 0,
        })
    return rows


def results_rows(data: SeasonData, matches: list[MatchRow] | None = None
                 ) -> list[dict[str, Any]]:
    """Every seat of every match (and every failed match, once), in schedule order; or
    of ``matches`` only."""
    rows: list[dict[str, Any]] = []
    for match in data.matches if matches is None else matches:
        base = {"match_id": match.match_id, "round": match.round, "status": match.status,
                "deal": match.chance, "finished_at": match.finished_at,
                "seconds": match.seconds, "rounds": match.rounds,
                "decisions": match.decisions}
        if not match.results:
            rows.append({**base, "seat": None, "bot": None, "version": None, "place": None,
                         "score": None, "faults": None, "disqualified": None,
                         "error": match.error})
            continue
        for result in match.results:
            bot = data.bot(result.entrant_id)
            rows.append({**base, "seat": result.seat, "bot": bot.name,
                         "version": bot.version, "place": result.place,
                         "score": result.score, "faults": len(result.faults),
                         "disqualified": result.disqualified, "error": None})
    return rows


def _csv(rows: list[dict[str, Any]], header: bool = True) -> bytes:
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        if header:
            writer.writeheader()
        writer.writerows({key: safe_cell(value) for key, value in row.items()}
                         for row in rows)
    return buffer.getvalue().encode()


def _write_downloads(data: SeasonData, out: Path, list_keys: list[str],
                     previous: dict[str, str], match_state: dict[str, MatchRecord],
                     copied: dict[str, int]) -> dict[str, str]:
    """The results downloads and the logs' archive; what they add to the state."""
    state: dict[str, str] = {}
    _write_results(data, out, list_keys, previous, state)
    _write_archive(data.name, out, previous, state, match_state, copied)
    return state


def _write_standings(data: SeasonData, out: Path) -> None:
    """The standings as CSV and JSON."""
    standings = standings_rows(data)
    _replace(out / "standings.csv", _csv(standings))
    groups = [[b.name for b in group] for group in data.groups]
    _replace(out / "standings.json", (json.dumps(
        {"season": data.name, "standings": standings, "cannot_separate": groups,
         "unrated": [b.name for b in data.unrated], "matches": data.counts},
        indent=1) + "\n").encode())


def _write_results(data: SeasonData, out: Path, list_keys: list[str],
                   previous: dict[str, str], state: dict[str, str]) -> None:
    """The results as CSV and JSON; the same store gives the same bytes.

    They are written a page of the match list at a time, each part keyed by that page's
    key (``list_keys``): the part of a page that did not change is copied from the file
    the last render wrote, so a new result costs its page's rows, not the season's."""
    chunks = _chunks(data.matches, MATCHES_PER_PAGE)
    header = _csv(results_rows(data, data.matches[:1]))
    _write_in_parts(out / "results.csv", header[:header.index(b"\n") + 1] if chunks else b"",
                    [(key, functools.partial(_results_csv, data, chunk))
                     for key, chunk in zip(list_keys, chunks, strict=True)], b"", b"",
                    previous, state)
    # One result a line: json's C encoder (an indent makes it fall back to its pure-Python
    # one, 10 s for 100,000 rows), still readable line by line.
    encode = json.JSONEncoder().encode
    _write_in_parts(out / "results.json",
                    f'{{"season": {encode(data.name)}, "results": [\n'.encode(),
                    [(key, functools.partial(_results_json, data, chunk))
                     for key, chunk in zip(list_keys, chunks, strict=True)], b",\n",
                    b"\n]}\n", previous, state)


def _results_csv(data: SeasonData, matches: list[MatchRow]) -> bytes:
    return _csv(results_rows(data, matches), header=False)


def _results_json(data: SeasonData, matches: list[MatchRow]) -> bytes:
    encode = json.JSONEncoder().encode
    return ",\n".join(encode(row) for row in results_rows(data, matches)).encode()


def _write_in_parts(path: Path, head: bytes, parts: list[tuple[str, Callable[[], bytes]]],
                    separator: bytes, tail: bytes, previous: dict[str, str],
                    state: dict[str, str]) -> None:
    """Write ``head``, the parts (key, maker) joined by ``separator``, and ``tail``; a
    part whose key the file written last time holds is copied from it, not made again."""
    known = _parts_record(previous.get(f"parts/{path.name}"))
    old = path.read_bytes() if known and path.is_file() else b""
    kept: dict[str, bytes] = {}
    if old and known and hashlib.sha256(old).hexdigest() == known[0]:
        kept = {key: old[start:end] for key, start, end in known[1]}
    pieces, spans, at = [head], [], len(head)
    for index, (key, make) in enumerate(parts):
        if index:
            pieces.append(separator)
            at += len(separator)
        piece = kept.get(key)
        piece = make() if piece is None else piece
        pieces.append(piece)
        spans.append((key, at, at + len(piece)))
        at += len(piece)
    pieces.append(tail)
    content = b"".join(pieces)
    state[f"parts/{path.name}"] = json.dumps([hashlib.sha256(content).hexdigest(), spans])
    if content != old:
        _replace(path, content)


def _parts_record(text: str | None) -> tuple[str, list[tuple[str, int, int]]] | None:
    """A state's record of a file written in parts: its SHA-256 and each part's key and
    span; None when there is none, or it is not of that shape (a state edited or damaged:
    the file is then made again whole)."""
    try:
        digest, spans = json_value(text or "")
        parts = [(str(key), int(start), int(end)) for key, start, end in spans]
    except (ValueError, TypeError):
        return None
    return (digest, parts) if isinstance(digest, str) else None


def _listing_digest(entries: list[tuple[str, int, str]]) -> str:
    return hashlib.sha256(repr(entries).encode()).hexdigest()


def _write_archive(name: str, out: Path, previous: dict[str, str],
                   state: dict[str, str], match_state: dict[str, MatchRecord],
                   copied: dict[str, int]) -> None:
    """Every log in ``logs.tar``, in name order. When the logs it already holds are still
    the first ones, unchanged (the usual case: new matches come later in the schedule),
    the new ones are written over its end, with the same bytes a whole rebuild would
    give, rather than every log of the season read and written again. ``copied``: the
    sizes of the logs this render knows were copied whole (their sources' sizes); any
    other file of the folder is looked at."""
    folder = out / "logs"
    names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl.gz"))
    sizes = {log: copied[log] if log in copied else (folder / log).stat().st_size
             for log in names}
    # A copy is known by its match's page key (its source log's size and time): the same
    # in any output folder, so the state file stays a function of the season.
    entries = [(log, sizes[log], (match_state.get(log.removesuffix(".jsonl.gz")) or [""])[0] or "")
               for log in names]
    target = out / "logs.tar"
    known = previous.get("archive/logs.tar", "")
    count, _, digest = known.partition(":")
    held = int(count) if count.isdigit() else -1
    state["archive/logs.tar"] = f"{len(entries)}:{_listing_digest(entries)}"
    if target.is_file() and 0 <= held <= len(entries) and digest == _listing_digest(
            entries[:held]) and target.stat().st_size == _archive_size(entries[:held]):
        if held == len(entries):
            return
        with target.open("r+b") as archive:
            archive.seek(_entries_end(entries[:held]))
            _add_logs(archive, name, [folder / log for log in names[held:]])
            _end_archive(archive)
        return
    partial = target.with_name(f".{target.name}.partial")
    with partial.open("wb") as archive:
        _add_logs(archive, name, [folder / log for log in names])
        _end_archive(archive)
    os.replace(partial, target)


def _add_logs(archive: BinaryIO, name: str, logs: list[Path]) -> None:
    """Each log as a USTAR entry, as ``tarfile`` writes one: its header, its bytes, zeros
    to a whole block (written here: ``tarfile`` reads every header of an archive it
    appends to)."""
    for log in logs:
        content = log.read_bytes()
        info = tarfile.TarInfo(f"{name}-logs/{log.name}")
        info.size = len(content)
        info.mode = 0o644
        archive.write(info.tobuf(tarfile.USTAR_FORMAT, tarfile.ENCODING, "surrogateescape"))
        archive.write(content + tarfile.NUL * (-len(content) % tarfile.BLOCKSIZE))


def _end_archive(archive: BinaryIO) -> None:
    """The end of an archive as ``tarfile`` writes it: two zero blocks, then zeros to a
    whole record; nothing after it."""
    end = archive.tell() + 2 * tarfile.BLOCKSIZE
    archive.write(tarfile.NUL * (2 * tarfile.BLOCKSIZE + -end % tarfile.RECORDSIZE))
    archive.truncate()


def _entries_end(entries: list[tuple[str, int, str]]) -> int:
    """Where these files' entries end in an archive (its end blocks start there)."""
    return sum(1 + -(-size // tarfile.BLOCKSIZE) for _, size, _ in entries) * tarfile.BLOCKSIZE


def _archive_size(entries: list[tuple[str, int, str]]) -> int:
    """The size of a USTAR archive of these files, as tarfile writes it."""
    size = _entries_end(entries) + 2 * tarfile.BLOCKSIZE
    return -(-size // tarfile.RECORDSIZE) * tarfile.RECORDSIZE


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{seconds:.1f} s"


def _names(bots: list[Bot]) -> str:
    names = [b.name for b in bots]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


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


def _chart_range(data: SeasonData) -> tuple[float, float]:
    low, high = 0.0, 50.0
    values = [mu + k * sigma for bot in data.bots.values() if bot.standing
              for _, mu, sigma in bot.standing.history for k in (-1, 1)]
    if values:
        low, high = min(values), max(values)
    return (low - 1, high + 1)


def _positions(bot: Bot) -> list[dict[str, Any]]:
    rows = []
    for seat in sorted(bot.seat_positions):
        results = bot.seat_positions[seat]
        wins = sum(1 for r in results if r.place == 1)
        rows.append({"seat": seat, "matches": len(results), "wins": wins,
                     "rate": wins / len(results),
                     "place": sum(r.place for r in results) / len(results),
                     "score": sum(r.score for r in results) / len(results)})
    return rows


def _faults(data: SeasonData, bot: Bot) -> list[dict[str, Any]]:
    return [{"match_id": r.match_id, "kind": f.get("kind"), "reason": f.get("reason")}
            for r in bot.results for f in r.faults]


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


def render_match_ids(out: Path) -> list[str]:
    return sorted(p.stem for p in (out / "matches").glob("*.html"))


__all__ = ["LogProblem", "MatchRow", "RenderSummary", "card_html", "check_log", "render_site"]
