"""The replay viewer from a seat's view, in Chromium under Playwright: a match
with a faulty bot, its fault found from the match page, with the bot's hand, its legal
options, its answer and "default" marked; step links and hash changes; the replay's
defects (Forward stopping at a round's end, arrow keys on the round menu, two live
regions); play/pause and the slider; and the move list without JavaScript.

The match is played here (greedy against a bot that answers its 3rd request with an
illegal index) and rendered with ``arena view``'s renderer; the pages open from disk.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from test_browser import (  # noqa: F401
    TIMEOUT_MS,
    Chromium,
    axe_violations,
    browser_of,
    chromium,
    watch,
)

from arena.protocol.convert import action_from_message
from arena.referee.log import decode_asked, read_log
from arena.report.matchpage import read_data_script, render_logs
from arena.rules.actions import action_name
from arena.rules.options import RuleOptions
from tests.referee.conftest import Tracker, misbehaving, play, sample


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("faulty-replay")
    log = folder / "logs" / "m001.jsonl.gz"
    tracker = Tracker(folder / "logs" / "m001")
    # In a thread of its own: Playwright's sync API keeps an event loop in this one.
    match = threading.Thread(target=lambda: play(
        [tracker.seat(sample("greedy"), "seat0-greedy"),
         tracker.seat(misbehaving("illegal"), "seat1-illegal")], seed=3, log=log,
        options=RuleOptions(target_score=100)))
    try:
        match.start()
        match.join(timeout=120)
    finally:
        for process in tracker.processes:
            process.kill()
    site = folder / "site"
    render_logs([log], site)
    data = read_data_script((site / "replays" / "m001.js").read_text())
    assert len(data["rounds"]) >= 2, "the test needs a match of two rounds or more"
    return {"log": log, "site": site, "data": data}


@pytest.fixture
def page(chromium: Chromium) -> Iterator[Any]:  # noqa: F811
    context = browser_of(chromium).new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    try:
        yield tab
    finally:
        context.close()


def wait_for(page: Any, script: str, wanted: Any) -> Any:
    """The value of ``script`` once it is ``wanted`` (at most 2 s, for a loaded machine)."""
    deadline = time.monotonic() + 2
    while True:
        value = page.evaluate(script)
        if value == wanted or time.monotonic() > deadline:
            return value
        time.sleep(0.02)


POSITION = "document.getElementById('position').textContent"


def test_the_fault_step_shows_the_bots_view_and_default(page: Any, faulty: dict[str, Any]
                                                        ) -> None:
    from playwright.sync_api import expect

    errors = watch(page)
    site = faulty["site"]
    page.goto((site / "matches" / "m001.html").as_uri())
    page.locator("a.fault-link").click()
    page.wait_for_url(re.compile(r"/replays/m001\.html#round-\d+-step-\d+$"))
    expect(page.locator("#event-text")).to_contain_text("action index 999 out of range")
    page.locator("#seat-select").select_option("1")
    # The decision the fault was made in, as the bot saw it (from the log's wire request).
    record = [r for r in read_log(faulty["log"]) if r["type"] == "decision"
              and r["seat"] == 1][2]
    asked = decode_asked(record)
    assert asked is not None
    legal = [action_name(action_from_message(a)) for a in asked.legal_actions]
    expect(page.locator("#seat-view")).to_be_visible()
    expect(page.locator("#seat-view-title")).to_have_text("Seat 1 (raw)'s decision")
    expect(page.locator("#view-asked")).to_contain_text(f"(request {asked.request_id};")
    expect(page.locator("#view-legal > li")).to_have_count(len(legal))
    for index, name in enumerate(legal):
        expect(page.locator("#view-legal > li").nth(index)).to_contain_text(name)
    expect(page.locator("#view-answer")).to_have_text(
        f"option 999 (there are {len(legal)} options: out of range)")
    expect(page.locator("#view-source .badge")).to_have_text("default")
    expect(page.locator("#view-source")).to_contain_text(record["name"])
    expect(page.locator("#moved-by .badge")).to_have_text("default")
    expect(page.locator("#view-legal li.chosen")).to_contain_text(record["name"])
    # Only the seat's own hand is shown; the other's is hidden.
    expect(page.locator("#hands > li").nth(0)).to_contain_text("hidden from seat 1")
    assert page.locator("#hands > li").nth(0).locator(".card").count() == 0
    assert page.locator("#hands > li").nth(1).locator(".card").count() > 0
    # The fault is marked on the timeline, and the seat's stderr is there to read.
    expect(page.locator("#marks .mark-fault")).to_have_count(1)
    expect(page.locator("#stderr-title")).to_contain_text("Seat 1 (raw)")
    assert "#seat-1-round-" in page.evaluate("location.hash")
    assert not errors, errors


def test_step_links_hash_changes_and_out_of_range(page: Any, faulty: dict[str, Any]) -> None:
    data = faulty["data"]
    sizes = [len(r["steps"]) for r in data["rounds"]]
    total = sum(sizes)
    replay = (faulty["site"] / "replays" / "m001.html").as_uri()
    page.goto(replay + "#round-2-step-3")
    assert wait_for(page, POSITION, f"round 2, step 3 of {sizes[1]} "
                    f"({sizes[0] + 3} of {total} in the match)") == (
        f"round 2, step 3 of {sizes[1]} ({sizes[0] + 3} of {total} in the match)")
    assert page.locator("#replay-message").is_hidden()
    # A changed hash is followed, without a reload.
    page.evaluate("location.hash = '#round-1-step-5'")
    assert wait_for(page, POSITION, f"round 1, step 5 of {sizes[0]} (5 of {total} in the "
                    "match)").startswith("round 1, step 5 of")
    # Out of range: said plainly, never a silent round 1.
    for hash_, said in (("#round-99", "This match has no round 99"),
                        ("#round-1-step-9999", "Round 1 has no step 9999"),
                        ("#seat-7", "This match has no seat 7")):
        page.evaluate(f"location.hash = '{hash_}'")
        message = wait_for(page, "document.getElementById('replay-message').hidden", False)
        assert message is False, hash_
        assert said in page.locator("#replay-message").inner_text(), hash_
    page.evaluate("location.hash = '#round-1'")
    assert wait_for(page, "document.getElementById('replay-message').hidden", True) is True


def test_replay_defects_are_fixed(page: Any, faulty: dict[str, Any]) -> None:
    data = faulty["data"]
    sizes = [len(r["steps"]) for r in data["rounds"]]
    total = sum(sizes)
    page.goto((faulty["site"] / "replays" / "m001.html").as_uri() +
              f"#round-1-step-{sizes[0]}")
    # Forward at the end of a round goes on into the next one.
    page.locator("#next").click()
    assert wait_for(page, POSITION, f"round 2, step 1 of {sizes[1]} ({sizes[0] + 1} of "
                    f"{total} in the match)").startswith("round 2, step 1 of")
    # Arrow keys on the round menu step through the match; they do not switch rounds.
    page.locator("#round-select").focus()
    page.keyboard.press("ArrowRight")
    assert wait_for(page, POSITION, "").startswith("round 2, step 2 of")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(POSITION).startswith(f"round 1, step {sizes[0]} of")
    assert page.locator("#round-select").input_value() == "1"
    # One live region announces a step.
    assert page.locator("#replay [aria-live]").count() == 1
    # The slider spans the match; play runs the steps on, pause stops them.
    page.locator("#timeline").fill("10")
    assert wait_for(page, POSITION, "").endswith(f"(11 of {total} in the match)")
    page.locator("#speed").select_option("4")
    page.locator("#play").click()
    assert page.locator("#play").get_attribute("aria-pressed") == "true"
    moved = wait_for(page, f"{POSITION}.includes('(11 of')", False)
    assert moved is False, "play did not move on"
    page.locator("#play").click()
    assert page.locator("#play").get_attribute("aria-pressed") == "false"
    stopped = page.evaluate(POSITION)
    time.sleep(0.5)
    assert page.evaluate(POSITION) == stopped


def test_without_javascript_a_plain_move_list(chromium: Chromium,  # noqa: F811
                                              faulty: dict[str, Any]) -> None:
    context = browser_of(chromium).new_context(java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto((faulty["site"] / "replays" / "m001.html").as_uri())
        steps = sum(len(r["steps"]) for r in faulty["data"]["rounds"])
        moves = page.locator(".move-list li")
        assert moves.count() == steps
        assert moves.first.is_visible()
        assert page.locator(".move-list .badge", has_text="default").count() == 1
        assert page.locator("#replay").is_hidden()
    finally:
        context.close()


def test_axe_finds_no_violations_in_the_seats_view(page: Any, faulty: dict[str, Any]) -> None:
    """The match page with its fault links and time chart, and the replay at the fault with
    the seat's view, the marks and the stderr open: no WCAG 2.2 AA violation."""
    site = faulty["site"]
    page.goto((site / "matches" / "m001.html").as_uri())
    assert axe_violations(page) == []
    anchor = faulty["data"]["marks"][0]["a"]
    page.goto((site / "replays" / "m001.html").as_uri() + f"#seat-1-{anchor}")
    page.locator("#stderr-box summary").click()
    assert page.locator("#seat-view").is_visible()
    assert axe_violations(page) == []


def test_the_seats_view_fits_a_phone(chromium: Chromium,  # noqa: F811
                                     faulty: dict[str, Any]) -> None:
    context = browser_of(chromium).new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        site = faulty["site"]
        anchor = faulty["data"]["marks"][0]["a"]
        for url in ((site / "matches" / "m001.html").as_uri(),
                    (site / "replays" / "m001.html").as_uri() + f"#seat-1-{anchor}"):
            page.goto(url)
            assert page.evaluate("document.documentElement.scrollWidth") <= 375, url
    finally:
        context.close()


def test_names_beyond_ascii_reach_the_replay_as_written(page: Any,
                                                        tmp_path_factory: pytest.TempPathFactory
                                                        ) -> None:
    """The replay's data file holds non-ASCII text as UTF-8 (orjson writes it so, where
    json escaped it): the replay, opened from disk, shows each name as the bot gave it."""
    from playwright.sync_api import expect

    from arena.bots.policies import GreedyPolicy, RandomPolicy
    from arena.referee.match import InProcessSeat

    folder = tmp_path_factory.mktemp("names-replay")
    names = ["greedy ünïcødé ☃", "random 名前 \u2028 <b>"]
    log = folder / "m001.jsonl.gz"
    # In a thread of its own, as above (the page's event loop is in this one).
    match = threading.Thread(target=lambda: play(
        [InProcessSeat(GreedyPolicy(1), names[0]), InProcessSeat(RandomPolicy(1), names[1])],
        seed=5, log=log, options=RuleOptions(target_score=100)))
    match.start()
    match.join(timeout=120)
    site = folder / "site"
    render_logs([log], site)
    assert names[0].encode() in (site / "replays" / "m001.js").read_bytes()
    errors = watch(page)
    page.goto((site / "replays" / "m001.html").as_uri())
    for seat, name in enumerate(names):
        expect(page.locator("#hands > li").nth(seat)).to_contain_text(f"Seat {seat} · {name}")
    assert errors == []
