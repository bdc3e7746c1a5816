"""`arena play --human`: a person plays a bot from a page in a real browser (headless
Chromium, Debian's, under Playwright), clicking whatever the page offers until the round is
over; the round is then found in the match log, the replay is linked, and the page was
only ever for the one browser that brought its token, on 127.0.0.1 alone.

A missing Playwright, Chromium or axe-core is a test failure, never a skip."""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.bots.policies import RandomPolicy
from arena.bots.runner import play_match
from arena.human.client import event_from_message
from arena.protocol.convert import event_messages
from arena.rules import events as ev
from arena.rules.options import RuleOptions
from tests.server.league_servers import chromium

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "python" / "random"
AXE = ROOT / ".ci" / "tools" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
TIMEOUT_MS = 15_000
SEED = 13
"""A deal in which the clicks below (a wild first, else the first card offered, else
draw) play a wild, call UNO and draw within the one round, against the random bot."""
ADDRESS = re.compile(r"play at (http://127\.0\.0\.1:(\d+)/\?token=(\S+))")
MOST_DECISIONS = 400
"""More clicks than a round takes (the turn limit aside): past it, the page is stuck."""


@dataclass
class Command:
    process: subprocess.Popen[str]
    address: str
    port: int
    output: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def command(tmp_path: Path) -> Iterator[Command]:
    """`arena play --human` against the random bot, one round, its logs in tmp_path."""
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "play", "--human", str(RANDOM_BOT),
         "--no-browser", "--seed", str(SEED), "--rule", "round_limit=1",
         "--logs", str(tmp_path / "logs")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "NO_COLOR": "1"})
    assert process.stdout is not None
    output: list[str] = []
    found = None
    for line in process.stdout:
        output.append(line)
        found = ADDRESS.search(line)
        if found:
            break
    assert found, "".join(output)
    command = Command(process, found.group(1), int(found.group(2)), output)
    reader = threading.Thread(target=lambda: output.extend(process.stdout or ()),
                              daemon=True)
    reader.start()
    try:
        yield command
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=20)
        reader.join(timeout=5)


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def test_a_person_plays_a_round_by_clicking_and_finds_it_in_the_log(
        command: Command, browser: Any, tmp_path: Path) -> None:
    # Nothing opens without the token, a wrong one, or under another host name; and the
    # page's socket is on 127.0.0.1 alone (not the rest of the loopback network).
    assert httpx.get(command.base + "/").status_code == 403
    assert httpx.get(command.base + "/?token=wrong").status_code == 403
    assert httpx.get(command.base + "/events").status_code == 403
    assert httpx.get(command.base + "/", headers={"host": "uno.example"}).status_code == 400
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", command.port), timeout=5).close()

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(command.address)
    assert page.url == command.base + "/", "the token is taken out of the address"
    cookie = next(c for c in context.cookies() if c["name"] == "arena_table")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    # The address's token has been used: a second browser is refused.
    other = browser.new_context()
    assert other.new_page().goto(command.address).status == 403
    other.close()

    clicked = play_by_clicking(page)
    assert {"play", "draw", "colour", "uno"} <= clicked.keys(), clicked
    assert page.locator("#verdict").inner_text()
    replay = page.get_by_role("link", name="Watch the replay of the match")
    replay.click()
    page.wait_for_load_state()
    assert page.url.endswith("/pages/replays/match-0001.html")
    assert "human" in page.content() and "random" in page.content()
    page.go_back()
    page.get_by_role("button", name="Leave the table").click()
    assert command.process.wait(timeout=30) == 0, "".join(command.output)
    output = "".join(command.output)
    assert "place 1: seat" in output and "the match log:" in output

    records = read_log(tmp_path / "logs" / "match-0001.jsonl.gz")
    assert records[0]["untimed"] == [0]
    assert [s["name"] for s in records[1]["seats"]] == ["human", "random"]
    ended = [r for r in records if r["type"] == "event" and r["event"] == "RoundEnded"]
    assert len(ended) == 1 and ended[0]["round"] == 1
    mine = [r for r in records if r["type"] == "decision" and r["seat"] == 0]
    moves = sum(times for kind, times in clicked.items() if kind != "uno")  # uno: a box
    assert len(mine) == moves, "every move clicked is one of the seat's decisions"
    assert {r["source"] for r in mine} == {"bot"}, "each decision was the person's own"
    names = [r["name"] for r in mine]
    assert "draw" in names and any(n.startswith("colour ") for n in names)
    assert any(n.startswith("play ") and n.endswith(" uno") for n in names)
    assert not [r for r in records if r["type"] == "fault"]
    assert (tmp_path / "logs" / "html" / "replays" / "match-0001.html").is_file()


def play_by_clicking(page: Any) -> dict[str, int]:
    """Click what the page offers until the match is over: a colour when asked for one,
    the UNO box when it shows, a wild if one may be played, else the first card that may,
    else accept or keep, else draw. How often each kind was clicked (``uno``: the box
    ticked before a play)."""
    clicked: dict[str, int] = {}
    checked_accessibility = False
    ready = ("() => !document.querySelector('#result').hidden || document.querySelector("
             "'#moves button:not(:disabled), #hand button:not(:disabled)')")
    for _ in range(MOST_DECISIONS):
        page.wait_for_function(ready)
        if page.locator("#result").is_visible():
            return clicked
        if not checked_accessibility:
            assert axe_violations(page) == []
            checked_accessibility = True
        cards = page.locator("#hand button:not(:disabled)")
        moves = page.locator("#moves button:not(:disabled)")
        labels = [moves.nth(i).inner_text() for i in range(moves.count())]
        if any(label.startswith("Name ") for label in labels):
            page.get_by_role("button", name="Name red").click()
            kind = "colour"
        elif cards.count():
            if page.locator("#uno-box").is_visible():
                page.get_by_label("Call UNO as I play").check()
                clicked["uno"] = clicked.get("uno", 0) + 1
            wild = page.locator("#hand button.wild:not(:disabled)")
            (wild if wild.count() else cards).first.click()
            kind = "play"
        else:
            fallback = next((label for label in labels
                             if label.startswith(("Accept", "Keep"))), "Draw a card")
            page.get_by_role("button", name=fallback).click()
            kind = "draw" if fallback == "Draw a card" else "other"
        clicked[kind] = clicked.get(kind, 0) + 1
    raise AssertionError(f"no end of the match after {MOST_DECISIONS} clicks: {clicked}")


def axe_violations(page: Any) -> list[str]:
    assert AXE.is_file(), f"axe-core is missing ({AXE}); `bash .ci/setup` installs it"
    page.evaluate(AXE.read_text())  # as the page's own script is the only one it allows
    found: list[str] = page.evaluate("""async (tags) => {
      const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
      return result.violations.map((v) => v.id + ': ' +
        v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', '));
    }""", AXE_TAGS)
    return found


def read_log(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as lines:
        return [json.loads(line) for line in lines]


def test_the_page_reads_every_event_as_the_engine_wrote_it() -> None:
    """What the seat's client hears is the engine's event again, as the seat sees it (a
    match with the variants' events too)."""
    options = RuleOptions(round_limit=2, seven_o=True, exchange_on_five=True, stacking=True,
                          jump_in=True)
    result = play_match([RandomPolicy] * 3,
                        4, options, build=True)
    kinds = set()
    for event in result.events:
        for seat in range(3):
            (message,) = event_messages([event], seat)
            assert event_from_message(message) == ev.seen_by(event, seat)
        kinds.add(type(event).__name__)
    assert {"HandsSwapped", "CardsExchanged", "ColourChosen", "RoundEnded"} <= kinds


@pytest.mark.parametrize(("extra", "message"), [
    (["--seat", "2"], "--seat 2: a table of 2 has seats 0 to 1"),
    (["--listen", "localhost:50051"], "--human serves your seat itself; leave out --listen"),
    (["--matches", "3"], "--human plays one match; leave out --matches"),
])
def test_what_human_play_refuses_is_said_before_anything_starts(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str],
        message: str) -> None:
    from arena.cli import main

    assert main(["play", "--human", str(RANDOM_BOT), "--no-build", "--no-browser",
                 "--logs", str(tmp_path / "logs"), *extra]) == 2
    assert f"arena play: {message}" in capsys.readouterr().err
