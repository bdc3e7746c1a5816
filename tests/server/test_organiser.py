"""The organiser's pages on a running server, over real HTTP: they refuse a request
without the organiser's token (or with a wrong one), show the validation queue, the
matches being played and what each worker does, take the command line's actions as forms
(each logged), and the final's page agrees with itself: its rank lies in the interval
beside it, it names each bot's author, and before the final it says when it starts (the
last test in-process, over standings made to chain)."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from league_servers import (
    ROOT,
    Server,
    TestClient,
    file_entry,
    free_port,
    league_server,
    league_with_data,
    sample_versions,
    tar_gz,
    write_league,
)

from arena.rating.official import OfficialRow, OfficialStandings
from arena.server import ladder
from arena.server.app import create_app
from arena.server.organiser import ORGANISER_FILE
from arena.server.store import LeagueStore

FINAL_STARTS = "2031-06-01T12:00:00Z"
PHASES = f'\n[phases]\nfrozen_until = {FINAL_STARTS.replace("Z", "")}Z\n'
PAGES = ("/organiser", "/organiser/actions", "/api/organiser/state")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One league for the module: greedy (alice) and random (bob) active on the ladder,
    carol's slow build holding the one build validator, and dave's build queued behind it."""
    folder = tmp_path_factory.mktemp("organiser")
    with league_server(folder / "league", validation="validators = 1",
                       extra=PHASES) as running:
        store = LeagueStore(running.data / "league.sqlite")
        try:
            sample_versions(store)
        finally:
            store.close()
        for name in ("carol", "dave", "erin"):
            running.add_author(name)
        assert running.submit("carol", _built("slow", "sleep 120")).status_code == 201
        running.wait_for(lambda: running.version_statuses("carol")[("slow", 1)] == "building",
                         what="the slow build to start")
        assert running.submit("dave", _built("later", "exit 3")).status_code == 201
        yield running


def _built(name: str, build: str | None, run: bytes = b"") -> bytes:
    toml = (f'name = "{name}"\nversion = "1"\nlanguage = "python"\n'
            f'run = ["python3", "bot.py"]\n'
            + (f'build = ["sh", "-c", "{build}"]\n' if build else ""))
    return tar_gz([file_entry("bot.toml", toml.encode()), file_entry("bot.py", run)])


def _token(server: Server) -> str:
    return (server.data / ORGANISER_FILE).read_text().strip()


def _organiser(server: Server) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=30,
                        headers={"Authorization": f"Bearer {_token(server)}"})


def test_the_pages_refuse_a_request_without_the_organisers_token(server: Server) -> None:
    author = server.tokens["carol"]
    for headers in ({}, {"Authorization": "Bearer organiser-not-the-token"},
                    {"Authorization": f"Bearer {author}"}, {"Cookie": "arena_organiser=x"}):
        with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
            for address in PAGES:
                answer = client.get(address)
                assert answer.status_code == 401, (address, headers)
                assert "validation-queue" not in answer.text and "workers" not in answer.text
                assert answer.headers["www-authenticate"] == "Bearer"
                if address.startswith("/api/"):
                    assert "organiser's token" in answer.json()["error"]
                else:
                    assert 'name="token"' in answer.text  # the organiser's login form
            refused = client.post("/organiser/actions",
                                  data={"action": "withdraw", "bot": "greedy"})
            assert refused.status_code == 401
    with server.client() as client:
        assert all(b["state"] == "entered" for b in client.get("/api/bots").json()["bots"])


def test_the_token_is_the_owners_alone_and_the_login_form_takes_it(server: Server) -> None:
    path = server.data / ORGANISER_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert _token(server).startswith("organiser-") and len(_token(server)) > 40
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        wrong = browser.post("/organiser/login", data={"token": "organiser-guess"})
        assert wrong.status_code == 401 and "arena_organiser" not in wrong.headers.get(
            "set-cookie", "")
        elsewhere = browser.post("/organiser/login", data={"token": _token(server)},
                                 headers={"Origin": "https://evil.example"})
        assert elsewhere.status_code == 403
        taken = browser.post("/organiser/login", data={"token": _token(server)},
                             follow_redirects=False)
        assert taken.status_code == 303 and taken.headers["location"] == "/organiser"
        cookie = taken.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        page = browser.get("/organiser")
        assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
        assert "The league's state" in page.text


def test_arena_server_says_where_the_token_is(tmp_path: Path) -> None:
    league = write_league(tmp_path / "league")
    process = subprocess.Popen([sys.executable, "-m", "arena.cli", "server", str(league),
                                "--port", str(free_port())], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(2)]
    finally:
        process.terminate()
        process.wait(timeout=30)
    path = tmp_path / "league" / "data" / ORGANISER_FILE
    assert f"the organiser's token was drawn into {path} (readable by you only)" in lines[1]
    assert path.read_text().strip().startswith("organiser-")


def test_the_state_page_shows_the_queue_the_matches_and_the_workers(server: Server) -> None:
    with _organiser(server) as client:
        state = server.wait_for(lambda: (lambda s: s if s["running"] else None)(
            client.get("/api/organiser/state").json()), what="a ladder match being played")
        page = server.wait_for(lambda: (lambda t: t if 'id="running-matches"' in t else None)(
            client.get("/organiser").text), what="the page showing a running match")
    queued = {q["bot"]: q for q in state["queue"]}
    assert queued["later"]["stage"] == "queued" and queued["later"]["position"] == 1
    assert queued["later"]["lane"] == "build" and queued["later"]["age_seconds"] > 0
    assert queued["slow"]["stage"] == "building" and queued["slow"]["position"] is None
    match = state["running"][0]
    assert {s["bot"] for s in match["seats"]} == {"greedy", "random"}
    assert match["kind"] == "ladder" and match["started_at"] is not None
    workers = {w["name"]: w for w in state["workers"]}
    slow_id = next(q["version_id"] for q in state["queue"] if q["bot"] == "slow")
    assert workers["arena-validation-1"]["busy"]
    assert workers["arena-validation-1"]["runs"] == f"version {slow_id} (slow v1)"
    assert not workers["arena-validation-quick"]["busy"]
    assert workers["match slot 1"]["runs"] == f"match {match['match_id']}"
    assert state["phase"] == "open" and state["uptime_seconds"] > 0
    assert state["final"]["starts"].startswith(f"{FINAL_STARTS} (in ")
    assert state["disk"]["used_bytes"] > 0 and "league.sqlite" in state["disk"]["by_folder"]
    assert re.search(r'<tr data-version="\d+"><td class="num">1</td><th scope="row">later v1',
                     page)
    assert "arena-validation-1" in page and ">busy<" in page
    running = re.search(r'<tr data-match="(L\d+)"><th scope="row">\1</th><td>ladder</td>'
                        r"<td>([^<]*)", page)
    assert running and ("greedy v1" in running[2] or "random v1" in running[2])


def test_failures_are_listed_with_their_reasons(server: Server) -> None:
    """A bot that exits before its hello, checked by the quick lane's validator (the
    build validator is busy): its version is listed failed, with its check report."""
    crash = b"import sys\nprint('no model file here', file=sys.stderr)\nsys.exit(1)\n"
    with _organiser(server) as client:
        assert server.submit("erin", _built("broken", None, crash)).status_code == 201
        state = server.wait_for(lambda: (lambda s: s if s["failed_versions"] else None)(
            client.get("/api/organiser/state").json()), timeout=60,
            what="the broken version to fail")
        page = client.get("/organiser").text
    failed = state["failed_versions"][0]
    assert failed["what"].endswith("(broken v1)") and "FAIL" in failed["reason"]
    assert re.search(r"<strong>version \d+ \(broken v1\)</strong>, submitted .*?:"
                     r'<pre class="log">[^<]*FAIL', page, re.S)


def test_an_author_added_on_the_actions_page_can_use_the_token_shown(
        server: Server) -> None:
    with _organiser(server) as organiser:
        done = organiser.post("/organiser/actions", data={"action": "add-author",
                                                          "name": "frank"})
        taken = organiser.post("/organiser/actions", data={"action": "add-author",
                                                           "name": "frank"})
    assert done.status_code == 200 and done.headers["cache-control"] == "no-store"
    token = re.search(r'<code id="new-token" class="key">([^<]+)</code>', done.text)
    assert token and "Author frank added" in done.text
    assert taken.status_code == 409 and "exists already" in taken.text
    with httpx.Client(base_url=server.url, timeout=30,
                      headers={"Authorization": f"Bearer {token[1]}"}) as frank:
        assert frank.get("/api/me").json()["author"] == "frank"
    logged = server.log.read_text()
    assert re.search(r"organiser_action action=add-author status=done .*author=frank", logged)
    assert token[1] not in logged


def test_before_the_final_its_page_says_when_then_an_action_starts_it(server: Server) -> None:
    with server.client() as client:
        before = client.get("/final").text
    assert f"It starts at <strong>{FINAL_STARTS} (in " in before
    with _organiser(server) as organiser:
        forms = organiser.get("/organiser/actions").text
        assert 'name="action" value="advance"' in forms and "<option>final</option>" in forms
        forged = organiser.post("/organiser/actions", data={"action": "advance",
                                                            "phase": "final"},
                                headers={"Origin": "https://evil.example"})
        assert forged.status_code == 403
        done = organiser.post("/organiser/actions", data={"action": "advance",
                                                          "phase": "final"},
                              headers={"Origin": server.url})
        assert done.status_code == 200 and "League test-league is now final." in done.text
        refused = organiser.post("/organiser/actions", data={"action": "advance",
                                                             "phase": "frozen"})
        assert refused.status_code == 409 and "phases only move on" in refused.text
    logged = server.log.read_text()
    assert re.search(r"organiser_action action=advance status=done .*phase=final", logged)
    assert re.search(r"organiser_action action=advance status=refused .*phase=frozen", logged)

    with server.client() as client:
        final = server.wait_for(lambda: (lambda f: f if f["complete"] else None)(
            client.get("/api/final").json()), timeout=120, what="the final")
        page = client.get("/final").text
    assert final["starts"] is None and final["standings"]
    authors = {"greedy": "alice", "random": "bob"}
    for row in final["standings"]:
        low, high = row["rank_interval"]
        assert isinstance(row["rank"], int) and low <= row["rank"] <= high
        assert row["author"] == authors[row["bot"]]
        interval = str(low) if low == high else f"{low}\N{EN DASH}{high}"
        shown = re.search(rf'<tr data-bot="{row["bot"]}"><td class="num">(\d+)</td>'
                          rf'<th scope="row">.*?</th><td>([^<]*)</td><td>v1</td>\s*<td>([^<]*)<',
                          page)
        assert shown, row
        assert (int(shown[1]), shown[2], shown[3]) == (row["rank"], row["author"], interval)
    assert '<th scope="col">Author</th>' in page and 'id="rank-note"' in page
    assert "It starts at" not in page
    assert json.dumps(final)  # the same figures as JSON


def test_the_finals_rank_lies_in_the_interval_beside_it_where_groups_chain(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three bots whose intervals chain (1-2, 1-3, 2-3) share one group of ranks 1-3; each
    row shows its own place and its own interval, which holds it (not the group's 1-3
    beside an interval of 1-2)."""
    league = league_with_data(tmp_path)
    store = LeagueStore(league.store_path)
    try:
        ids = sample_versions(store, (("alice", "greedy"), ("bob", "random"),
                                      ("carol", "strategist")))
        store.schedule_final([("final-m00001", "final/m00001", (ids[0], ids[1]), 0, 0, 1)],
                             bytes(32))
    finally:
        store.close()
    chained = OfficialStandings(tuple(
        OfficialRow(entrant, strength, place, interval, (1, 3), None, 4)
        for entrant, strength, place, interval in (
            (ids[0], 0.4, 1, (1, 2)), (ids[1], 0.0, 2, (1, 3)), (ids[2], -0.4, 3, (2, 3)))),
        (), (tuple(ids),), 200, 12)
    assert [row.rank_label for row in chained.rows] == ["1\N{EN DASH}3"] * 3
    monkeypatch.setattr(ladder, "final_standings", lambda store: chained)
    with TestClient(create_app(league, background=False)) as client:
        final = client.get("/api/final").json()
        page = client.get("/final").text
    assert [(r["bot"], r["author"], r["rank"], r["rank_interval"]) for r in final["standings"]
            ] == [("greedy", "alice", 1, [1, 2]), ("random", "bob", 2, [1, 3]),
                  ("strategist", "carol", 3, [2, 3])]
    assert re.search(r'<tr data-bot="greedy"><td class="num">1</td><th scope="row">.*?</th>'
                     r"<td>alice</td><td>v1</td>\s*<td>1\N{EN DASH}2</td>", page)
    assert "The results cannot separate greedy, random, strategist" in page
