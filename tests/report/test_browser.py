"""The site in a real browser: headless Chromium (Debian's /usr/bin/chromium) driven by
Playwright loads the served site, goes standings -> bot -> match -> replay, and steps the
replay with the keyboard, checking the top card against the match log.

Playwright cannot download its own browser here; a missing Playwright or Chromium is a
test failure, never a skip. Screenshots go to runs/screenshots/report/ (git ignores runs/).
"""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from season_data import ROOT, SeasonRun, StoreView, log_rounds

from arena.report.serve import make_server
from arena.rules import events as ev
from arena.rules.narration import card_words, describe

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = ROOT / "runs" / "screenshots" / "report"
TIMEOUT_MS = 10_000

# Everything the replay viewer shows that the log determines, read in one round trip.
READ_VIEW = """() => {
  const hands = [...document.querySelectorAll('#hands > li')];
  return {
    card: document.getElementById('top-card').dataset.card,
    position: document.getElementById('position').textContent,
    text: document.getElementById('event-text').textContent,
    draw: document.getElementById('draw-size').textContent,
    acting: hands.findIndex((li) => li.classList.contains('acting')),
    held: hands.map((li) => li.querySelectorAll('.card').length),
  };
}"""


# The outermost elements sticking out of the screen, outside any .table-wrap.
WIDER_THAN_SCREEN = """() => [...document.querySelectorAll('main *')]
  .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
  .filter((e) => !e.closest('.table-wrap'))
  .filter((e) => !e.parentElement.closest('main *') ||
                 e.parentElement.getBoundingClientRect().right <= window.innerWidth + 0.5)
  .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''))"""


@dataclass
class Chromium:
    browser: Any = None
    error: str = ""


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium]:
    """Chromium under Playwright, or why it could not start (the tests then fail)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        yield Chromium(error=f"the Playwright Python package is missing ({error}); install "
                             "it with `pip install playwright` (the browser is Debian's "
                             "chromium, no `playwright install` needed)")
        return
    if not CHROMIUM.is_file():
        yield Chromium(error=f"{CHROMIUM} is missing; install Debian's package: "
                             "`apt-get install chromium`")
        return
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    except Exception as error:
        playwright.stop()
        yield Chromium(error=f"Chromium ({CHROMIUM}) did not start under Playwright: {error}")
        return
    try:
        yield Chromium(browser)
    finally:
        browser.close()
        playwright.stop()


def browser_of(chromium: Chromium) -> Any:
    if chromium.error:
        pytest.fail(chromium.error, pytrace=False)
    return chromium.browser


@pytest.fixture(scope="module")
def site(season: SeasonRun) -> Iterator[str]:
    """The rendered site, served by `arena serve`'s server on a free port."""
    server = make_server(season.report, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def shots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("*.png"):
        old.unlink()
    return SCREENSHOTS


def screenshot(page: Any, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 2000, path
    return path


def expected_frames(round_: dict[str, Any], names: list[str],
                    rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the viewer must show after each step of a round, from the log's records
    (``rounds``: every round, for the step's place on the match's timeline)."""
    frames = []
    top: int | None = None
    hands: list[list[int]] = [[] for _ in names]
    discards = 0
    for step in round_["steps"]:
        record = step["record"]
        kind = step["e"]
        if kind == "RoundStarted":
            top, hands, discards = None, [[] for _ in names], 0
        elif kind == "Dealt":
            hands[record["seat"]] = list(record["cards"])
        elif kind == "FirstCardTurned":
            top, discards = record["card"], 1
        elif kind == "Played":
            hands[record["seat"]].remove(record["card"])
            top = record["card"]
            discards += 1
        elif kind == "Drew":
            hands[record["seat"]].extend(record["cards"])
        elif kind == "Reshuffled":
            discards = 1
        if kind == "Fault":
            text = None
        else:
            fields = {k: v for k, v in record.items() if k != "type"}
            text = describe(ev.from_record(fields), names)
        held = [len(h) for h in hands]
        frames.append({
            "card": "" if top is None else card_words(top),
            "text": text,
            "draw": str(108 - sum(held) - (discards if top is not None else 0)),
            "acting": -1 if step["s"] is None else step["s"],
            "held": held,
        })
    before = sum(len(r["steps"]) for r in rounds if r["number"] < round_["number"])
    total = sum(len(r["steps"]) for r in rounds)
    for number, frame in enumerate(frames, start=1):
        frame["position"] = (f"round {round_['number']}, step {number} of {len(frames)} "
                             f"({before + number} of {total} in the match)")
    return frames


def watch(page: Any) -> list[str]:
    """Collects script errors and failed requests (but the favicon nobody links to)."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on("console", lambda m: errors.append(f"console: {m.text}")
            if m.type == "error" and "Failed to load resource" not in m.text else None)
    page.on("response", lambda r: errors.append(f"HTTP {r.status}: {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}")
            if not r.url.endswith("/favicon.ico") else None)
    return errors


def check_frame(page: Any, expected: dict[str, Any], where: str) -> None:
    """The viewer shows ``expected`` (waiting up to 2 s for it, to be safe under load)."""
    deadline = time.monotonic() + 2
    while True:
        shown = page.evaluate(READ_VIEW)
        if expected["text"] is None:  # a fault: its text is the referee's reason
            shown.pop("text")
        wanted = {k: v for k, v in expected.items() if k in shown}
        if shown == wanted or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert shown == wanted, where


def pick_match(view: StoreView) -> tuple[dict[str, Any], str]:
    """A match of the top bot with at least 3 rounds if it has one (round 2 to open)."""
    top = view.board.standings[0].entrant_id
    mine = {r.match_id for r in view.results if r.entrant_id == top}
    match = max((m for m in view.done() if m["match_id"] in mine),
                key=lambda m: (min(m["rounds"], 3), m["match_id"]))
    return match, view.entrants[top]["name"]


def test_navigate_and_step_through_a_replay(chromium: Chromium, site: str, season: SeasonRun,
                                            view: StoreView, shots: Path) -> None:
    from playwright.sync_api import expect

    browser = browser_of(chromium)
    match, bot = pick_match(view)
    match_id = match["match_id"]
    names = view.names(match)
    rounds = log_rounds(view.log(match))
    number = 2 if len(rounds) >= 2 else 1
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors = watch(page)
    try:
        # Standings -> bot page.
        page.goto(f"{site}/")
        expect(page.locator("h1")).to_have_text("Standings")
        expect(page.locator("table.standings tbody tr")).to_have_count(len(view.entrants))
        screenshot(page, shots, "1-standings")
        page.locator(f'table.standings tbody th a:text-is("{bot}")').click()
        page.wait_for_url(re.compile(r"/bots/[^/]+\.html$"))
        expect(page.locator("h1")).to_contain_text(bot)
        expect(page.locator("svg.chart title#chart-title")).to_contain_text(bot)
        screenshot(page, shots, "2-bot")

        # Bot page -> its list of matches -> match page.
        page.locator("p.bot-matches a").first.click()
        page.wait_for_url(re.compile(r"/bots/[^/]+\.matches\.html$"))
        page.locator(f'table.matches tbody th a:text-is("{match_id}")').click()
        page.wait_for_url(re.compile(rf"/matches/{match_id}\.html$"))
        expect(page.locator("h1")).to_have_text(f"Match {match_id}")
        expect(page.locator("table.rounds tbody tr")).to_have_count(len(rounds))
        screenshot(page, shots, "3-match")

        # Match page -> the replay of round 2 (or 1).
        page.locator(f'table.rounds a[href$="#round-{number}"]').click()
        page.wait_for_url(re.compile(rf"/replays/{match_id}\.html#round-{number}$"))
        expect(page.locator("#round-select")).to_have_value(str(number))
        frames = expected_frames(rounds[number - 1], names, rounds)
        assert any(f["card"] for f in frames)
        expect(page.locator("#position")).to_have_text(frames[0]["position"])
        check_frame(page, frames[0], "step 1")

        # Forward with the arrow key through the whole round, one step at a time.
        changes = 0
        for index in range(1, len(frames)):
            page.keyboard.press("ArrowRight")
            check_frame(page, frames[index], f"round {number}, after {index} ArrowRight")
            changes += frames[index]["card"] != frames[index - 1]["card"]
            if index == len(frames) // 2:
                screenshot(page, shots, "4-replay")
        assert changes > 5, "the top card should change many times in a round"
        if number < len(rounds):  # on from the round's end into the next round
            page.keyboard.press("ArrowRight")
            following = expected_frames(rounds[number], names, rounds)
            check_frame(page, following[0], "ArrowRight past the round's end")
            expect(page.locator("#round-select")).to_have_value(str(number + 1))
            page.keyboard.press("ArrowLeft")
            check_frame(page, frames[-1], "ArrowLeft back into the round")
        # The hands the round ends with are the log's.
        ended = next(s["record"] for s in rounds[number - 1]["steps"]
                     if s["e"] == "RoundEnded")
        assert frames[-1]["held"] == [len(h) for h in ended["hands"]]

        # And back.
        for index in range(len(frames) - 2, max(len(frames) - 12, -1), -1):
            page.keyboard.press("ArrowLeft")
            check_frame(page, frames[index], f"round {number}, ArrowLeft to step {index + 1}")
        page.keyboard.press("Home")
        check_frame(page, frames[0], "Home")
        page.keyboard.press("ArrowLeft")  # back over the round's start: the previous round
        if number > 1:
            previous = expected_frames(rounds[number - 2], names, rounds)
            check_frame(page, previous[-1], "ArrowLeft before the round's start")
            page.keyboard.press("ArrowRight")
        check_frame(page, frames[0], "ArrowLeft then ArrowRight at the round's start")
        page.keyboard.press("End")
        check_frame(page, frames[-1], "End")
        page.locator("#first").click()
        check_frame(page, frames[0], "First button")
        for index in range(1, 6):
            page.locator("#next").click()
            check_frame(page, frames[index], f"Forward button to step {index + 1}")
        page.locator("#prev").click()
        check_frame(page, frames[4], "Back button")
        page.locator("#last").click()
        check_frame(page, frames[-1], "Last button")

        # Another round from the menu: it opens at its first step, and the URL says so.
        other = 1 if number != 1 else len(rounds)
        page.locator("#round-select").select_option(str(other))
        other_frames = expected_frames(rounds[other - 1], names, rounds)
        expect(page.locator("#position")).to_have_text(other_frames[0]["position"])
        check_frame(page, other_frames[0], f"round {other} from the menu")
        assert page.evaluate("location.hash") == f"#round-{other}-step-1"
        page.locator("#next").click()
        check_frame(page, other_frames[1], f"round {other}, Forward")
        page.locator("#event-text").click()
        page.keyboard.press("ArrowRight")
        check_frame(page, other_frames[2], f"round {other}, ArrowRight")
        page.reload()  # the round and step are in the URL: a reload opens them again
        expect(page.locator("#round-select")).to_have_value(str(other))
        check_frame(page, other_frames[2], f"round {other} after a reload")
        screenshot(page, shots, "5-replay-other-round")
        assert not errors, errors
    finally:
        context.close()


def test_pages_work_from_disk(chromium: Chromium, season: SeasonRun, view: StoreView) -> None:
    """No server needed: from file:// the styles load and the replay steps."""
    browser = browser_of(chromium)
    match, _ = pick_match(view)
    match_id = match["match_id"]
    rounds = log_rounds(view.log(match))
    frames = expected_frames(rounds[-1], view.names(match), rounds)
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors = watch(page)
    try:
        page.goto((season.report / "replays" / f"{match_id}.html").as_uri()
                  + f"#round-{len(rounds)}")
        check_frame(page, frames[0], "replay from file://")
        page.keyboard.press("ArrowRight")
        check_frame(page, frames[1], "replay from file://, ArrowRight")
        page.keyboard.press("End")
        check_frame(page, frames[-1], "replay from file://, End")
        for path in sorted(season.report.rglob("*.html")):
            page.goto(path.as_uri())
            styled = page.evaluate(
                "getComputedStyle(document.querySelector('header.site')).display")
            assert styled == "flex", f"{path}: the stylesheet did not load from disk"
        assert not errors, errors
    finally:
        context.close()


def test_pages_fit_a_phone_screen(chromium: Chromium, season: SeasonRun, view: StoreView,
                                  shots: Path) -> None:
    """Responsive: on a 375 px wide screen no page scrolls sideways; wide tables
    scroll inside their own box (.table-wrap)."""
    browser = browser_of(chromium)
    match, _ = pick_match(view)
    match_id = match["match_id"]
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        overflowing = []
        for path in [season.report / "index.html", season.report / "head-to-head.html",
                     season.report / "matches.html",
                     *sorted((season.report / "bots").glob("*.html")),
                     season.report / "matches" / f"{match_id}.html",
                     season.report / "replays" / f"{match_id}.html"]:
            page.goto(path.as_uri())
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > 375:
                culprits = page.evaluate(WIDER_THAN_SCREEN)
                overflowing.append(f"{path.relative_to(season.report)}: {width} px "
                                   f"because of {culprits}")
                screenshot(page, shots, f"phone-{path.stem}")
        page.goto((season.report / "replays" / f"{match_id}.html").as_uri())
        screenshot(page, shots, "6-replay-phone")
        assert not overflowing, "pages wider than a 375 px screen:\n" + "\n".join(overflowing)
    finally:
        context.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fetch(url: str, deadline: float) -> tuple[int, str, bytes]:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status, response.headers.get("Content-Type", ""), \
                    response.read()
        except (ConnectionError, urllib.error.URLError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.parametrize("where", ["site", "parent"])
def test_arena_serve(season: SeasonRun, view: StoreView, where: str) -> None:
    """`arena serve DIR --port N` serves the standings at /; given the folder holding the
    site, it finds the one index.html below it."""
    port = free_port()
    directory = season.report if where == "site" else season.report.parent
    server = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", str(directory), "--port", str(port)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 15
        status, kind, body = fetch(f"http://127.0.0.1:{port}/", deadline)
        assert status == 200 and kind.startswith("text/html")
        html = body.decode()
        assert "<h1>Standings</h1>" in html
        assert html == (season.report / "index.html").read_text(encoding="utf-8")
        for entrant in view.entrants.values():
            assert f">{entrant['name']}</a>" in html
        match = view.done()[0]
        status, _, log = fetch(f"http://127.0.0.1:{port}/logs/{match['match_id']}.jsonl.gz",
                               deadline)
        assert status == 200 and log == Path(match["log_path"]).read_bytes()
        assert server.poll() is None, "arena serve exited"
    finally:
        server.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=5)
        if server.poll() is None:
            server.kill()
            server.wait()
        out, err = server.communicate()
    assert f"at http://127.0.0.1:{port}/" in out, (out, err)


# -- accessibility (axe-core), sorting, filters, phone layout, several seasons ----

AXE = ROOT / ".ci" / "tools" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
RUN_AXE = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
  return result.violations.map((v) => v.id + ' (' + v.impact + '): ' +
    v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', '));
}"""


def axe_violations(page: Any) -> list[str]:
    if not AXE.is_file():
        pytest.fail(f"axe-core is missing ({AXE}); `bash .ci/setup` installs it with npm",
                    pytrace=False)
    page.add_script_tag(path=str(AXE))
    found: list[str] = page.evaluate(RUN_AXE, AXE_TAGS)
    return found


@pytest.mark.parametrize("width", [1280, 375], ids=["desktop", "phone"])
def test_axe_finds_no_violations(chromium: Chromium, season: SeasonRun, view: StoreView,
                                 width: int) -> None:
    """axe-core (WCAG 2.2 AA and best practices) on every kind of page, on a desktop and
    a phone screen: no violation (contrast of the head-to-head's small text included)."""
    browser = browser_of(chromium)
    match, _ = pick_match(view)
    report = season.report
    paths = [report / "index.html", report / "head-to-head.html", report / "matches.html",
             *sorted((report / "bots").glob("*.html")),
             report / "matches" / f"{match['match_id']}.html",
             report / "replays" / f"{match['match_id']}.html"]
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        problems = {}
        for path in paths:
            page.goto(path.as_uri())
            found = axe_violations(page)
            if found:
                problems[str(path.relative_to(report))] = found
        assert not problems, problems
    finally:
        context.close()


def visible_rows(page: Any, table: str) -> list[str]:
    return list(page.evaluate(
        """(selector) => [...document.querySelectorAll(selector + ' tbody tr')]
             .filter((row) => !row.hidden).map((row) => row.cells[0].textContent.trim() +
             '|' + row.querySelector('th').textContent.trim())""", table))


def test_standings_sort_and_filter(chromium: Chromium, site: str, view: StoreView) -> None:
    from playwright.sync_api import expect

    browser = browser_of(chromium)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors = watch(page)
    try:
        page.goto(f"{site}/")
        official = view.ratings.official.rows
        names = [view.entrants[r.entrant_id]["name"] for r in official]
        shown = [row.split("|")[1].split()[0] for row in visible_rows(page, "table.standings")]
        assert shown == names, "best first"
        strength_of = {view.entrants[r.entrant_id]["name"]: round(r.strength, 6)
                       for r in official}
        strength = page.locator("table.standings thead th", has_text="Strength")
        strength.locator("button").click()
        expect(strength).to_have_attribute("aria-sort", "ascending")
        shown = [row.split("|")[1].split()[0] for row in visible_rows(page, "table.standings")]
        assert [strength_of[n] for n in shown] == sorted(strength_of.values())
        strength.locator("button").click()
        expect(strength).to_have_attribute("aria-sort", "descending")
        shown = [row.split("|")[1].split()[0] for row in visible_rows(page, "table.standings")]
        assert [strength_of[n] for n in shown] == sorted(strength_of.values(), reverse=True)
        # Header names are shown as written (no upper-casing of bot names).
        assert page.evaluate("getComputedStyle(document.querySelector('thead th'))"
                             ".textTransform") == "none"
        matches = page.locator("table.standings thead th", has_text="Matches")
        matches.locator("button").click()
        expect(matches).to_have_attribute("aria-sort", "ascending")
        expect(strength).not_to_have_attribute("aria-sort", "descending")
        page.locator("form.filters input[name=bot]").fill(names[-1][:4])
        shown = [row.split("|")[1].split()[0] for row in visible_rows(page, "table.standings")]
        assert shown == [n for n in names if names[-1][:4] in n]
        expect(page.locator("form.filters .shown")).to_have_text(
            f"{len(shown)} of {len(names)} shown")
        assert not errors, errors
    finally:
        context.close()


def test_head_to_head_cell_opens_the_pairs_matches(chromium: Chromium, site: str,
                                                   view: StoreView) -> None:
    """A head-to-head cell links to the match list filtered to the pair; the filters then
    narrow by result, round and faults, and the address keeps the choice."""
    from playwright.sync_api import expect

    browser = browser_of(chromium)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors = watch(page)
    try:
        page.goto(f"{site}/head-to-head.html")
        rows = view.ratings.official.rows
        first = view.entrants[rows[0].entrant_id]["name"]
        cell = page.locator("table.h2h tbody tr", has=page.locator(
            f'th a:text-is("{first}")')).locator("td.heat a.cell-link").first
        cell.click()
        page.wait_for_url(re.compile(r"/matches\.html\?bot=.+&opponent=.+$"))
        bot = page.locator("select[name=bot]").input_value()
        opponent = page.locator("select[name=opponent]").input_value()
        by_slug = {}
        for option in page.locator("select[name=bot] option").all():
            by_slug[option.get_attribute("value")] = option.text_content()
        assert by_slug[bot] == first
        pair = {first, by_slug[opponent]}
        expected = [m["match_id"] for m in view.matches if set(view.names(m)) == pair]
        assert expected
        shown = [row.split("|")[1] for row in visible_rows(page, "table.matches")]
        assert shown == expected
        # Won by the bot: the pair's matches it won.
        page.locator("select[name=result]").select_option("won")
        won = [m["match_id"] for m in view.matches if m["match_id"] in expected and any(
            r.match_id == m["match_id"] and view.entrants[r.entrant_id]["name"] == first
            and r.place == 1 for r in view.results)]
        shown = [row.split("|")[1] for row in visible_rows(page, "table.matches")]
        assert shown == won
        assert "result=won" in page.url
        page.locator("select[name=result]").select_option("")
        page.locator("select[name=bot]").select_option("")
        page.locator("select[name=opponent]").select_option("")
        first_round = view.matches[0]["round"]
        page.locator("select[name=round]").select_option(str(first_round))
        shown = [row.split("|")[1] for row in visible_rows(page, "table.matches")]
        assert shown == [m["match_id"] for m in view.matches if m["round"] == first_round]
        page.locator("select[name=round]").select_option("")
        page.locator("select[name=faults]").select_option("with")
        faulty = {r.match_id for r in view.results if r.faults}
        shown = [row.split("|")[1] for row in visible_rows(page, "table.matches")]
        assert shown == [m["match_id"] for m in view.matches if m["match_id"] in faulty]
        expect(page.locator("form.filters .shown")).to_have_text(
            f"{len(shown)} of {len(view.matches)} shown")
        assert not errors, errors
    finally:
        context.close()


TAP_TARGETS = """() => [...document.querySelectorAll(
    'header nav a, main a, main button, main select, main input')]
  .filter((e) => e.getClientRects().length && !e.closest('.visually-hidden'))
  .map((e) => { const r = e.getBoundingClientRect();
    return {what: e.tagName.toLowerCase() + ' ' + (e.textContent || e.name).trim().slice(0, 30),
            width: r.width, height: r.height}; })
  .filter((t) => t.width < 44 - 0.5 || t.height < 44 - 0.5)"""


def test_phone_layout_keeps_the_first_column_and_44px_targets(chromium: Chromium,
                                                             season: SeasonRun) -> None:
    browser = browser_of(chromium)
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        small = {}
        for name in ("index.html", "head-to-head.html", "matches.html"):
            page.goto((season.report / name).as_uri())
            found = page.evaluate(TAP_TARGETS)
            if found:
                small[name] = found[:5]
            # The first column stays in view when the table scrolls sideways.
            position = page.evaluate(
                "getComputedStyle(document.querySelector('.table-wrap tbody tr > *')).position")
            assert position == "sticky", name
            wrap = page.locator(".table-wrap").first
            before = wrap.locator("tbody tr > :first-child").first.bounding_box()
            wrap.evaluate("(e) => { e.scrollLeft = 200; }")
            after = wrap.locator("tbody tr > :first-child").first.bounding_box()
            assert before and after and abs(before["x"] - after["x"]) < 1, name
        assert not small, f"tap targets under 44 x 44 px: {small}"
    finally:
        context.close()


def test_arena_serve_lists_several_seasons(season: SeasonRun, tmp_path: Path) -> None:
    """`arena serve reports/` with several season folders answers / with an index of them,
    each linking to its own standings."""
    import shutil

    for name in ("spring", "autumn"):
        shutil.copytree(season.report, tmp_path / name)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", str(tmp_path), "--port", str(port)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 15
        status, kind, body = fetch(f"http://127.0.0.1:{port}/", deadline)
        html = body.decode()
        assert status == 200 and kind.startswith("text/html") and "<h1>Seasons</h1>" in html
        for name in ("spring", "autumn"):
            assert f'href="{name}/index.html"' in html
            status, _, page = fetch(f"http://127.0.0.1:{port}/{name}/index.html", deadline)
            assert status == 200 and b"<h1>Standings</h1>" in page
    finally:
        server.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=5)
        if server.poll() is None:
            server.kill()
            server.wait()
        server.communicate()
