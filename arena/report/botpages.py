"""Every bot's page and its list of matches: after a few new results the largest part of
a render (each result moves every bot's standing), so shared with forked helpers on a
machine of several cores."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from arena.report import workers
from arena.report.charts import bot_time_chart, rating_chart
from arena.report.data import Bot, SeasonData
from arena.report.incremental import MatchRecord, list_key, parts_record, write_in_parts
from arena.report.lists import PageLink, bot_matches_file, chunks, page_links, remove_pages
from arena.report.templating import Site

BOT_MATCHES_PER_PAGE = 1000
"""Rows of one page of a bot's matches: a 200-entrant round robin of 4 matches a pair
(796 a bot) fits on one page."""
ROWS_PER_PART = 25
"""Rows of a bot's list of matches made as one part (``write_in_parts``): a new result
changes the last part or two of its bots' lists."""
BOTS_PER_HELPER = 20
"""Fewer bots than this a process are not worth a process's start."""
ROWS_HERE = Markup("\0rows\0")
"""Where the rows of a bot's list of matches go in its page (text no page holds: the
template escapes every name it shows)."""


@dataclass
class BotPages:
    """What every bot's pages are made from besides the site: each played match's record
    (its seats' think times), and the keys of the lists' rows."""

    data: SeasonData
    match_state: dict[str, MatchRecord]
    season_key: str
    row_keys: dict[str, bytes]

    def render_all(self, site: Site) -> int:
        """Render every bot's pages; the number of processes that did."""
        bots = list(self.data.bots.values())
        helpers = min(len(bots) // BOTS_PER_HELPER, workers.cores() - 1)
        if helpers <= 0:
            self.render(site, bots)
            return 1
        # Each helper writes its share of the pages and returns what it adds to the state.
        shares = [bots[index::helpers + 1] for index in range(helpers + 1)]
        with workers.meanwhile([functools.partial(self._render_share, site, share)
                                for share in shares[1:]]) as jobs:
            self.render(site, shares[0])
            for job in jobs:
                pages, state = job.result()
                site.pages += pages
                site.state.update(state)
        return helpers + 1

    def _render_share(self, site: Site, bots: list[Bot]) -> tuple[int, dict[str, str]]:
        """In a helper: render these bots' pages; how many pages it counted and what it
        adds to the state."""
        site.pages, site.state = 0, {}
        self.render(site, bots)
        return site.pages, site.state

    def render(self, site: Site, bots: list[Bot]) -> None:
        data, common = self.data, site.common
        chart_range = _chart_range(data)
        deadline_ms = 1000 * float(
            data.settings.get("limits", {}).get("decision_deadline") or 1.0)
        heads = _h2h_heads(data)
        listed = os.listdir(site.out / "bots")
        for bot in bots:
            ids = [r.match_id for r in bot.results]
            pages = page_links(ids, BOT_MATCHES_PER_PAGE,
                               functools.partial(bot_matches_file, bot.slug)) or [
                PageLink(1, bot_matches_file(bot.slug, 1), "", "")]
            # Every result moves every bot's standing: the bot page is rendered at every
            # report, so it is kept small; its long list of matches is on pages of their own.
            site.write(f"bots/{bot.slug}.html", "bot.html", 1, page="bot", bot=bot,
                       chart=rating_chart(bot, chart_range),
                       time_chart=bot_time_chart(bot.name,
                                                 _think_times(bot, self.match_state),
                                                 deadline_ms),
                       positions=_positions(bot), faults=_faults(bot),
                       h2h_rows=_h2h_rows(data, bot, common["paginated"],
                                          bool(common["facts"]["duplicate_deals"]), heads),
                       pages=pages)
            bot_key = repr((bot.id, bot.label, bot.slug, len(ids), pages))
            for number, chunk in enumerate(
                    chunks(bot.results, BOT_MATCHES_PER_PAGE) or [[]], start=1):
                self._render_list_page(site, bot, bot_key, pages, number, chunk)
            remove_pages(site.out / "bots", listed, f"{bot.slug}.matches",
                         {p.href for p in pages})

    def _render_list_page(self, site: Site, bot: Bot, bot_key: str, pages: list[PageLink],
                          number: int, results: list[Any]) -> None:
        """Page ``number`` of the bot's list of matches, ``results`` its rows: reused while
        its key stands, else written around its rows, each part of rows whose key the
        page written last time holds copied from it."""
        name = f"bots/{bot_matches_file(bot.slug, number)}"
        parts = f"parts/{Path(name).name}"
        # Each part of rows keyed by its rows, the page by its parts' keys (every row
        # hashed once).
        chunked = chunks(results, ROWS_PER_PART)
        row_context = f"{self.season_key}{bot.id}"
        part_keys = [list_key(site.version, row_context, part,
                              (self.row_keys[r.match_id] for r in rows))
                     for part, rows in enumerate(chunked)]
        if site.reuse(name, list_key(site.version, self.season_key + bot_key, number,
                                     (key.encode() for key in part_keys))):
            if parts_record(site.previous.get(parts)):  # where its rows are, for the next
                site.state[parts] = site.previous[parts]  # time it changes
            return
        common = site.common
        html = site.env.get_template("bot_matches.html").render(
            root="../", **{**common, "result_rows": lambda *_: ROWS_HERE},
            page="bot", bot=bot, results=results, pages=pages, current=number)
        if html.count(ROWS_HERE) != 1:  # a name holding the marker: the whole page
            site.write(name, "bot_matches.html", 1, page="bot", bot=bot,
                       results=results, pages=pages, current=number)
            return
        head, _, tail = html.partition(ROWS_HERE)
        write_in_parts(site.out / name, head.encode(),
                       [(key, functools.partial(rows_html, common["result_rows"], rows))
                        for key, rows in zip(part_keys, chunked, strict=True)],
                       b"\n", tail.encode(), site.previous, site.state)
        site.pages += 1


def rows_html(result_rows: Any, results: list[Any]) -> bytes:
    """A part of a bot's list of matches: its rows as its page holds them."""
    return str(result_rows(results, "../")).encode()


def _think_times(bot: Bot, match_state: dict[str, MatchRecord]) -> list[float | None]:
    """The bot's median think time in each of its matches (schedule order), from the
    medians the match pages' render kept (None: no timing)."""
    times: list[float | None] = []
    for result in bot.results:
        record = match_state.get(result.match_id)
        medians = record[2] if record is not None and record[2] else ()
        times.append(medians[result.seat] if result.seat < len(medians) else None)
    return times


def _chart_range(data: SeasonData) -> tuple[float, float]:
    """The y range of every bot's rating chart: all bots' mu ± sigma over the season (one
    scale on every bot page)."""
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


def _faults(bot: Bot) -> list[dict[str, Any]]:
    return [{"match_id": r.match_id, "kind": f.get("kind"), "reason": f.get("reason")}
            for r in bot.results for f in r.faults]


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
