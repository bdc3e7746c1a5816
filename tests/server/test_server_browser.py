"""The author's journey in a real browser (headless Chromium, Debian's, under Playwright):
log in with the token, upload the bot through the web form, watch its status reach
active, find it on the ladder, open one of its matches and its replay, read its check
report; axe-core finds no accessibility violation on the server's pages.

A missing Playwright, Chromium or axe-core is a test failure, never a skip."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

# CHROMIUM and CHROMIUM_ARGS: the other browser tests take them from here too.
from league_servers import (  # noqa: F401
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    SAMPLES,
    Server,
    copy_bot,
    league_server,
)

from arena.server.uploads import pack

AXE = ROOT / ".ci" / "tools" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
RUN_AXE = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
  return result.violations.map((v) => v.id + ' (' + v.impact + '): ' +
    v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', '));
}"""
TIMEOUT_MS = 10_000


def reload_until(page: Any, test: Any, timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)
        page.reload()


def axe_violations(page: Any) -> list[str]:
    assert AXE.is_file(), f"axe-core is missing ({AXE}); `bash .ci/setup` installs it"
    page.add_script_tag(path=str(AXE))
    found: list[str] = page.evaluate(RUN_AXE, AXE_TAGS)
    return found


def test_author_uploads_watches_finds_the_ladder_and_opens_a_match(
        browser: Any, tmp_path: Path) -> None:
    with league_server(tmp_path / "league") as server:
        _journey(browser, server, tmp_path)


def _journey(browser: Any, server: Server, tmp_path: Path) -> None:
    server.add_author("bob")
    token = server.add_author("alice")
    assert server.submit("bob", pack(SAMPLES / "random")).status_code == 201
    archive = tmp_path / "greedy.tar.gz"
    archive.write_bytes(pack(copy_bot(SAMPLES / "greedy", tmp_path / "greedy")))

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    pages: dict[str, str] = {}
    try:
        page.goto(f"{server.url}/me")
        assert "/login" in page.url  # the author's page needs the token
        pages["login"] = page.url
        page.fill("#token", "1.wrong")
        page.click("button[type=submit]:has-text('Log in')")
        assert page.get_by_role("alert").inner_text() == "That token is not valid."
        page.fill("#token", token)
        page.click("button[type=submit]:has-text('Log in')")
        page.wait_for_url(f"{server.url}/me")

        page.set_input_files("#archive", str(archive))
        page.click("button[type=submit]:has-text('Submit')")
        page.wait_for_url(re.compile(r".*/me\?submitted=[0-9]+$"))
        assert "Submitted greedy version 1" in page.locator("#message").inner_text()
        status = page.locator("#versions tr[data-version] td.status")
        seen = [status.inner_text()]
        reload_until(page, lambda: seen.append(status.inner_text()) or seen[-1] in (
            "active", "failed"), what="the version's validation")
        assert seen[-1] == "active", page.content()
        # While validated, the status says where the version stands.
        assert seen[0].split()[0] in ("queued", "building", "checking"), seen
        pages["me"] = page.url

        page.click("#versions a:has-text('v1')")
        assert "all checks passed" in page.locator("#check-report").inner_text()
        pages["version"] = page.url

        page.click("nav a:has-text('Ladder')")
        row = page.locator("#ladder tr[data-bot=greedy]")
        reload_until(page, lambda: row.count() == 1 and int(
            row.locator("td.num").nth(4).inner_text()) >= 1, what="greedy on the ladder")
        assert "alice" in row.inner_text()
        pages["ladder"] = page.url

        row.locator("a:has-text('greedy')").click()
        page.wait_for_url(f"{server.url}/bots/greedy.html")
        assert page.locator("svg.chart").count() >= 1  # the rating history
        pages["bot"] = page.url
        page.locator("main a[href^='/matches/']").first.click()
        page.wait_for_url(re.compile(r".*/matches/L\d+\.html"))
        assert page.locator("h1").inner_text().startswith("Match L")
        assert "greedy" in page.locator("table.standing").inner_text()
        pages["match"] = page.url
        page.click("a:has-text('Replay')")
        page.wait_for_url(re.compile(r".*/replays/L\d+\.html"))
        page.wait_for_function("document.getElementById('event-text').textContent.length > 0")
        page.keyboard.press("ArrowRight")
        pages["replay"] = page.url
        page.click("nav a:has-text('Matches')")
        page.wait_for_url(f"{server.url}/matches")  # count() does not wait for the page
        page.locator("#matches a[href^='/matches/L']").first.wait_for()
        assert page.locator("#matches a[href^='/matches/L']").count() >= 1
        pages["matches"] = page.url
        page.click("nav a:has-text('Final')")
        page.wait_for_url(f"{server.url}/final")
        assert "has not started" in page.locator("main").inner_text()
        pages["final"] = page.url
        # The journey ran under the server's Content-Security-Policy (the replay's script
        # included). axe-core is injected as a script of its own, which that policy
        # refuses: it checks the same pages in a context that bypasses it.
        assert "script-src 'self'" in str(page.evaluate(
            "fetch(location.href).then(r => r.headers.get('content-security-policy'))"))
        cookies = context.cookies()
    finally:
        context.close()
    checking = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    checking.add_cookies(cookies)
    page = checking.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        problems = {}
        for name, url in pages.items():
            page.goto(url)
            problems[name] = axe_violations(page)
    finally:
        checking.close()
    assert not {name: found for name, found in problems.items() if found}
