"""A log's long unbroken line stays inside the page, in a real browser (headless Chromium,
Debian's, under Playwright): a version's build log on its author's page, and the same
failure on the organiser's state page, neither wider than the window; axe-core finds no
accessibility violation on the organiser's pages.

A missing Playwright or Chromium is a test failure, never a skip."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from league_servers import SAMPLES, Server, free_port, write_league
from test_server_browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, axe_violations

from arena.server.config import load_league
from arena.server.organiser import ORGANISER_FILE
from arena.server.store import LeagueStore

LINE = "unbroken/" + "x" * 5_000
"""A path or a minified trace: 5,009 characters without a space."""
WIDTHS = (1280, 390)
"""A desktop's window and a phone's."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Server, str, int]]:
    """A league whose one version failed with ``LINE`` in its build log (written before
    the server starts, so no validator takes it): the server, the author's token, the
    version's id."""
    league_file = write_league(tmp_path / "league")
    store = LeagueStore(load_league(league_file).store_path)
    try:
        token = store.add_author("alice")
        author = store.authenticate(token)
        assert author is not None
        version = store.add_version(author.id, "wide", "1", "wide", "sha",
                                    str(SAMPLES / "greedy"), 3)
        store.set_status(version.id, "failed", build_log=f"compiling\n{LINE}\nfailed\n")
    finally:
        store.close()
    running = Server(league_file, free_port())
    running.start()
    try:
        yield running, token, version.id
    finally:
        running.stop()


def test_a_5000_character_line_stays_inside_the_page(server: tuple[Server, str, int]
                                                     ) -> None:
    from playwright.sync_api import sync_playwright

    running, token, version_id = server
    organiser = (running.data / ORGANISER_FILE).read_text().strip()
    assert CHROMIUM.is_file(), f"{CHROMIUM} is missing: apt-get install chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                             args=CHROMIUM_ARGS)
        try:
            for width in WIDTHS:
                context = browser.new_context(viewport={"width": width, "height": 800})
                context.add_cookies([
                    {"name": "arena_token", "value": token, "url": running.url},
                    {"name": "arena_organiser", "value": organiser, "url": running.url}])
                page = context.new_page()
                page.set_default_timeout(TIMEOUT_MS)
                for address, block in ((f"/me/versions/{version_id}", "#build-log"),
                                       ("/organiser", "#failed-versions pre")):
                    page.goto(running.url + address)
                    assert LINE[-200:] in (page.text_content(block) or ""), address
                    _assert_fits(page, width, address)
                context.close()
            # axe-core is injected as a script of its own, which the server's
            # Content-Security-Policy refuses: checked in a context that bypasses it.
            checking = browser.new_context(viewport={"width": 1280, "height": 900},
                                           bypass_csp=True)
            checking.add_cookies([{"name": "arena_organiser", "value": organiser,
                                   "url": running.url}])
            page = checking.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            problems = {}
            for address in ("/organiser", "/organiser/actions", "/organiser/login"):
                page.goto(running.url + address)
                problems[address] = axe_violations(page)
            checking.close()
            assert not {address: found for address, found in problems.items() if found}
        finally:
            browser.close()


def _assert_fits(page: Any, width: int, address: str) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    inner = page.evaluate("window.innerWidth")
    assert inner == width
    assert scroll <= inner, f"{address} is {scroll} px wide in a {inner} px window"
