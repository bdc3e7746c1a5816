"""The site of a large season, on a small synthetic one with small page sizes:
the match list and bot pages split into pages with stable addresses and a pager, deal
partners linked across pages, the head-to-head page one row a bot, no page over the cap,
and the incremental render showing every change.

The season is real (a season file of synthetic bot folders, the driver's store and
schedule); its results are recorded straight into the store, each with a copy of one of
the report season's real logs."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import jinja2
import pytest
from report_html import parse
from season_data import SeasonRun

from arena.league.driver import open_store
from arena.league.schedule import ScheduledMatch
from arena.league.season import load_season
from arena.league.store import MatchRecord, SeasonStore, SeatResult, StoredResult
from arena.report import botpages, downloads, incremental, workers
from arena.report import site as report_site
from arena.report.lists import page_file
from arena.report.render import render_site

BOTS = 11  # more than the head-to-head grid's limit of 10 (below)
PER_PAGE = 40
BOT_PER_PAGE = 10
ROWS_PER_PART = 3
CAP = 1_000_000

SEASON = """
[season]
name = "paged"
table_size = 2
matches_per_group = 2
entrants = ["bots/*"]

[sandbox]
backend = "plain"

[output]
folder = "runs"
report = "site"
"""


@dataclass
class Synthetic:
    store_path: Path
    store: SeasonStore
    matches: list[ScheduledMatch]
    logs: Path
    source: Path
    recorded: int = 0

    def record(self, count: int) -> None:
        """Record the next ``count`` matches of the schedule (seat 0 wins the odd ones)."""
        sha = hashlib.sha256(self.source.read_bytes()).hexdigest()
        for match in self.matches[self.recorded:self.recorded + count]:
            log = self.logs / f"{match.match_id}.jsonl.gz"
            shutil.copyfile(self.source, log)
            first_wins = int(match.match_id[1:]) % 2 == 1
            places = (1, 2) if first_wins else (2, 1)
            self.store.record(MatchRecord(
                match.match_id, 1.5, 40, 1, False, str(log),
                tuple(SeatResult(seat, places[seat], 100 if places[seat] == 1 else 0,
                                 places[seat] == 1, 0, False, ()) for seat in range(2)),
                log_sha256=sha))
        self.recorded += count


@pytest.fixture()
def synthetic(tmp_path: Path, season: SeasonRun, monkeypatch: pytest.MonkeyPatch
              ) -> Iterator[Synthetic]:
    monkeypatch.setattr(report_site, "MATCHES_PER_PAGE", PER_PAGE)
    monkeypatch.setattr(botpages, "BOT_MATCHES_PER_PAGE", BOT_PER_PAGE)
    monkeypatch.setattr(botpages, "ROWS_PER_PART", ROWS_PER_PART)
    monkeypatch.setattr(report_site, "H2H_GRID_LIMIT", 10)
    for index in range(BOTS):
        folder = tmp_path / "bots" / f"bot{index:02d}"
        folder.mkdir(parents=True)
        (folder / "bot.toml").write_text(
            f'name = "bot{index:02d}"\nversion = "1.0"\nlanguage = "python"\n'
            'run = ["python3", "bot.py"]\n')
        (folder / "bot.py").write_text("raise SystemExit('never started')\n")
    (tmp_path / "season.toml").write_text(SEASON)
    loaded = load_season(tmp_path / "season.toml")
    store, _, matches = open_store(loaded)
    loaded.logs.mkdir(parents=True, exist_ok=True)
    # The shortest of the real logs (every match page is made from it: a render is quicker).
    source = min(sorted((season.folder / "logs").glob("*.jsonl.gz")),
                 key=lambda log: log.stat().st_size)
    data = Synthetic(loaded.store_path, store, list(matches), loaded.logs, source)
    data.record(len(matches) - 12)  # the season's last 12 matches still to play
    store.record_failure(matches[-1].match_id, "bot bot03 crashed")
    try:
        yield data
    finally:
        store.close()


def rows_of(page: Path) -> list[str]:
    table = parse(page).find("table", id="matches-table")
    return [row.attrs["id"] for row in table.find("tbody").find_all("tr")]


def test_the_match_list_is_split_into_stable_pages(synthetic: Synthetic, tmp_path: Path
                                                   ) -> None:
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    total = len(synthetic.matches)  # 55 pairs, twice: 110 matches
    count = -(-total // PER_PAGE)
    names = ["matches.html"] + [f"matches-{n}.html" for n in range(2, count + 1)]
    assert sorted(p.name for p in site.glob("matches*.html")) == sorted(names)
    ids = [m.match_id for m in synthetic.matches]
    for number, name in enumerate(names, start=1):
        # Page k holds the schedule's matches (k-1)*40+1 to k*40, in order.
        assert rows_of(site / name) == ids[(number - 1) * PER_PAGE:number * PER_PAGE]
        page = parse(site / name)
        pagers = page.find_all("nav", class_="pager")
        assert len(pagers) == 2, "a pager above and below the list"
        for pager in pagers:
            links = {a.text: a.attrs["href"] for a in pager.find_all("a")}
            for other, other_name in enumerate(names, start=1):
                if other != number:
                    assert links[str(other)] == other_name
            assert pager.find("span", aria_current="page").text == str(number)
            assert links.get("Previous") == (names[number - 2] if number > 1 else None)
            assert links.get("Next") == (names[number] if number < count else None)


def test_deal_partners_are_linked_on_their_page(synthetic: Synthetic, tmp_path: Path) -> None:
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    where = {match_id: name for name in [p.name for p in site.glob("matches*.html")]
             for match_id in rows_of(site / name)}
    checked = 0
    for name in {*where.values()}:
        page = parse(site / name)
        for cell in page.find_all("td", class_="deal"):
            for href in cell.links():
                target, _, anchor = href.partition("#")
                assert (target or name) == where[anchor], f"{href} on {name}"
                assert target != name, "a partner on the same page is linked by its anchor"
                checked += 1
    assert checked == len(synthetic.matches), "every match links its deal partner"


def test_bot_pages_list_their_matches_in_pages(synthetic: Synthetic, tmp_path: Path) -> None:
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    store = synthetic.store
    slug = "bot03-1-0"
    entrant = next(e["id"] for e in store.entrants() if e["name"] == "bot03")
    played = sorted({r.match_id for r in store.results() if r.entrant_id == entrant})
    pages = [site / "bots" / f"{slug}.matches.html"] + [
        site / "bots" / f"{slug}.matches-{n}.html"
        for n in range(2, -(-len(played) // BOT_PER_PAGE) + 1)]
    # The bot page (its standing, which moves with every result) links every page.
    assert {p.name for p in pages} <= set(
        parse(site / "bots" / f"{slug}.html").find("p", class_="bot-matches").links())
    listed: list[str] = []
    for number, page in enumerate(pages, start=1):
        table = parse(page).find("table", id="results-table")
        rows = [row.cells()[0].text for row in table.find("tbody").find_all("tr")]
        assert len(rows) == min(BOT_PER_PAGE, len(played) - (number - 1) * BOT_PER_PAGE)
        listed += rows
        links = parse(page).find("nav", class_="pager").links()
        assert {p.name for p in pages} - {page.name} <= set(links)
    assert listed == played
    assert not (site / "bots" / f"{slug}.matches-{len(pages) + 1}.html").exists()


def test_head_to_head_is_one_row_a_bot_above_the_grid_limit(synthetic: Synthetic,
                                                             tmp_path: Path) -> None:
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    page = parse(site / "head-to-head.html")
    assert not page.find_all("table", class_="h2h"), "no grid of every pair"
    rows = page.find("table", id="h2h-table").find("tbody").find_all("tr")
    assert len(rows) == BOTS
    played = synthetic.matches[:synthetic.recorded]
    for row in rows:
        cells = row.cells()
        index = int(cells[0].text.removeprefix("bot"))
        assert cells[1].text == f"{BOTS - 1} of {BOTS - 1}"  # met every other bot
        assert cells[2].text == str(sum(index in m.seats for m in played))


def test_no_page_is_over_the_cap(synthetic: Synthetic, tmp_path: Path) -> None:
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    sizes = {p: p.stat().st_size for p in site.rglob("*.html")}
    assert max(sizes.values()) < CAP
    # The lists are in pages: the largest list page is about a page of rows, not all.
    # (All 110 rows on the first page would make it 2.75 times the second.)
    assert (site / "matches.html").stat().st_size < 2 * (site / "matches-2.html").stat().st_size


def test_an_incremental_render_shows_every_change(synthetic: Synthetic, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "cores", lambda: 1)  # what is done counted in one process
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    before = {p.name: p.read_bytes() for p in site.glob("matches*.html")}
    synthetic.record(1)  # the next match, on the last page
    recorded = synthetic.matches[synthetic.recorded - 1]
    archived: list[str] = []
    add_logs = downloads.add_logs

    def counting(tar: tarfile.TarFile, name: str, logs: list[Path]) -> None:
        archived.extend(log.name for log in logs)
        add_logs(tar, name, logs)

    monkeypatch.setattr(downloads, "add_logs", counting)
    rendered: list[str] = []
    template_render = jinja2.Template.render

    def counting_render(self: jinja2.Template, *args: object, **kwargs: object) -> str:
        rendered.append(str(self.name))
        return template_render(self, *args, **kwargs)

    monkeypatch.setattr(jinja2.Template, "render", counting_render)
    made: list[list[str]] = []
    rows_html = botpages.rows_html

    def counting_rows(result_rows: object, results: list[StoredResult]) -> bytes:
        made.append([r.match_id for r in results])
        return rows_html(result_rows, results)

    monkeypatch.setattr(botpages, "rows_html", counting_rows)
    render_site(synthetic.store_path, site)
    assert archived == [f"{recorded.match_id}.jsonl.gz"], "the new log appended alone"
    # Its two bots' lists of matches are written again, only their part holding the new
    # result (and its deal partner) made again: the other rows are copied.
    assert 1 <= len(made) <= 4, made
    assert all(recorded.match_id in ids or len(ids) <= ROWS_PER_PART for ids in made)
    assert any(recorded.match_id in ids for ids in made)
    # Only the pages of the list whose rows changed are rendered again: the new result's
    # page and its deal partner's (whose net points it completes); nothing that moves with
    # every result (the live ratings, the draw probability) is on the list's pages.
    assert 1 <= rendered.count("matches.html") <= 2, rendered.count("matches.html")
    after = {p.name: p.read_bytes() for p in site.glob("matches*.html")}
    last = f"matches-{-(-len(synthetic.matches) // PER_PAGE)}.html"
    changed = {name for name in before if before[name] != after[name]}
    assert last in changed
    row = parse(site / last).find("tr", id=recorded.match_id)
    assert "done" in row.text and "to play" not in row.text
    # A whole render into an empty folder gives the same pages.
    fresh = tmp_path / "fresh"
    render_site(synthetic.store_path, fresh)
    for name, content in after.items():
        assert (fresh / name).read_bytes() == content, name
    assert (fresh / "logs.tar").read_bytes() == (site / "logs.tar").read_bytes()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_an_incremental_render_is_a_full_render(synthetic: Synthetic, tmp_path: Path) -> None:
    """What the incremental render reuses (list pages, bots' lists of matches, parts of
    the downloads, the archive) leaves every file as a render from scratch writes it."""
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    for step, count in enumerate((1, 5)):
        synthetic.record(count)
        if step:  # a file edited behind the render's back is written again whole
            (site / "results.csv").write_bytes(b"edited\n")
            # A list of matches about to get a row, its rows edited (same length).
            bot = synthetic.matches[synthetic.recorded - 1].seats[0]
            pages = list((site / "bots").glob(f"bot{bot:02d}-1-0.matches*.html"))
            assert pages
            for page in pages:
                page.write_bytes(page.read_bytes().replace(b"<tr", b"<TR"))
        render_site(synthetic.store_path, site)
        fresh = tmp_path / f"fresh-{step}"
        render_site(synthetic.store_path, fresh)
        assert snapshot(site) == snapshot(fresh)



def test_a_match_file_removed_by_hand_is_written_again(synthetic: Synthetic,
                                                       tmp_path: Path) -> None:
    """A match whose page is reused has all its files: its page, replay, replay data and
    log copy, one of each removed from the site, come back at the next report, and the
    archive holds every log again (it is made from the logs folder)."""
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    played = sorted(p.name.removesuffix(".html") for p in (site / "matches").glob("*.html"))
    assert len(played) >= 4
    removed = [site / "matches" / f"{played[0]}.html", site / "replays" / f"{played[1]}.html",
               site / "replays" / f"{played[2]}.js", site / "logs" / f"{played[3]}.jsonl.gz"]
    for path in removed:
        path.unlink()
    summary = render_site(synthetic.store_path, site)
    assert summary.match_pages_rendered == 4
    assert all(path.is_file() for path in removed)
    render_site(synthetic.store_path, tmp_path / "fresh")
    assert snapshot(site) == snapshot(tmp_path / "fresh")

def test_bot_pages_shared_between_processes_are_the_pages_one_process_writes(
        synthetic: Synthetic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a machine of several cores the bots' pages are shared with forked helpers: the
    same files, the same state, also when the render is incremental."""
    shared, alone = tmp_path / "shared", tmp_path / "alone"
    helpers = 2
    monkeypatch.setattr(botpages, "BOTS_PER_HELPER", 3)
    for step in range(2):
        monkeypatch.setattr(workers, "cores", lambda: helpers + 1)
        summary = render_site(synthetic.store_path, shared)
        assert summary.processes == helpers + 1  # helpers were forked
        monkeypatch.setattr(workers, "cores", lambda: 1)
        assert render_site(synthetic.store_path, alone).processes == 1
        assert snapshot(shared) == snapshot(alone)
        assert summary.pages == render_site(synthetic.store_path, alone).pages
        if not step:
            synthetic.record(5)


def test_match_pages_shared_with_a_helper_are_the_pages_one_process_writes(
        synthetic: Synthetic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pages of the matches to render are shared with a forked helper (this process
    takes them from the front of the list, the helper from the back): the same files and
    the same damaged logs, listed in schedule order, as when one process renders them
    all."""
    # Two logs that pass their check (the SHA-256 recorded is theirs) but do not read,
    # the last two in schedule order: the helper's first two, found in reverse order.
    played = sorted(m.match_id for m in synthetic.matches[:synthetic.recorded])
    damaged = played[-2:]
    for match_id in damaged:
        log = synthetic.logs / f"{match_id}.jsonl.gz"
        log.write_bytes(b"not a gzip file")
        synthetic.store.db.execute("UPDATE matches SET log_sha256 = ? WHERE match_id = ?",
                                   (hashlib.sha256(log.read_bytes()).hexdigest(), match_id))
    shared, alone = tmp_path / "shared", tmp_path / "alone"
    monkeypatch.setattr(workers, "cores", lambda: 2)
    found = render_site(synthetic.store_path, shared).log_problems
    monkeypatch.setattr(workers, "cores", lambda: 1)
    assert render_site(synthetic.store_path, alone).log_problems == found
    assert [(p.match_id, p.kind) for p in found] == [(m, "damaged") for m in damaged]
    assert snapshot(shared) == snapshot(alone)
    page = (shared / page_file("matches", len(played) // PER_PAGE + 1)).read_text()
    assert page.index(damaged[0]) < page.index(damaged[1])


def test_a_log_found_damaged_by_its_pages_then_mended_shows_in_every_list(
        synthetic: Synthetic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log that passes its check but does not read is found while its pages are made:
    the lists listing it say so at once, and say it no more once the log is mended, as a
    render from scratch does."""
    monkeypatch.setattr(workers, "cores", lambda: 2)
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    match_id = synthetic.matches[3].match_id
    log = synthetic.logs / f"{match_id}.jsonl.gz"
    good = log.read_bytes()
    for content in (b"not a gzip file", good):  # its SHA-256 recorded: the check passes
        log.write_bytes(content)
        synthetic.store.db.execute("UPDATE matches SET log_sha256 = ? WHERE match_id = ?",
                                   (hashlib.sha256(content).hexdigest(), match_id))
        found = render_site(synthetic.store_path, site).log_problems
        assert [p.match_id for p in found] == ([match_id] if content != good else [])
        fresh = tmp_path / f"fresh-{len(found)}"
        render_site(synthetic.store_path, fresh)
        assert snapshot(site) == snapshot(fresh)


def test_two_processes_take_each_item_once() -> None:
    """The list of matches to render shared from its two ends: every item taken once."""
    ends = workers.Ends(7)
    taken = [ends.take(back) for back in (False, True, True, False, True, False, True)]
    assert taken == [0, 6, 5, 1, 4, 2, 3]
    assert ends.take(False) is None and ends.take(True) is None
    assert workers.Ends(0).take(True) is None


def test_a_helpers_error_reaches_the_render(synthetic: Synthetic, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botpages, "BOTS_PER_HELPER", 3)
    monkeypatch.setattr(workers, "cores", lambda: 2)
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    # A page only the helper writes: the parent takes every other bot (by id), from the
    # first, the helper the others.
    second = synthetic.store.entrants()[1]
    page = site / "bots" / f"{second['name']}-{second['version'].replace('.', '-')}.html"
    page.unlink()
    page.mkdir()
    with pytest.raises(IsADirectoryError):
        render_site(synthetic.store_path, site)


def test_pages_of_a_list_that_shrank_are_removed(synthetic: Synthetic, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    assert len(list(site.glob("matches-*.html"))) > 1
    assert len(list((site / "bots").glob("*.matches-*.html"))) > 1
    monkeypatch.setattr(report_site, "MATCHES_PER_PAGE", 10_000)
    monkeypatch.setattr(botpages, "BOT_MATCHES_PER_PAGE", 10_000)
    render_site(synthetic.store_path, site)
    assert not list(site.glob("matches-*.html"))
    assert not list((site / "bots").glob("*.matches-*.html"))
    render_site(synthetic.store_path, tmp_path / "fresh")
    assert snapshot(site) == snapshot(tmp_path / "fresh")


def test_a_log_altered_behind_a_reused_check_is_caught(synthetic: Synthetic,
                                                       tmp_path: Path) -> None:
    """The render reuses a log's check while its file is unchanged; an edit that keeps the
    size and puts the modification time back still changes the file's change time."""
    site = tmp_path / "site"
    assert not render_site(synthetic.store_path, site).log_problems
    log = synthetic.logs / f"{synthetic.matches[5].match_id}.jsonl.gz"
    stat = log.stat()
    content = bytearray(log.read_bytes())
    content[-9] ^= 0xFF
    log.write_bytes(bytes(content))
    os.utime(log, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert log.stat().st_size == stat.st_size and log.stat().st_mtime_ns == stat.st_mtime_ns
    problems = render_site(synthetic.store_path, site).log_problems
    assert [(p.match_id, p.kind) for p in problems] == [(synthetic.matches[5].match_id,
                                                          "altered")]
    # Every page of the list says so (the list of problems is on each).
    for page in site.glob("matches*.html"):
        assert "log altered" in page.read_text() or synthetic.matches[5].match_id not in \
            rows_of(page), page.name
        assert "1 match log damaged or missing" in page.read_text(), page.name


def test_pages_split_for_any_season_length(synthetic: Synthetic, tmp_path: Path) -> None:
    rng = random.Random(3)
    site = tmp_path / "site"  # the match pages rendered once, the lists at each size
    for size in rng.sample(range(1, 60), 4):
        report_site.MATCHES_PER_PAGE = size
        render_site(synthetic.store_path, site)
        pages = sorted(site.glob("matches*.html"), key=lambda p: (len(p.name), p.name))
        assert len(pages) == -(-len(synthetic.matches) // size)
        assert [m for p in pages for m in rows_of(p)] == [
            m.match_id for m in synthetic.matches]


def test_a_helper_killed_mid_render_loses_nothing(synthetic: Synthetic, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A helper that dies (killed, out of memory) ends the report with a clear error; the
    next report gives the site a render from scratch gives."""
    from arena.cli import main

    site = tmp_path / "site"
    render_site(synthetic.store_path, site)
    synthetic.record(5)
    monkeypatch.setattr(workers, "cores", lambda: 2)
    monkeypatch.setattr(report_site, "rate_outcomes", lambda *_: os._exit(9))
    assert main(["report", str(tmp_path / "season.toml"), "--out", str(site)]) == 1
    assert "a helper process of the render died" in capsys.readouterr().err
    monkeypatch.undo()
    render_site(synthetic.store_path, site)
    render_site(synthetic.store_path, tmp_path / "fresh")
    assert snapshot(site) == snapshot(tmp_path / "fresh")


def test_a_file_is_replaced_whole_or_not_at_all(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A render stopped while it replaces a file (the state, a download) leaves the last
    file, not a part of the new one."""
    target = tmp_path / "standings.csv"
    target.write_bytes(b"the last render's\n")

    def stopped(source: object, destination: object) -> None:
        raise OSError("stopped")

    monkeypatch.setattr(os, "replace", stopped)
    with pytest.raises(OSError):
        incremental.replace(target, b"the new one, much longer than the last\n" * 1000)
    assert target.read_bytes() == b"the last render's\n"
    monkeypatch.undo()
    incremental.replace(target, b"the new one\n")
    assert target.read_bytes() == b"the new one\n"
