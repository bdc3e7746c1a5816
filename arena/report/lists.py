"""The site's long lists (the match list, each bot's matches): split into pages whose
addresses never change, their rows written as HTML here rather than by template loops
(a season of 80,000 matches lists 240,000 rows)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from arena.report.data import Bot, MatchRow, SeasonData


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


def page_links(ids: list[str], size: int, name: Callable[[int], str]) -> list[PageLink]:
    """The pages of ``size`` ids each, page N at ``name(N)``."""
    return [PageLink(number, name(number), ids[start], ids[min(start + size, len(ids)) - 1])
            for number, start in enumerate(range(0, len(ids), size), start=1)]


def chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[start:start + size] for start in range(0, len(items), size)]


def remove_pages(folder: Path, listed: list[str], prefix: str, keep: set[str]) -> None:
    """Pages of a list that has fewer pages now (a site rendered from another store):
    ``prefix``*.html among ``listed``, the folder's names (listed once for 200 bots' lists)
    but those in ``keep``."""
    for name in listed:
        if name.startswith(prefix) and name.endswith(".html") and name not in keep:
            (folder / name).unlink(missing_ok=True)


def bots_by_name(data: SeasonData) -> list[Bot]:
    """The bots a filter offers (the ranked and the unrated) by name, case ignored, then
    by entrant: an order the ratings do not move (the pages of lists show it and are not
    rendered again when only the ratings changed)."""
    return sorted(data.ranked + data.unrated, key=lambda b: (b.name.lower(), b.id))


def players(data: SeasonData) -> Callable[[MatchRow, str], Markup]:
    """``players(match, root)``: a match's table, each bot linked with its place and
    score (as the ``match_players`` macro writes it), built once per match and folder
    depth: the match list and two bots' lists show every match (the macro cost about
    100 us a row, ``Markup.format`` 20)."""
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


def opponent_options(data: SeasonData) -> Callable[[Bot], Markup]:
    """``opponent_options(bot)``: the options of a bot's list's opponent filter, every
    other bot by name, written once rather than by a template loop on each of 200
    lists."""
    options = [(b.id, f'<option value="{escape(b.slug)}">{escape(b.name)}</option>')
               for b in bots_by_name(data)]

    def opponent_options(bot: Bot) -> Markup:
        return Markup("".join(html for other, html in options if other != bot.id))

    return opponent_options


def result_rows(data: SeasonData, players: Callable[[MatchRow, str], Markup]
                ) -> Callable[[list[Any], str], Markup]:
    """``result_rows(results, root)``: the rows of a bot's list of matches (200 lists of
    800 rows, most of them written again after a round of new results)."""
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
