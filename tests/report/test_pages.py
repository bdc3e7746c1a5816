"""Every page of the rendered site holds the numbers of the store and the logs.

The season comes from ``conftest.py``: a real round robin of the three sample bots, run
with ``arena season run`` and rendered with ``arena report``. Expected values are computed
here from ``SeasonStore`` (results, entrants, matches), ``leaderboard`` and the match logs,
then looked up in the parsed HTML row by row.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import os
import re
import sqlite3
import tarfile
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from report_html import header_texts, num, parse, pct, polyline_points, table_rows
from season_data import BOTS, SeasonRun, StoreView, copy_season, log_rounds, read_store

from arena.league.store import SeasonStore, StoredResult
from arena.report import incremental
from arena.report import site as report_site
from arena.report.matchpage import read_data_script
from arena.report.render import render_site
from arena.rules import events as ev
from arena.rules.narration import describe

MU_SIGMA = "mu \N{PLUS-MINUS SIGN} \N{GREEK SMALL LETTER SIGMA}"
DASH = "\N{EN DASH}"
STANDINGS_COLUMNS = ["Rank", "Bot", "Strength", "Rank interval", "P(> next)", "Live rating",
                     "Matches", "Wins", "Win rate", "Avg place", "Avg score", "Faults"]


# -- helpers ------------------------------------------------------------------------------


def bot_pages(season: SeasonRun, view: StoreView) -> dict[int, Path]:
    """Each entrant's page, found through its link in the standings."""
    page = parse(season.report / "index.html")
    by_name = {e["name"]: i for i, e in view.entrants.items()}
    pages = {}
    for row in table_rows(page.find("table", class_="standings")):
        link = row[1].find("a")
        pages[by_name[link.text]] = season.report / link.attrs["href"]
    assert set(pages) == set(view.entrants)
    for path in pages.values():
        assert path.is_file(), path
    return pages


def by_match(results: list[StoredResult]) -> dict[str, list[StoredResult]]:
    grouped: dict[str, list[StoredResult]] = defaultdict(list)
    for result in results:
        grouped[result.match_id].append(result)
    return grouped


def head_to_head(view: StoreView) -> dict[tuple[int, int], tuple[float, int]]:
    """(row, column) -> (times row finished ahead of column, ties half; meetings)."""
    record: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0.0, 0])
    for seats in by_match(view.results).values():
        for a in seats:
            for b in seats:
                if a.entrant_id != b.entrant_id:
                    cell = record[(a.entrant_id, b.entrant_id)]
                    cell[0] += 1.0 if a.place < b.place else 0.5 if a.place == b.place else 0.0
                    cell[1] += 1
    return {key: (wins, int(meetings)) for key, (wins, meetings) in record.items()}


def wilson(wins: float, n: int) -> tuple[float, float]:
    z = 1.959964
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def replay_data(page: Path) -> dict[str, Any]:
    """The replay's data: the file beside the page that the page loads (not inline)."""
    scripts = [s.attrs.get("src") for s in parse(page).find_all("script")]
    data_file = page.with_suffix(".js")
    assert data_file.name in scripts, scripts
    return read_data_script(data_file.read_text(encoding="utf-8"))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def html_pages(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.html"))


# -- the command --------------------------------------------------------------------------


def test_report_command_renders_every_page(season: SeasonRun, view: StoreView) -> None:
    done = len(view.done())
    pages = 3 + 2 * len(view.entrants) + 2 * done  # a bot: its page, its matches
    assert f"rendered {pages} pages" in season.report_output, season.report_output
    assert f"({done} matches rendered, 0 unchanged)" in season.report_output
    report = season.report
    assert {p.name for p in report.glob("*.html")} == {
        "index.html", "head-to-head.html", "matches.html"}
    assert len(list((report / "bots").glob("*.html"))) == 2 * len(view.entrants)
    for match in view.done():
        for path in (f"matches/{match['match_id']}.html", f"replays/{match['match_id']}.html",
                     f"logs/{match['match_id']}.jsonl.gz"):
            assert (report / path).is_file(), path
    for asset in ("style.css", "replay.js", "tables.js"):
        assert (report / "assets" / asset).stat().st_size > 0


# -- standings ----------------------------------------------------------------------------


def test_standings_rows_hold_the_official_standings(season: SeasonRun, view: StoreView
                                                    ) -> None:
    """Rows in the order of the official fit, each with its shared rank, strength, rank
    interval, P(> next) from the bootstrap, and the live TrueSkill rating beside."""
    page = parse(season.report / "index.html")
    table = page.find("table", class_="standings")
    assert header_texts(table) == STANDINGS_COLUMNS
    rows = table_rows(table)
    official = view.ratings.official
    live = {s.entrant_id: s for s in view.ratings.live.standings}
    assert len(rows) == len(official.rows) == len(BOTS)
    per_bot = defaultdict(list)
    for result in view.results:
        per_bot[result.entrant_id].append(result)
    for row_data, row in zip(official.rows, rows, strict=True):
        entrant = view.entrants[row_data.entrant_id]
        standing = live[row_data.entrant_id]
        cells = dict(zip(STANDINGS_COLUMNS, (c.text for c in row), strict=True))
        assert row[1].tag == "th" and row[1].attrs.get("scope") == "row"
        assert row[1].find("a").text == entrant["name"]
        # Independent of the rating code: the plain counts come from the results.
        mine = per_bot[row_data.entrant_id]
        assert standing.matches == row_data.matches == len(mine)
        expected = {
            "Rank": row_data.rank_label,
            "Bot": f"{entrant['name']} {entrant['version']}",
            "Strength": f"{row_data.strength:+.2f}",
            "Rank interval": row_data.interval_label,
            "P(> next)": pct(row_data.above_next),
            "Live rating": f"{standing.mu - 3 * standing.sigma:.2f}",
            "Matches": str(len(mine)),
            "Wins": f"{standing.wins:g}",
            "Win rate": pct(standing.wins / len(mine)),
            "Avg place": f"{sum(r.place for r in mine) / len(mine):.2f}",
            "Avg score": f"{sum(r.score for r in mine) / len(mine):.0f}",
            "Faults": str(sum(len(r.faults) for r in mine)),
        }
        assert cells == expected, f"standings row {row_data.position} ({entrant['name']})"
    strengths = [float(r[2].attrs["data-sort"]) for r in rows]
    assert strengths == sorted(strengths, reverse=True)
    # The verdict in words: every group the data cannot separate is named.
    text = page.find("main").text
    for group in official.groups:
        names = [view.entrants[e]["name"] for e in group]
        sentence = next(p.text for p in page.find_all("p") if "cannot be separated" in p.text
                        and all(n in p.text for n in names))
        assert official.rows[[r.entrant_id for r in official.rows].index(group[0])
                             ].rank_label in sentence
    if not official.groups:
        assert "Every bot's rank is separated" in text


def test_standings_downloads(season: SeasonRun, view: StoreView) -> None:
    page = parse(season.report / "index.html")
    links = {a.attrs["href"] for a in page.find_all("a") if "download" in a.attrs}
    assert {"standings.csv", "standings.json", "results.csv", "results.json",
            "logs.tar"} <= links
    data = json.loads((season.report / "standings.json").read_text())
    official = view.ratings.official
    assert [r["bot"] for r in data["standings"]] == [
        view.entrants[r.entrant_id]["name"] for r in official.rows]
    assert [r["rank"] for r in data["standings"]] == [r.rank_label for r in official.rows]
    with (season.report / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(view.results)
    assert {(r["match_id"], int(r["seat"]), r["bot"], int(r["place"]), int(r["score"]))
            for r in rows} == {(r.match_id, r.seat, view.entrants[r.entrant_id]["name"],
                                r.place, r.score) for r in view.results}
    with tarfile.open(season.report / "logs.tar") as archive:
        names = sorted(Path(n).name for n in archive.getnames())
        assert names == sorted(f"{m['match_id']}.jsonl.gz" for m in view.done())
        first = view.done()[0]
        member = next(n for n in archive.getnames() if first["match_id"] in n)
        extracted = archive.extractfile(member)
        assert extracted is not None
        assert extracted.read() == Path(first["log_path"]).read_bytes()


def test_standings_chart_compares_every_bot(season: SeasonRun, view: StoreView) -> None:
    svg = parse(season.report / "index.html").find("svg", class_="season-chart")
    assert svg.attrs["role"] == "img" and "every bot" in svg.find("title").text
    lines = svg.find_all("polyline", class_="series")
    assert len(lines) == len(view.entrants)
    labels = [t.text for t in svg.find_all("text", class_="series-label")]
    assert sorted(labels) == sorted(e["name"] for e in view.entrants.values())
    titles = [t.text for t in svg.find_all("text", class_="axis-title")]
    assert any("schedule order" in t for t in titles) and any("mu" in t for t in titles)


def test_standings_season_facts(season: SeasonRun, view: StoreView) -> None:
    page = parse(season.report / "index.html")
    lead = page.find("p", class_="lead").text
    assert lead.startswith(f"{len(BOTS)} bots, {len(view.done())} matches played.")
    facts = page.find("dl", class_="facts")
    terms = dict(zip((dt.text for dt in facts.find_all("dt")),
                     (dd.text for dd in facts.find_all("dd")), strict=True))
    assert terms["Tables"] == "2 players, 2 matches per pair, duplicate deals"
    assert terms["Rules"].startswith("target 200, standard scoring")
    assert terms["Limits"] == "1.0 s per decision, 10.0 s time bank, 3 strikes"
    assert terms["Sandbox"].startswith("plain")
    assert "weaker isolation" in terms["Sandbox"]
    # Commit-reveal: the key's SHA-256 from the start, the key itself only once revealed.
    assert view.key_commitment in terms["Deals"] and "secret season key" in terms["Deals"]
    assert view.season_key not in terms["Deals"]
    assert terms["Matches"] == f"{view.counts['done']} done, 0 failed, 0 to play"


def test_standings_show_the_season_dates(season: SeasonRun, view: StoreView) -> None:
    """The season facts (rules, limits, sandbox backend, dates, matches done/failed).

    The dates are when the first and the last match finished (``finished_at`` in the
    store); accepted as ISO dates (YYYY-MM-DD), local time or UTC.
    """
    facts = parse(season.report / "index.html").find("dl", class_="facts").text
    finished = [m["finished_at"] for m in view.matches if m["finished_at"]]
    for moment in (min(finished), max(finished)):
        local = datetime.fromtimestamp(moment).strftime("%Y-%m-%d")
        utc = datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d")
        assert local in facts or utc in facts, (
            f"the season facts show no date of the season (expected {local}): {facts!r}")


# -- head-to-head -------------------------------------------------------------------------


def test_head_to_head_cells_hold_each_pairs_record(season: SeasonRun, view: StoreView) -> None:
    page = parse(season.report / "head-to-head.html")
    table = page.find("table", class_="h2h")
    by_name = {e["name"]: i for i, e in view.entrants.items()}
    columns = [by_name[c.find("a").text] for c in table.find("thead").find("tr").cells()[1:]]
    assert columns == [r.entrant_id for r in view.ratings.official.rows]
    slugs = {by_name[c.find("a").text]: c.find("a").attrs["href"].split("/")[-1][:-5]
             for c in table.find("thead").find("tr").cells()[1:]}
    expected = head_to_head(view)
    checked = 0
    for row in table_rows(table):
        me = by_name[row[0].find("a").text]
        assert row[0].tag == "th" and row[0].attrs["scope"] == "row"
        for other, cell in zip(columns, row[1:], strict=True):
            if other == me:
                assert cell.text == "—"
                continue
            wins, meetings = expected[(me, other)]
            low, high = wilson(wins, meetings)
            assert cell.find("span", class_="record").text == f"{wins:g}/{meetings}"
            assert cell.find("span", class_="rate").text == pct(wins / meetings)
            assert cell.find("span", class_="ci").text == f"{pct(low)}{DASH}{pct(high)}"
            assert cell.attrs["style"] == f"--rate: {wins / meetings:.3f}"
            assert f"in {wins:g} of {meetings} meetings" in cell.attrs["title"]
            # The cell links to the matches of the pair (the match list, filtered).
            assert cell.find("a", class_="cell-link").attrs["href"] == (
                f"matches.html?bot={slugs[me]}&opponent={slugs[other]}")
            checked += 1
    assert checked == len(BOTS) * (len(BOTS) - 1)
    # Each pair met twice: the two cells of a pair add up to the meetings.
    for (a, b), (wins, meetings) in expected.items():
        assert meetings == 2
        assert wins + expected[(b, a)][0] == meetings


# -- bot pages ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", BOTS)
def test_bot_page(season: SeasonRun, view: StoreView, name: str) -> None:
    entrant_id = next(i for i, e in view.entrants.items() if e["name"] == name)
    entrant = view.entrants[entrant_id]
    page = parse(bot_pages(season, view)[entrant_id])
    mine = [r for r in view.results if r.entrant_id == entrant_id]
    standing = next(s for s in view.ratings.live.standings if s.entrant_id == entrant_id)
    row_data = next(r for r in view.ratings.official.rows if r.entrant_id == entrant_id)

    assert page.find("h1").text == f"{name} {entrant['version']}"
    lead = page.find("p", class_="lead").text
    assert lead.startswith(
        f"Rank {row_data.rank_label} of {len(BOTS)} (95% rank interval "
        f"{row_data.interval_label}), strength {row_data.strength:+.2f}; live rating "
        f"{standing.conservative:.2f} (mu {standing.mu:.2f} ± {standing.sigma:.2f}), "
        f"{standing.wins:g} wins in "
        f"{len(mine)} matches"), lead

    # Results: one row per stored result of this bot, in schedule order, on its list of
    # matches (a page of its own: the bot page changes with every result, the list not).
    link = page.find("p", class_="bot-matches").find("a")
    assert link.text == f"{name}'s matches"
    listing = parse(bot_pages(season, view)[entrant_id].parent / link.attrs["href"])
    results = next(t for t in listing.find_all("table", class_="matches")
                   if header_texts(t)[0] == "Match")
    rows = table_rows(results)
    assert len(rows) == len(mine) > 0
    for row, result in zip(rows, mine, strict=True):
        assert row[0].find("a").text == result.match_id
        assert row[0].find("a").attrs["href"] == f"../matches/{result.match_id}.html"
        assert [c.text for c in row[1:4]] == [str(result.seat), str(result.place),
                                               str(result.score)]
        players = row[4].find_all("span", class_="player")
        seats = sorted((r for r in view.results if r.match_id == result.match_id),
                       key=lambda r: r.seat)
        assert [p.find("a").text for p in players] == [
            view.entrants[r.entrant_id]["name"] for r in seats]

    # Head-to-head row.
    h2h = head_to_head(view)
    by_name = {e["name"]: i for i, e in view.entrants.items()}
    table = page.find("table", class_="h2h")
    opponents = table_rows(table)
    assert len(opponents) == len(BOTS) - 1
    for row in opponents:
        other = by_name[row[0].find("a").text]
        wins, meetings = h2h[(entrant_id, other)]
        low, high = wilson(wins, meetings)
        assert [c.text for c in row[1:5]] == [f"{wins:g}", str(meetings),
                                               pct(wins / meetings),
                                               f"{pct(low)}{DASH}{pct(high)}"]
        # Duplicate deals (this season's default): deals ahead / even / behind, net points.
        ahead, even, behind = (int(n) for n in row[5].text.split(" / "))
        assert ahead + even + behind == meetings // 2
        assert re.fullmatch(r"[+-]\d+", row[6].text)

    # By seat position.
    positions = table_rows(page.find("table", class_="positions"))
    seats = sorted({r.seat for r in mine})
    assert [row[0].text for row in positions] == [str(s) for s in seats]
    for row, seat in zip(positions, seats, strict=True):
        at = [r for r in mine if r.seat == seat]
        wins_at = sum(1 for r in at if r.place == 1)
        assert [c.text for c in row[1:]] == [
            str(len(at)), str(wins_at), pct(wins_at / len(at)),
            num(sum(r.place for r in at) / len(at)), num(sum(r.score for r in at) / len(at), 0)]

    # Faults (the sample bots behave).
    faults = [f for r in mine for f in r.faults]
    fault_list = page.find_all("ul", class_="faults")
    if faults:
        assert len(fault_list[0].find_all("li")) == len(faults)
    else:
        assert not fault_list

    # The manifest and the version hash.
    facts = page.find("dl", class_="facts")
    terms = dict(zip((dt.text for dt in facts.find_all("dt")),
                     (dd.text for dd in facts.find_all("dd")), strict=True))
    assert terms["Version hash"] == entrant["hash"]
    assert entrant["hash"]
    for key, value in entrant["manifest"].items():
        shown = value if isinstance(value, str) else " ".join(value)
        assert terms[key] == shown, key
    assert terms["name"] == name

    # The rating chart: inline SVG, titled, mu after each match plus the starting point.
    svg = page.find("svg", class_="chart")
    assert svg.attrs["role"] == "img"
    title = svg.find("title").text
    assert name in title and "sigma" in title
    for label in svg.attrs["aria-labelledby"].split():
        assert svg.find_all("title", id=label) or svg.find_all("desc", id=label), label
    mu_line = polyline_points(svg, "mu")
    assert len(mu_line) == len(mine) + 1 == len(standing.history) + 1
    assert [x for x, _ in mu_line] == sorted(x for x, _ in mu_line)
    band = svg.find("polygon", class_="band").attrs["points"].split()
    assert len(band) == 2 * (len(mine) + 1)
    # The band starts at the prior's sigma (25/3), not at a point; the axes are titled.
    (x0, top), (x1, bottom) = (tuple(map(float, p.split(","))) for p in (band[0], band[-1]))
    assert x0 == x1 and bottom - top > 10
    titles = [t.text for t in svg.find_all("text", class_="axis-title")]
    assert any("matches played" in t for t in titles) and any("mu" in t for t in titles)
    last_match, last_mu, last_sigma = standing.history[-1]
    assert svg.find("desc").text == (
        f"{len(mine)} matches; after match {last_match} mu is {last_mu:.2f} and sigma "
        f"{last_sigma:.2f}.")
    # Higher mu is drawn higher (smaller y), in the order of the history.
    mus = [25.0] + [mu for _, mu, _ in standing.history]
    for (_, y1), (_, y2), a, b in zip(mu_line, mu_line[1:], mus, mus[1:], strict=False):
        if abs(a - b) > 0.2:
            assert (y2 < y1) == (b > a)


# -- match pages --------------------------------------------------------------------------


def test_match_pages(season: SeasonRun, view: StoreView) -> None:
    grouped = by_match(view.results)
    for match in view.done():
        match_id = match["match_id"]
        path = season.report / "matches" / f"{match_id}.html"
        page = parse(path)
        records = view.log(match)
        names = view.names(match)
        seats_record = next(r for r in records if r["type"] == "seats")
        assert [s["name"] for s in seats_record["seats"]] == names
        result_record = next(r for r in records if r["type"] == "result")

        assert page.find("h1").text == f"Match {match_id}"
        lead = page.find("p", class_="lead").text
        assert lead.startswith(f"{match['rounds']} rounds, {match['decisions']} decisions")
        assert f"dealt from the season key under {match['chance']}." in lead

        # Players, seats, final places and scores.
        standing = page.find("table", class_="standing")
        rows = table_rows(standing)
        stored = sorted(grouped[match_id], key=lambda r: r.seat)
        assert len(rows) == len(stored) == 2
        for row, result in zip(rows, stored, strict=True):
            assert row[0].text == str(result.seat)
            assert row[1].find("a").text == view.entrants[result.entrant_id]["name"]
            assert [c.text for c in row[2:6]] == [str(result.place), str(result.score),
                                                   str(result.rounds_won), str(result.strikes)]
            # ... and a link to the replay from that seat's view.
            assert row[6].find("a").attrs["href"] == (
                f"../replays/{match_id}.html#seat-{result.seat}")
        assert [r.place for r in stored] == result_record["places"]
        assert [r.score for r in stored] == result_record["scores"]

        # One row per RoundEnded event, with the winner's name, the points and the replay.
        ended = [r for r in records if r.get("event") == "RoundEnded"]
        dealers = [r["dealer"] for r in records if r.get("event") == "RoundStarted"]
        assert len(ended) == match["rounds"]
        rounds = page.find("table", class_="rounds")
        assert header_texts(rounds)[:4] == ["Round", "Dealer", "Went out", "Points"]
        rows = table_rows(rounds)
        assert len(rows) == len(ended), match_id
        for row, event, dealer in zip(rows, ended, dealers, strict=True):
            number = event["round"]
            went_out = "stalled (turn limit)" if event["stalled"] else names[event["winner"]]
            assert [c.text for c in row[:6]] == [
                str(number), names[dealer], went_out, str(event["points"]),
                " / ".join(str(len(h)) for h in event["hands"]),
                " / ".join(str(s) for s in event["scores"])], (match_id, number)
            link = row[6].find("a")
            assert link.attrs["href"] == f"../replays/{match_id}.html#round-{number}"

        # The raw log: a download link to a copy of the match's log.
        raw = next(a for a in page.find_all("a") if "download" in a.attrs)
        assert raw.attrs["href"] == f"../logs/{match_id}.jsonl.gz"
        copy = (path.parent / raw.attrs["href"]).resolve()
        assert copy.is_file(), copy
        assert copy.read_bytes() == Path(match["log_path"]).read_bytes()
        replay = next(a for a in page.find_all("a") if a.text == "Replay")
        assert replay.attrs["href"] == f"../replays/{match_id}.html"


MATCH_COLUMNS = ["Match", "Round", "Players (place, score)", "Deal", "Rounds", "Decisions",
                 "Duration", "Finished", "Status"]


def test_matches_index(season: SeasonRun, view: StoreView) -> None:
    """Every match in schedule order with its round, its duplicate-deal partner and net
    points, rounds, decisions, duration, date and status; rows carry what filters read."""
    page = parse(season.report / "matches.html")
    table = page.find("table", class_="matches")
    assert header_texts(table) == MATCH_COLUMNS
    rows = table_rows(table)
    grouped = by_match(view.results)
    assert [r[0].text for r in rows] == [m["match_id"] for m in view.matches]
    deals: dict[str, list[str]] = defaultdict(list)
    for match in view.matches:
        deals[match["chance"]].append(match["match_id"])
    assert all(len(ids) == 2 for ids in deals.values()), "two-player duplicate deals"
    for row, match in zip(rows, view.matches, strict=True):
        cells = dict(zip(MATCH_COLUMNS, row, strict=True))
        assert row[0].find("a").attrs["href"] == f"matches/{match['match_id']}.html"
        players = cells["Players (place, score)"].find_all("span", class_="player")
        stored = sorted(grouped[match["match_id"]], key=lambda r: r.seat)
        assert [p.text for p in players] == [
            f"{view.entrants[r.entrant_id]['name']} {view.entrants[r.entrant_id]['version']} "
            f"{r.place} {r.score}" for r in stored]
        assert cells["Round"].text == str(match["round"])
        partner = next(i for i in deals[match["chance"]] if i != match["match_id"])
        partner_stored = {r.entrant_id: r.score for r in grouped[partner]}
        net = []
        for r in stored:
            other = next(o for o in stored if o.entrant_id != r.entrant_id)
            net.append(r.score - other.score + partner_stored[r.entrant_id]
                       - partner_stored[other.entrant_id])
        assert cells["Deal"].text == (f"with {partner}; net "
                                      + " / ".join(f"{n:+d}" for n in net))
        assert cells["Deal"].find("a").attrs["href"] == f"#{partner}"
        assert [cells[c].text for c in ("Rounds", "Decisions", "Status")] == [
            str(match["rounds"]), str(match["decisions"]), "done"]
        assert cells["Duration"].text.endswith(" s")
        assert cells["Finished"].text == datetime.fromtimestamp(
            match["finished_at"], UTC).strftime("%Y-%m-%d %H:%M UTC")
        tr = row[0].parent
        assert tr is not None and tr.attrs["id"] == match["match_id"]
        assert tr.attrs["data-round"] == str(match["round"])
        assert tr.attrs["data-status"] == "done"
        assert len(tr.attrs["data-bots"].split()) == 2
    form = page.find("form", class_="filters")
    assert {s.attrs["name"] for s in form.find_all("select")} == {
        "bot", "opponent", "round", "result", "faults"}


# -- replays ------------------------------------------------------------------------------


def test_replay_pages_embed_the_logs_events(season: SeasonRun, view: StoreView) -> None:
    for match in view.done():
        match_id = match["match_id"]
        path = season.report / "replays" / f"{match_id}.html"
        data = replay_data(path)
        names = view.names(match)
        records = view.log(match)
        assert data["players"] == names
        expected = log_rounds(records)
        assert [r["number"] for r in data["rounds"]] == [r["number"] for r in expected]
        assert [r["number"] for r in data["rounds"]] == list(range(1, match["rounds"] + 1))
        options = parse(path).find("select", id="round-select").find_all("option")
        assert [o.attrs["value"] for o in options] == [str(r["number"]) for r in expected]
        for got, want in zip(data["rounds"], expected, strict=True):
            assert got["dealer"] == want["dealer"]
            assert [s["e"] for s in got["steps"]] == [s["e"] for s in want["steps"]], (
                match_id, got["number"])
            for step, wanted in zip(got["steps"], want["steps"], strict=True):
                record = wanted["record"]
                where = (match_id, got["number"], record)
                assert step.get("s") == wanted["s"], where
                assert step.get("c") == record.get("card"), where
                assert step.get("cs") == record.get("cards"), where
                assert step.get("k") == record.get("colour"), where
                assert step.get("d") == record.get("direction"), where
                if wanted["e"] == "Fault":
                    assert record["reason"] in step["t"]
                else:
                    fields = {k: v for k, v in record.items() if k != "type"}
                    assert step["t"] == describe(ev.from_record(fields), names), where
            assert got["steps"][-1]["e"] in ("RoundEnded", "MatchEnded")
        # Decision latency: a bot's play shows the latency of the decision that made it.
        steps = [s for r in data["rounds"] for s in r["steps"]]
        events = [r for r in records if r["type"] in ("event", "fault")]
        assert len(steps) == len(events)
        # The decision line comes before its events, its timing line right after it.
        previous: dict[str, Any] | None = None
        decision: dict[str, Any] | None = None
        timed = 0
        index = 0
        for record in records:
            if record["type"] == "timing":
                assert decision is not None and previous is decision
                assert (record["seat"], record["request"]) == (decision["seat"],
                                                                decision["request"])
                decision = {**decision, "latency_ms": record["latency_ms"]}
            elif record["type"] == "decision":
                decision = record
            elif record["type"] in ("event", "fault"):
                if decision is not None and decision["source"] == "bot" and (
                        record.get("event") == "Played"):
                    assert decision["seat"] == record["seat"]
                    assert steps[index].get("l") == decision["latency_ms"], (match_id, index)
                    timed += 1
                decision = None
                index += 1
            previous = record
        assert timed > 10, "most plays show their latency"


def test_replay_data_rebuilds_each_rounds_final_hands(season: SeasonRun,
                                                      view: StoreView) -> None:
    """The embedded events alone (what replay.js reads) give the hands the log ends with."""
    for match in view.done():
        data = replay_data(season.report / "replays" / f"{match['match_id']}.html")
        ended = {r["round"]: r for r in view.log(match) if r.get("event") == "RoundEnded"}
        for round_ in data["rounds"]:
            hands: list[list[int]] = [[] for _ in data["players"]]
            discards = 0
            for number, step in enumerate(round_["steps"]):
                kind = step["e"]
                if kind == "Dealt":
                    hands[step["s"]] = list(step["cs"])
                elif kind == "FirstCardTurned":
                    discards = 1
                elif kind == "Played":
                    hands[step["s"]].remove(step["c"])
                    discards += 1
                elif kind == "Drew":
                    hands[step["s"]].extend(step["cs"])
                elif kind == "Reshuffled":
                    # The discards but the top card become the new draw pile (§10). What the
                    # old pile still held went to the draw in progress, which the log
                    # records after the reshuffle, whole.
                    assert step["cs"] == discards - 1
                    left = 108 - sum(map(len, hands)) - discards
                    if left:
                        following = round_["steps"][number + 1]
                        assert following["e"] == "Drew" and len(following["cs"]) > left
                    discards = 1
                elif kind == "RoundEnded":
                    final = ended[round_["number"]]["hands"]
                    assert [sorted(h) for h in hands] == [sorted(h) for h in final], (
                        match["match_id"], round_["number"])
                    assert step["sc"] == ended[round_["number"]]["scores"]


# -- rendering: deterministic, incremental, failures ----------------------------------------


def test_rendering_is_deterministic_and_incremental(season: SeasonRun, view: StoreView,
                                                    tmp_path: Path) -> None:
    done = len(view.done())
    first = render_site(season.store, tmp_path / "a")
    assert (first.match_pages_rendered, first.match_pages_reused) == (done, 0)
    before = snapshot(tmp_path / "a")
    times = {p: p.stat().st_mtime_ns for p in (tmp_path / "a").rglob("*.html")}
    second = render_site(season.store, tmp_path / "a")
    assert (second.match_pages_rendered, second.match_pages_reused) == (0, done)
    assert second.pages == first.pages == 3 + 2 * len(view.entrants) + 2 * done
    assert snapshot(tmp_path / "a") == before
    assert {p: p.stat().st_mtime_ns for p in times} == times, "unchanged pages were rewritten"
    # A fresh folder gets the same bytes, and so did `arena report`.
    render_site(season.store, tmp_path / "b")
    assert snapshot(tmp_path / "b") == before
    assert snapshot(season.report) == before


def test_a_report_after_no_change_looks_at_no_log_itself(
        season: SeasonRun, view: StoreView, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper that looks at the last render's state, the site and the logs while the
    store is read settles every match: the report's own process stats, checks and reads
    no log (it would fail here), and writes the same bytes."""
    out = tmp_path / "site"
    render_site(season.store, out)

    def refused(*_: object) -> None:
        raise AssertionError("a settled match's log was looked at again")

    for name in ("log_stat", "check_log", "read_whole"):
        monkeypatch.setattr(report_site, name, refused)
    again = render_site(season.store, out)
    assert (again.match_pages_rendered, again.match_pages_reused) == (0, len(view.done()))
    assert snapshot(out) == snapshot(season.report)


def test_a_report_whose_helper_dies_looks_at_the_site_itself(
        season: SeasonRun, view: StoreView, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper that fails (killed, out of memory) settles nothing: the report reads the
    state and the logs itself, reuses what it may and writes the same bytes."""
    store = copy_season(season.folder, tmp_path / "season")
    out = tmp_path / "site"
    render_site(store, out)
    changed = view.done()[0]["match_id"]
    log = tmp_path / "season" / "logs" / f"{changed}.jsonl.gz"
    os.utime(log, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns + 10**9))
    inspect = incremental.inspect_site

    def dying(out: Path, version: str, store_path: Path | None) -> Any:
        if store_path is not None:
            raise MemoryError("killed")
        return inspect(out, version, store_path)

    monkeypatch.setattr(report_site, "inspect_site", dying)
    again = render_site(store, out)
    assert (again.match_pages_rendered, again.match_pages_reused) == (
        1, len(view.done()) - 1)
    monkeypatch.undo()
    render_site(store, tmp_path / "fresh")
    assert snapshot(out) == snapshot(tmp_path / "fresh")


def _first_format_state(state: dict[str, Any]) -> dict[str, str]:
    """A state file as versions before format 2 wrote it: three string keys a match."""
    flat = {key: value for key, value in state.items() if key not in ("format", "matches")}
    for match_id, (key, stamp, medians) in state["matches"].items():
        flat[match_id] = key
        if stamp is not None:
            flat[f"checked/{match_id}"] = stamp
        if medians is not None:
            flat[f"time/{match_id}"] = json.dumps(medians)
    return flat


@pytest.mark.parametrize("state_file", [
    "first format",  # a site rendered by an older version: read, not rendered again
    "damaged records",  # records of the wrong shape: those matches are rendered again
    "not json",  # no usable state: everything is rendered again, the same bytes
    "absurd think times",  # past 64 bits, NaN, negative: those matches are read again
    "damaged parts",  # a file's parts of another shape: that file is made again whole
])
def test_a_site_rendered_under_another_state_file_renders_the_same(
        season: SeasonRun, view: StoreView, tmp_path: Path, state_file: str) -> None:
    out = tmp_path / "site"
    render_site(season.store, out)
    state_path = out / ".render-state.json"
    state = json.loads(state_path.read_text())
    assert state["format"] == 2 and set(state["matches"]) == {
        m["match_id"] for m in view.done()}
    done = len(view.done())
    damaged = sorted(state["matches"])[:2]
    if state_file == "first format":
        state_path.write_text(json.dumps(_first_format_state(state)))
        expected = (0, done)
    elif state_file == "damaged records":
        state["matches"][damaged[0]] = ["key", None]
        state["matches"][damaged[1]][2] = ["12.5"]  # a think time that is no number
        state_path.write_text(json.dumps(state))
        expected = (2, done - 2)
    elif state_file == "absurd think times":
        state["matches"][damaged[0]][2] = [2 ** 70, None]
        state["matches"][damaged[1]][2] = [math.nan, -1.0]
        state_path.write_text(json.dumps(state))
        expected = (2, done - 2)
    elif state_file == "damaged parts":
        shapes = ["5", "[1, 2]", '["abc", 5]', '["abc", [[1]]]', "null", "[null, []]",
                  '["abc", [["k", "x", 5]]]']
        parts = [key for key in state if key.startswith("parts/")]
        assert parts
        for index, key in enumerate(parts):
            state[key] = shapes[index % len(shapes)]
        state_path.write_text(json.dumps(state))
        expected = (0, done)
    else:
        state_path.write_text("{not json")
        expected = (done, 0)
    again = render_site(season.store, out)
    assert (again.match_pages_rendered, again.match_pages_reused) == expected
    # Every file, the state included, as a render from scratch writes it: the think
    # times the bots' charts show were kept (or read again) either way.
    if state_file != "damaged parts":
        assert snapshot(out) == snapshot(season.report)
        return
    # Damaged parts: every page as from scratch; the state keeps no damaged record (a
    # reused page's is dropped: its page is made whole the next time its rows change).
    pages, reference = snapshot(out), snapshot(season.report)
    state = json.loads(pages.pop(".render-state.json"))
    reference_state = json.loads(reference.pop(".render-state.json"))
    assert pages == reference
    for key, value in state.items():
        if key.startswith("parts/"):
            assert value == reference_state[key]
    assert {k: v for k, v in state.items() if not k.startswith("parts/")} == {
        k: v for k, v in reference_state.items() if not k.startswith("parts/")}


@pytest.mark.parametrize("medians", [[12.5, None], [2 ** 70, 3], [math.nan, 1]])
def test_the_state_file_is_what_json_writes(medians: list[Any]) -> None:
    state = {"_templates": "v", "list/matches.html": "k"}
    records = {"m2": ["key", "stamp", medians], "m1": [None, None, None]}
    expected = json.loads(json.dumps({**state, "format": incremental.STATE_FORMAT,
                                      "matches": records}), parse_constant=lambda _: None)
    assert json.loads(incremental.state_json(state, records)) == expected
    if not any(isinstance(m, float) and math.isnan(m) for m in medians):  # orjson: null
        assert incremental.state_json(state, records).decode() == json.dumps(
            {**state, "format": incremental.STATE_FORMAT, "matches": records}, sort_keys=True,
            separators=(",", ":")) + "\n"


def test_a_changed_log_rerenders_only_its_match(season: SeasonRun, view: StoreView,
                                                tmp_path: Path) -> None:
    store = copy_season(season.folder, tmp_path / "season")
    out = tmp_path / "site"
    render_site(store, out)
    target = view.done()[0]["match_id"]
    log = tmp_path / "season" / "logs" / f"{target}.jsonl.gz"
    page = out / "matches" / f"{target}.html"
    os.utime(log, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns + 10**9))
    os.utime(page, ns=(0, 0))
    again = render_site(store, out)
    assert (again.match_pages_rendered, again.match_pages_reused) == (1, len(view.done()) - 1)
    # Re-rendered, and with the same content (the log's events did not change).
    assert page.read_bytes() == (season.report / "matches" / f"{target}.html").read_bytes()


def test_a_log_whose_lines_lack_their_fields_is_listed_not_fatal(
        season: SeasonRun, view: StoreView, tmp_path: Path) -> None:
    """An older store (no SHA-256 recorded) with a log that reads whole but whose decision
    line lacks its seat: that match is listed as damaged, the rest is rendered."""
    store = copy_season(season.folder, tmp_path / "season")
    target = view.done()[0]["match_id"]
    log = tmp_path / "season" / "logs" / f"{target}.jsonl.gz"
    lines = gzip.decompress(log.read_bytes()).decode().splitlines()
    at = next(i for i, line in enumerate(lines) if '"type":"decision"' in line)
    record = json.loads(lines[at])
    del record["seat"]
    lines[at] = json.dumps(record)
    log.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    with sqlite3.connect(store) as db:
        db.execute("UPDATE matches SET log_sha256 = NULL")
    summary = render_site(store, tmp_path / "site")
    assert [(p.match_id, p.kind) for p in summary.log_problems] == [(target, "damaged")]
    assert "KeyError" in summary.log_problems[0].detail
    assert summary.match_pages_rendered == len(view.done()) - 1


def test_a_failed_match_is_shown_as_failed(season: SeasonRun, view: StoreView,
                                           tmp_path: Path) -> None:
    store_path = copy_season(season.folder, tmp_path / "season")
    failed = view.done()[2]["match_id"]
    db = sqlite3.connect(store_path)
    with db:  # as if this match had never been played ...
        db.execute("DELETE FROM results WHERE match_id = ?", (failed,))
        db.execute("UPDATE matches SET status = 'scheduled', finished_at = NULL, seconds = NULL,"
                   " decisions = NULL, rounds = NULL, log_path = NULL WHERE match_id = ?",
                   (failed,))
    db.close()
    store = SeasonStore(store_path)
    try:  # ... and then failed
        store.record_failure(failed, "bot <greedy> crashed & exited 3")
    finally:
        store.close()
    copy = read_store(store_path)
    assert copy.counts == {"scheduled": 0, "done": 5, "failed": 1}
    out = tmp_path / "site"
    summary = render_site(store_path, out)
    assert summary.match_pages_rendered == 5
    assert not (out / "matches" / f"{failed}.html").exists()

    page = parse(out / "matches.html")
    rows = {r[0].text: r for r in table_rows(page.find("table", class_="matches"))}
    assert set(rows) == {m["match_id"] for m in view.matches}
    row = rows[failed]
    assert not row[0].find_all("a"), "a failed match has no page to link to"
    badge = row[MATCH_COLUMNS.index("Status")].find("span", class_="badge")
    assert badge.text == "failed" and "bad" in badge.attrs["class"].split()
    assert badge.attrs["title"] == "bot <greedy> crashed & exited 3"
    assert "bot &lt;greedy&gt; crashed &amp; exited 3" in (out / "matches.html").read_text()
    assert "bot <greedy> crashed & exited 3" in row[MATCH_COLUMNS.index("Status")].text
    names = [view.entrants[e]["name"] for e in copy.matches[2]["seats"]]
    assert [p.find("a").text for p in row[2].find_all("span", class_="player")] == names
    for match_id, other in rows.items():
        if match_id != failed:
            assert other[MATCH_COLUMNS.index("Status")].text == "done"
            assert other[0].find("a").attrs["href"] == f"matches/{match_id}.html"

    standings = parse(out / "index.html")
    assert "1 failed" in standings.find("p", class_="lead").text
    facts = standings.find("dl", class_="facts").text
    assert "5 done, 1 failed, 0 to play" in facts
    played = {s.entrant_id: s.matches for s in copy.board.standings}
    rows_ = table_rows(standings.find("table", class_="standings"))
    matches_column = STANDINGS_COLUMNS.index("Matches")
    assert sorted(int(r[matches_column].text) for r in rows_) == sorted(played.values())
    # The standings explain the failure: why, how many, and where to see them.
    failures = standings.find("ul", class_="failures").text
    assert "1 match" in failures and "bot <greedy> crashed & exited 3" in failures
    assert any(a.attrs.get("href") == "matches.html?result=failed"
               for a in standings.find_all("a"))
    assert sum(played.values()) == 2 * 5


# -- accessibility and links ----------------------------------------------------------------


def test_accessibility_basics(season: SeasonRun) -> None:
    pages = html_pages(season.report)
    assert len(pages) >= 10
    for path in pages:
        page = parse(path)
        where = str(path.relative_to(season.report))
        html = page.find("html")
        assert html.attrs.get("lang"), where
        assert len(page.find_all("h1")) == 1, where
        assert len(page.find_all("main")) == 1, where
        assert page.find("title").text, where
        assert page.find("meta", name="viewport"), where
        for table in page.find_all("table"):
            headers = table.find_all("th")
            assert headers, where
            for th in headers:
                assert th.attrs.get("scope") in ("col", "row", "colgroup", "rowgroup"), (
                    where, th.text)
            assert table.find("thead").find_all("th", scope="col"), where
        for img in page.find_all("img"):
            assert img.attrs.get("alt") is not None, where
        for svg in page.find_all("svg"):
            assert svg.attrs.get("role") == "img", where
            assert svg.find("title").text, where
        for button in page.find_all("button"):
            assert button.text or button.attrs.get("aria-label"), where
    # Each bot page has two charts, its rating history and its think time, each labelled.
    for path in sorted((season.report / "bots").glob("*.html")):
        if ".matches" in path.name:
            continue
        charts = parse(path).find_all("svg")
        assert len(charts) == 2
        for chart in charts:
            assert chart.attrs["role"] == "img" and chart.find("title").text


def test_logo_says_uno_arena_once(season: SeasonRun) -> None:
    for path in html_pages(season.report):
        brand = parse(path).find("a", class_="brand")
        assert brand.text == "UNO Arena", (path, brand.text)


def test_entrants_without_matches_are_listed_apart(season: SeasonRun, tmp_path: Path) -> None:
    """A bot whose every match failed (its build, say) is not ranked: it is listed under
    Unrated, and its failures are explained."""
    store_path = copy_season(season.folder, tmp_path / "season")
    store = SeasonStore(store_path)
    try:
        broken = store.entrant_id("broken", "2.0", "/bots/broken", "hash-broken",
                                  {"name": "broken"})
        store.db.execute("INSERT INTO matches (match_id, chance, grp, deal, seats) "
                         "VALUES ('m99999', 'm99999', 99, 0, ?)", (f"[{broken}, 1]",))
        store.record_failure("m99999", "entrant broken 2.0 could not be built: exit 2")
    finally:
        store.close()
    out = tmp_path / "site"
    render_site(store_path, out)
    page = parse(out / "index.html")
    ranked = [r[1].find("a").text for r in table_rows(page.find("table", class_="standings"))]
    assert "broken" not in ranked and len(ranked) == len(BOTS)
    unrated = page.find("ul", class_="unrated")
    assert [a.text for a in unrated.find_all("a")] == ["broken"]
    assert "could not be built" in page.find("ul", class_="failures").text
    data = json.loads((out / "standings.json").read_text())
    assert data["unrated"] == ["broken"]
    assert data["standings"][-1]["rank"] == "unrated"


def test_every_link_resolves(season: SeasonRun) -> None:
    """Relative links only (works from disk and any host), and none is broken."""
    rounds: dict[Path, set[str]] = {}
    for path in html_pages(season.report):
        page = parse(path)
        targets = [n.attrs["href"] for n in page.iter() if n.tag in ("a", "link")
                   and "href" in n.attrs]
        targets += [n.attrs["src"] for n in page.iter() if "src" in n.attrs]
        assert targets
        for target in targets:
            if target.startswith("data:"):  # inline (the empty favicon): no request at all
                continue
            assert not re.match(r"^[a-z]+:|^//|^/", target), (path, target)
            file, _, fragment = target.partition("#")
            file = file.partition("?")[0]  # a filter in the query: the page itself
            resolved = (path.parent / file).resolve() if file else path
            assert resolved.is_file(), (path, target)
            assert resolved.is_relative_to(season.report.resolve()), (path, target)
            if fragment:  # a replay's round, or an element of the page (a match's row)
                if resolved not in rounds:
                    target_page = parse(resolved)
                    options = target_page.find_all("select", id="round-select")
                    seats = target_page.find_all("select", id="seat-select")
                    rounds[resolved] = {f"round-{o.attrs['value']}" for select in options
                                        for o in select.find_all("option")} | {
                        f"seat-{o.attrs['value']}" for select in seats
                        for o in select.find_all("option") if o.attrs["value"] != "all"} | {
                        n.attrs["id"] for n in target_page.iter() if "id" in n.attrs}
                assert fragment in rounds[resolved], (path, target)


def test_names_and_versions_long_in_bytes_still_name_pages(season: SeasonRun,
                                                           tmp_path: Path) -> None:
    """A bot page is named after the bot, its file name capped: 64 letters beyond the
    first plane are 256 bytes of UTF-8, and a store may hold a version of any length;
    neither stops the site with "File name too long"."""
    store_path = copy_season(season.folder, tmp_path / "season")
    store = SeasonStore(store_path)
    wide, long_version = "\U0001d400" * 64, "9" * 300
    try:
        for number, (name, version) in enumerate([(wide, "1.0"), ("plain", long_version),
                                                  (wide, long_version)]):
            entrant = store.entrant_id(name, version, f"/bots/long{number}", f"h{number}",
                                       {"name": name})
            match_id = f"m9999{number}"
            store.db.execute("INSERT INTO matches (match_id, chance, grp, deal, seats) "
                             "VALUES (?, ?, 99, 0, ?)", (match_id, match_id, f"[{entrant}, 1]"))
            store.record_failure(match_id, "could not be built: exit 2")
    finally:
        store.close()
    out = tmp_path / "site"
    render_site(store_path, out)
    links = [a.attrs["href"] for a in parse(out / "index.html").find(
        "ul", class_="unrated").find_all("a")]
    assert len(links) == 3 and len(set(links)) == 3
    for link in links:
        page = out / link
        assert page.is_file() and len(os.fsencode(page.name)) <= 255
