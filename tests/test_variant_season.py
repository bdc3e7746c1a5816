"""A season under house rules (docs/rules.md §21 stacking, §23 seven_o, §25 jump_in) runs the
sample bots of every language (Python, JavaScript, C++, bash over stdio-json) to the end
in the sandbox with no faults, its logs replay, and it renders: the season page and every
match page list the rules in force, and the replay viewer follows hands that move.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena.league.driver import run_season
from arena.league.executor import LocalExecutor
from arena.league.season import load_season
from arena.league.store import SeasonStore
from arena.referee.log import read_log
from arena.referee.replay import replay
from arena.report.matchpage import read_data_script
from arena.report.render import render_site

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "sample_bots"
CHROMIUM = Path("/usr/bin/chromium")
HOUSE = "house rules: stacking (§21), seven_o (§23), jump_in (§25); target 200"


@dataclass(frozen=True)
class Played:
    store: Path
    logs: list[Path]
    site: Path


KEY = bytes(range(32))
"""The season's key (fixed: the tests look at what particular deals did)."""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    base = tmp_path_factory.mktemp("house-season")
    path = base / "house.toml"
    path.write_text(f"""
[season]
name = "house"
table_size = 4
matches_per_group = 2
parallelism = 2
entrants = ["{BOTS}/python/strategist", "{BOTS}/javascript", "{BOTS}/cpp", "{BOTS}/bash"]

[rules]
target_score = 200
stacking = true
seven_o = true
jump_in = true

[sandbox]
backend = "bubblewrap"
build_network = true

[output]
folder = "{base / 'out'}"
report = "{base / 'site'}"
""")
    season = load_season(path)
    summary = run_season(season, LocalExecutor(2), key=KEY)
    assert summary.failed == 0, summary.failures
    assert summary.played == 2
    render_site(season.store_path, season.report)
    yield Played(season.store_path, sorted(season.logs.glob("*.jsonl.gz")), season.report)


@pytest.mark.slow
def test_the_sample_bots_play_the_house_season_without_faults(played: Played) -> None:
    store = SeasonStore(played.store)
    try:
        results = store.results()
        assert len(results) == 8
        assert all(not r.faults and not r.disqualified for r in results), [
            r.faults for r in results]
        assert {e["name"] for e in store.entrants()} == {
            "strategist", "javascript-strategist", "cpp-strategist", "bash-greedy"}
    finally:
        store.close()
    kinds: Counter[str] = Counter()
    for log in played.logs:
        records = list(read_log(log))
        rules = records[0]["rules"]
        assert (rules["stacking"], rules["seven_o"], rules["jump_in"]) == (True, True, True)
        assert not rules["until_the_last"]
        kinds.update(r["event"] for r in records if r["type"] == "event")
        assert replay(log, season_key=KEY).result is not None
    # the house rules did come into play
    assert kinds["PenaltyPending"] and kinds["JumpedIn"]
    assert kinds["HandsSwapped"] + kinds["HandsPassed"]


@pytest.mark.slow
def test_the_site_lists_the_rules_in_force(played: Played) -> None:
    index = (played.site / "index.html").read_text()
    assert "<dt>House rules</dt>" in index
    for line in ("stacking (§21): a Draw Two answers a Draw Two",
                 "seven_o (§23): a 7 swaps hands with a chosen seat",
                 "jump_in (§25): an identical card may be played out of turn"):
        assert line in index
    assert f"UNO rules (Mattel) with {HOUSE}" in index
    pages = sorted((played.site / "matches").glob("*.html"))
    assert len(pages) == 2
    for page in pages:
        html = page.read_text()
        assert f"Rules in force: {HOUSE}." in html
        assert '<ul class="variants">' in html


def replay_rounds(page: Path) -> list[dict[str, Any]]:
    """The rounds of the replay data file the page loads (replays/<match>.js)."""
    rounds: list[dict[str, Any]] = read_data_script(
        page.with_suffix(".js").read_text(encoding="utf-8"))["rounds"]
    return rounds


def expected_held(steps: list[dict[str, Any]], players: int) -> list[list[int]]:
    """Cards held by each seat after each step, from the embedded events (log values)."""
    hands: list[list[int]] = [[] for _ in range(players)]
    held = []
    for step in steps:
        kind = step["e"]
        if kind == "Dealt":
            hands[step["s"]] = list(step["cs"])
        elif kind == "Played":
            hands[step["s"]].remove(step["c"])
        elif kind == "Drew":
            hands[step["s"]] += step["cs"]
        elif kind == "HandsSwapped":
            hands[step["s"]], hands[step["o"]] = list(step["cs"]), list(step["ocs"])
        elif kind == "HandsPassed":
            hands = [list(h) for h in step["hs"]]
        held.append([len(h) for h in hands])
    return held


@pytest.mark.slow
def test_the_replay_viewer_follows_swapped_and_passed_hands(played: Played) -> None:
    """In Chromium: stepping through a round with a 7's swap or a 0's pass, the viewer's
    hand sizes follow the log at every step (and its texts narrate the new events)."""
    from playwright.sync_api import sync_playwright

    chosen: tuple[Path, dict[str, Any]] | None = None
    for page in sorted((played.site / "replays").glob("*.html")):
        for round_ in replay_rounds(page):
            if any(s["e"] in ("HandsSwapped", "HandsPassed") for s in round_["steps"]):
                chosen = (page, round_)
                break
        if chosen:
            break
    assert chosen, "no round with a swap in the season"
    path, round_ = chosen
    expected = expected_held(round_["steps"], 4)
    swaps = [i for i, s in enumerate(round_["steps"])
             if s["e"] in ("HandsSwapped", "HandsPassed")]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{path.as_uri()}#round-{round_['number']}")
            for index in range(len(expected)):
                if index:
                    page.keyboard.press("ArrowRight")
                held = page.evaluate("""() => [...document.querySelectorAll('#hands > li')]
                    .map((li) => li.querySelectorAll('.card').length)""")
                assert held == expected[index], (path.name, round_["number"], index)
                if index in swaps:
                    text = page.locator("#event-text").text_content() or ""
                    assert "swaps hands with" in text or "every hand passes" in text
            assert not errors, errors
        finally:
            browser.close()
