"""Attacks on the league server, each guarded against where its class lives:
token checks that would cost argon2 without bound, a browser's forms sent from other sites, match
pages that read their log at every request. In-process: the app without its background
loops."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from league_servers import TestClient, league_with_data, sample_versions

from arena.bots.policies import GreedyPolicy, RandomPolicy
from arena.league.store import MatchRecord, SeatResult
from arena.referee import eventloop
from arena.referee.limits import Limits
from arena.referee.match import InProcessSeat, MatchSpec, run_match
from arena.rules.options import RuleOptions
from arena.server import store as store_module
from arena.server.app import COOKIE, create_app
from arena.server.config import League
from arena.server.store import LeagueStore


@pytest.fixture
def league(tmp_path: Path) -> League:
    return league_with_data(tmp_path)


@pytest.fixture
def token(league: League) -> str:
    return LeagueStore(league.store_path).add_author("alice")


def _as_before(league: League, token: str) -> None:
    """The author's token kept as an argon2id hash, as older stores keep it."""
    number, secret = token.split(".")
    store = LeagueStore(league.store_path)
    with store.transaction() as db:
        db.execute("UPDATE authors SET token_hash = ? WHERE id = ?",
                   (store_module._HASHER.hash(secret), int(number)))


def test_a_token_is_checked_with_no_argon2(league: League, token: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A made-up token costs a SHA-256, not tens of milliseconds of argon2 two at a time:
    100-150 of them a second would hold every page for 4-6 s."""
    def refused(digest: str, secret: str) -> bool:
        raise AssertionError("argon2 was asked")

    monkeypatch.setattr(store_module, "_verified", refused)
    store = LeagueStore(league.store_path)
    number, secret = token.split(".")
    kept = store.db.execute("SELECT token_hash FROM authors WHERE id = ?",
                            (int(number),)).fetchone()[0]
    assert kept == "sha256$" + hashlib.sha256(secret.encode()).hexdigest()
    assert secret.encode() not in league.store_path.read_bytes()
    for index in range(200):
        assert store.authenticate(f"{number}.made-up-{index}") is None
    found = store.authenticate(token)
    assert found is not None and found.name == "alice"


def test_a_token_kept_by_argon2_is_rehashed_at_its_first_right_use(
        league: League, token: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _as_before(league, token)
    checks: list[str] = []
    real = store_module._verified

    def counted(digest: str, secret: str) -> bool:
        checks.append(secret)
        return real(digest, secret)

    monkeypatch.setattr(store_module, "_verified", counted)
    store = LeagueStore(league.store_path)
    number, secret = token.split(".")
    assert store.authenticate(f"{number}.wrong") is None
    for _ in range(3):
        assert store.authenticate(token) is not None
    assert checks == ["wrong", secret]  # argon2 once for the right token, then no more
    assert store.authenticate(f"{number}.wrong-again") is None and len(checks) == 2


@pytest.fixture
def client(league: League, token: str) -> Iterator[TestClient]:
    with TestClient(create_app(league, background=False)) as client:
        yield client


def test_a_wrong_token_costs_one_check(client: TestClient, league: League, token: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A token found wrong stays wrong: asked again (a flood repeats one), no argon2."""
    checks: list[str] = []
    real = store_module._verified

    def counted(digest: str, secret: str) -> bool:
        checks.append(secret)
        return real(digest, secret)

    _as_before(league, token)
    monkeypatch.setattr(store_module, "_verified", counted)
    wrong = token.split(".")[0] + ".not-the-secret"
    for _ in range(5):
        assert client.get("/api/me", headers={"Authorization": f"Bearer {wrong}"}
                          ).status_code == 401
        client.cookies.set(COOKIE, wrong)
        assert client.get("/").status_code == 200  # the ladder, as a visitor
        client.cookies.clear()
    assert checks == ["not-the-secret"]
    assert client.get("/api/me", headers={"Authorization": f"Bearer {token}"}
                      ).status_code == 200
    assert len(checks) == 2


def test_token_checks_run_two_at_a_time(league: League, token: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Wrong tokens sent at once would grow the server by 16 MB each (argon2's memory),
    from 98 to 970 MB, and keep it: checks run in two threads of their own."""
    running = 0
    most = 0
    lock = threading.Lock()
    real = store_module._verified

    def slow(digest: str, secret: str) -> bool:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        try:
            return real(digest, secret)
        finally:
            with lock:
                running -= 1

    _as_before(league, token)
    monkeypatch.setattr(store_module, "_verified", slow)
    number = token.split(".")[0]
    stores = [LeagueStore(league.store_path) for _ in range(8)]
    threads = [threading.Thread(target=mine.authenticate, args=(f"{number}.wrong{i}",))
               for i, mine in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == 2


@pytest.mark.parametrize(("origin", "refused"), [
    ({"Origin": "https://evil.example"}, True),
    ({"Origin": "null"}, True),
    ({"Referer": "https://evil.example/page"}, True),
    ({"Origin": "http://testserver"}, False),
    ({"Referer": "http://testserver/login"}, False),
    ({}, False),  # no origin named: a script, not a browser's form
])
def test_forms_sent_from_another_site_are_refused(client: TestClient, token: str,
                                                  origin: dict[str, str],
                                                  refused: bool) -> None:
    """A page elsewhere must not log a visitor in to the attacker's account
    (then steer them to submit their bot to it), or log them out."""
    login = client.post("/login", data={"token": token, "next": "/me"}, headers=origin,
                        follow_redirects=False)
    assert login.status_code == (403 if refused else 303)
    assert (COOKIE in login.headers.get("set-cookie", "")) is not refused
    if refused:
        assert "a form sent from another site is refused" in login.text
    logout = client.post("/logout", headers=origin, follow_redirects=False)
    assert logout.status_code == (403 if refused else 303)
    client.cookies.set(COOKIE, token)
    submit = client.post("/me/submit", files={"archive": ("bot.tar.gz", b"x")},
                         headers=origin, follow_redirects=False)
    assert (submit.status_code == 403) is refused


def _played_match(league: League) -> str:
    """A ladder match played in-process (two built-in policies) and recorded with its log,
    as the server records one."""
    store = LeagueStore(league.store_path)
    seats = sample_versions(store, (("bob", "greedy"), ("carol", "random")))
    match_id = store.start_ladder_match(seats)
    log = league.data / "logs" / f"{match_id}.jsonl.gz"
    log.parent.mkdir(parents=True)
    spec = MatchSpec(match_id, 7, 2, RuleOptions(target_score=100), Limits(5.0, 60.0), log)
    outcome = eventloop.run(run_match(spec, [InProcessSeat(GreedyPolicy(1), "greedy"),
                                           InProcessSeat(RandomPolicy(2), "random")]))
    assert store.record(MatchRecord(
        match_id, outcome.seconds, outcome.decisions, outcome.rounds, False, str(log),
        tuple(SeatResult(r.seat, outcome.places[r.seat], outcome.scores[r.seat],
                         outcome.rounds_won[r.seat], r.strikes, r.disqualified, ())
              for r in outcome.seats),
        hashlib.sha256(log.read_bytes()).hexdigest()), seats)
    return match_id


def test_a_match_pages_log_is_read_and_checked_once(league: League, client: TestClient,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Read and checked at every request (half a second each), the public match and replay
    pages' log would let forty visitors slow the site to seconds.
    The model is kept, by the log file as it is: a log changed afterwards is checked
    again, and named as altered."""
    match_id = _played_match(league)
    reads: list[Path] = []
    models = client.app.state.match_models  # type: ignore[attr-defined]
    real = models.read

    def counted(path: Path) -> Any:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(models, "read", counted)
    for address in (f"/matches/{match_id}.html", f"/replays/{match_id}.html",
                    f"/replays/{match_id}.js", f"/matches/{match_id}.html"):
        answer = client.get(address)
        assert answer.status_code == 200, address
    assert len(reads) == 1
    log = league.data / "logs" / f"{match_id}.jsonl.gz"
    log.write_bytes(log.read_bytes() + b"\0")
    assert "log altered" in client.get(f"/matches/{match_id}.html").text
    assert client.get(f"/replays/{match_id}.js").status_code == 404


def test_logging_in_returns_to_the_page_asked_for_with_its_query(client: TestClient,
                                                                   token: str) -> None:
    """The redirect to /login keeps the page's query as well as its path."""
    asked = client.get("/me?submitted=2", follow_redirects=False)
    assert asked.status_code == 303
    assert asked.headers["location"] == "/login?next=/me%3Fsubmitted%3D2"
    form = client.get(asked.headers["location"])
    assert 'value="/me?submitted=2"' in form.text
    login = client.post("/login", data={"token": token, "next": "/me?submitted=2"},
                        follow_redirects=False)
    assert login.headers["location"] == "/me?submitted=2"


def test_the_authors_page_shows_no_text_taken_from_its_address(
        client: TestClient, league: League, token: str) -> None:
    """``/me?message=...`` showing any text under the league's name would make a phishing
    link. The page names only a version of the author's own."""
    client.cookies.set(COOKIE, token)
    bait = "Your token was revoked: mail it to helpdesk@evil.example"
    page = client.get("/me", params={"message": bait, "submitted": "1"})
    assert page.status_code == 200 and "helpdesk@evil.example" not in page.text
    assert "Submitted" not in page.text  # no version 1 of alice's
    store = LeagueStore(league.store_path)
    number = int(token.split(".")[0])
    version = store.add_version(number, "mine", "1.0", "h", "s", "/bots/mine", 5)
    page = client.get("/me", params={"submitted": str(version.id)})
    assert f"Submitted mine version {version.number}: queued for validation" in page.text
    other = store.add_version(int(store.add_author("bob").split(".")[0]), "theirs", "1.0",
                              "h2", "s", "/bots/theirs", 5)
    assert "theirs" not in client.get("/me", params={"submitted": str(other.id)}).text


@pytest.mark.parametrize("address", [
    "/matches/{bait}.html", "/replays/{bait}.html", "/replays/{bait}.js",
    "/logs/{bait}.jsonl.gz", "/bots/{bait}.html", "/matches?page={bait}",
    "/api/matches?bot={bait}", "/api/matches?limit={bait}"])
def test_error_pages_show_no_text_taken_from_the_address(client: TestClient, token: str,
                                                         address: str) -> None:
    """A 404 saying "no played match <the address's text>" on the league's own page would
    let a link show a made-up notice from the organiser."""
    client.cookies.set(COOKIE, token)
    answer = client.get(address.format(bait="NOTICE-alice-is-disqualified"))
    assert answer.status_code in (400, 404), answer.status_code
    assert "NOTICE" not in answer.text and "disqualified" not in answer.text


def test_upload_bodies_are_refused_before_they_are_read(league: League, token: str) -> None:
    """60 stalled bodies of 5 MB hold 335 MiB, and a body read whole before the hourly limit
    refuses it costs its size: an author sends two at once, and one past the limit is
    refused before its body is read."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"}

    async def scenario() -> tuple[int, str, int, str]:
        app = create_app(league, background=False)
        gate = asyncio.Event()

        async def stalled() -> Any:
            yield b"x" * 1000
            await gate.wait()

        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://testserver") as client:
            held = [asyncio.create_task(client.post("/api/submissions", content=stalled(),
                                                    headers=headers)) for _ in range(2)]
            await asyncio.sleep(0.3)
            third = await client.post("/api/submissions", content=b"abc", headers=headers)
            gate.set()
            await asyncio.gather(*held)
            store = LeagueStore(league.store_path)
            number = int(token.split(".")[0])
            for _ in range(league.uploads.per_hour):
                store.reserve_upload(number, time.time() - 3600, 10 ** 6)
            read = False

            async def watched() -> Any:
                nonlocal read
                read = True
                yield b"abc"

            past = await client.post("/api/submissions", content=watched(), headers=headers)
        return (third.status_code, third.json()["error"], past.status_code,
                past.json()["error"] + ("; its body was read" if read else ""))

    third, said, past, past_said = asyncio.run(scenario())
    assert third == 429 and "being received" in said
    assert past == 429 and "per_hour" in past_said and "read" not in past_said


def test_a_rotated_token_stops_working_at_once(client: TestClient, league: League,
                                               token: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A token can be revoked, and a running server stops accepting it."""
    from arena.cli import main

    bearer = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/me", headers=bearer).status_code == 200
    assert main(["server", "rotate-token", "alice", "--league", str(league.path)]) == 0
    new = capsys.readouterr().out.strip().splitlines()[-1]
    assert new != token and new.split(".")[0] == token.split(".")[0]
    assert client.get("/api/me", headers=bearer).status_code == 401
    assert client.get("/api/me", headers={"Authorization": f"Bearer {new}"}).status_code == 200
    assert main(["server", "rotate-token", "nobody", "--league", str(league.path)]) == 2


@pytest.mark.parametrize(("origin", "refused"), [
    ("https://uno.example.org", False),
    ("https://evil.example", True),
    ("http://internal:8080", True),
])
def test_behind_a_proxy_that_rewrites_host_forms_are_checked_against_the_public_url(
        league: League, token: str, origin: str, refused: bool) -> None:
    """nginx's default proxy_set_header Host $proxy_host rewrites Host: checked against it,
    every login from the league's own pages would be refused."""
    import dataclasses

    public = dataclasses.replace(league, public_url="https://uno.example.org")
    with TestClient(create_app(public, background=False), base_url="http://internal:8080"
                    ) as client:
        login = client.post("/login", data={"token": token, "next": "/me"},
                            headers={"Origin": origin, "Host": "127.0.0.1:8080"},
                            follow_redirects=False)
    assert login.status_code == (403 if refused else 303)


@pytest.mark.parametrize(("value", "accepted"), [
    ('"https://uno.example.org"', True), ('"http://[::1]:8080"', True),
    ('"ftp://uno.example.org"', False), ('"https://uno.example.org/league"', False),
    ("5", False),
])
def test_the_public_url_is_an_origin(tmp_path: Path, value: str, accepted: bool) -> None:
    from league_servers import write_league

    from arena.server.config import LeagueError, load_league

    path = write_league(tmp_path)
    path.write_text(path.read_text().replace('data = "data"\n',
                                             f'data = "data"\npublic_url = {value}\n'))
    if accepted:
        assert load_league(path).public_url == value.strip('"')
    else:
        with pytest.raises(LeagueError, match="public_url"):
            load_league(path)
