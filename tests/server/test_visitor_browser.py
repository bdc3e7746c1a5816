"""A visitor in a real browser (headless Chromium under Playwright), never logged in: from
the ladder to a bot's page, one of its matches, the match's replay and the head-to-head
table; back on the ladder, a match finishes and the ladder says so without a reload (its
event stream, ``/live/ladder``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from league_servers import SAMPLES, league_server

from arena.server.uploads import pack

TIMEOUT_MS = 10_000
PLAYED = "parseInt(document.querySelector('main p.lead').textContent)"
"""The ladder's count of matches played, as its page shows it."""


def test_a_visitor_walks_the_league_and_sees_the_ladder_change(
        browser: Any, tmp_path: Path) -> None:
    with league_server(tmp_path / "league") as server:
        for author, bot in (("alice", "greedy"), ("bob", "random")):
            server.add_author(author)
            assert server.submit(author, pack(SAMPLES / bot)).status_code == 201

        def played() -> int:
            with server.client() as client:
                rows = client.get("/api/standings").json()["ladder"]
            return min((row["matches"] for row in rows), default=0) if len(rows) == 2 else 0

        server.wait_for(played, timeout=60, what="a ladder match played")
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        try:
            page.goto(server.url + "/")
            assert not context.cookies()  # a visitor: no session
            page.locator("#ladder tr[data-bot=greedy] a:has-text('greedy')").click()
            page.wait_for_url(f"{server.url}/bots/greedy.html")
            assert "By alice" in page.locator("p.lead").inner_text()
            page.locator("#bot-matches a[href^='/matches/']").first.click()
            page.wait_for_url(re.compile(r".*/matches/L\d+\.html"))
            assert "greedy" in page.locator("table.standing").inner_text()
            page.click("a:has-text('Replay')")
            page.wait_for_url(re.compile(r".*/replays/L\d+\.html"))
            page.wait_for_function(
                "document.getElementById('event-text').textContent.length > 0")
            page.click("nav a:has-text('Head-to-head')")
            page.wait_for_url(f"{server.url}/head-to-head")
            assert page.locator("#head-to-head td.heat").count() == 2

            page.click("nav a:has-text('Ladder')")
            page.wait_for_url(f"{server.url}/")
            before = page.evaluate(PLAYED)
            page.evaluate("window.sameDocument = true")  # gone if the page were reloaded
            # A function, not an expression: the page's policy forbids eval.
            page.wait_for_function(f"(before) => {PLAYED} > before", arg=before,
                                   timeout=45_000)
            assert page.evaluate("window.sameDocument") is True
            assert int(page.evaluate("document.documentElement.dataset.liveUpdates")) >= 1
            greedy = page.locator("#ladder tr[data-bot=greedy] td.num").nth(4).inner_text()
            assert int(greedy) >= 1  # its row, fetched again, is whole
        finally:
            context.close()
