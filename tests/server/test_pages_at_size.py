"""The league server's lists read a page, not the league: /matches in pages, /api/matches
a page at a time behind a cursor (``next``), a bot's and a version's pages their newest
matches, each chosen in SQLite (``LeagueStore.matches`` with ``seated``, ``limit``,
``offset``), so a league of tens of thousands of matches answers as fast as a new one
(``python -m benchmarks.league_pages``). In-process: the app without its background loops."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from league_servers import ROOT, Server, TestClient, free_port, league_with_data, write_league

from arena.league.store import MatchRecord, SeatResult, StoreError
from arena.server.app import COOKIE, create_app
from arena.server.config import League, load_league
from arena.server.store import LeagueStore, seated


def _record(match_id: str, winner: int) -> MatchRecord:
    return MatchRecord(match_id, 1.0, 10, 1, False, f"/logs/{match_id}", tuple(
        SeatResult(seat, 1 if seat == winner else 2, 100 if seat == winner else 0,
                   int(seat == winner), 0, False, ()) for seat in range(2)), "0" * 64)


class Played:
    """Three bots (a, b, c; one version each, b two), ladder matches L000001.. between
    them: each pair in turn, all done but for the last three (failed, discarded,
    running)."""

    def __init__(self, league: League, done: int) -> None:
        self.store = LeagueStore(league.store_path)
        self.token = self.store.add_author("alice")
        author = self.store.authenticate(self.token)
        assert author is not None
        self.versions: dict[str, list[int]] = {}
        for bot in ("a", "b", "b", "c"):
            version = self.store.add_version(author.id, bot, "1", f"hash-{bot}", "sha",
                                             f"/bots/{bot}", 5)
            self.store.activate(version.id, 2)
            self.versions.setdefault(bot, []).append(version.id)
        pairs = [(self.versions["a"][0], self.versions["b"][0]),
                 (self.versions["b"][1], self.versions["c"][0]),
                 (self.versions["c"][0], self.versions["a"][0])]
        self.seats: dict[str, tuple[int, ...]] = {}
        for index in range(done + 3):
            seats = pairs[index % 3]
            match_id = self.store.start_ladder_match(seats)
            self.seats[match_id] = seats
            if index < done:
                assert self.store.record(_record(match_id, index % 2), seats)
            elif index == done:
                self.store.record_failure(match_id, "the host's trouble")
            elif index == done + 1:
                self.store.release_matches()  # discarded: a server stopped mid-match
        self.running = match_id

    def of(self, bot: str) -> list[str]:
        """The ids of the matches seating ``bot``, newest first."""
        ids = set(self.versions[bot])
        return sorted((m for m, seats in self.seats.items() if ids & set(seats)),
                      reverse=True)


@pytest.fixture
def league(tmp_path: Path) -> League:
    return league_with_data(tmp_path)


@pytest.fixture
def played(league: League) -> Played:
    return Played(league, 10)


@pytest.fixture
def client(league: League, played: Played) -> Iterator[TestClient]:
    with TestClient(create_app(league, background=False)) as client:
        client.cookies.set(COOKIE, played.token)
        client.headers["Authorization"] = f"Bearer {played.token}"
        yield client


def _listed(html: str) -> list[str]:
    return re.findall(r'<th scope="row">(?:<a [^>]*>)?(L\d{6})', html)


# -- the store ----------------------------------------------------------------------------


def test_matches_are_paged_and_chosen_in_sqlite(played: Played) -> None:
    store = played.store
    every = [m.match_id for m in store.matches()]
    assert every == sorted(played.seats)
    assert [m.match_id for m in store.matches(newest_first=True, limit=4)] == every[::-1][:4]
    assert [m.match_id for m in store.matches(newest_first=True, limit=4, offset=4)] \
        == every[::-1][4:8]
    assert store.matches(limit=5, offset=len(every)) == []
    for bot in ("a", "b", "c"):
        where, ids = seated(played.versions[bot])
        assert [m.match_id for m in store.matches(f"WHERE {where}", ids, newest_first=True)] \
            == played.of(bot)
        assert store.count_matches(f"WHERE {where}", ids) == len(played.of(bot))
    where, ids = seated([])
    assert store.matches(f"WHERE {where}", ids) == []
    assert store.count_matches() == 13
    assert store.status_counts("ladder") == {"done": 10, "failed": 1, "discarded": 1,
                                             "running": 1}
    assert store.status_counts("final") == {}
    chosen = [r.match_id for r in store.results(match_ids=["L000002", "L000005", "L000012"])]
    assert chosen == ["L000002", "L000002", "L000005", "L000005"]  # L000012 has none
    assert store.results(match_ids=[]) == []


def test_seats_that_are_not_json_are_named_when_sqlite_reads_them(played: Played) -> None:
    """json_each stops at SQLite's bare "malformed JSON": the store says which row."""
    played.store.db.execute("UPDATE matches SET seats = '[1,' WHERE match_id = 'L000004'")
    where, ids = seated(played.versions["a"])
    for read in (lambda: played.store.matches(f"WHERE {where}", ids, limit=3),
                 lambda: played.store.count_matches(f"WHERE {where}", ids)):
        with pytest.raises(StoreError, match=r"damaged: .*match 'L000004': its seats are "
                                             r"not JSON"):
            read()


# -- /matches -----------------------------------------------------------------------------


def test_the_match_list_is_paged_newest_first(client: TestClient, played: Played,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client.app.state.site.pages, "matches_per_page", 4)  # type: ignore[attr-defined]
    shown = sorted((m for m in played.seats if m != "L000012"), reverse=True)  # discarded
    pages = [client.get("/matches"), client.get("/matches?page=2"),
             client.get("/matches?page=3")]
    assert [p.status_code for p in pages] == [200, 200, 200]
    assert [_listed(p.text) for p in pages] == [shown[:4], shown[4:8], shown[8:]]
    assert "page 1 of 3" in pages[0].text and 'href="/matches?page=2" rel="next"' \
        in pages[0].text and 'rel="prev"' not in pages[0].text
    assert 'href="/matches" rel="prev"' in pages[1].text
    assert 'href="/matches?page=2" rel="prev"' in pages[2].text
    assert 'rel="next"' not in pages[2].text
    # A page's rows show their own results (places and scores), read for that page only.
    assert pages[1].text.count("100") >= 4
    missing = client.get("/matches?page=4")
    assert missing.status_code == 404 and "there are 3 page(s) of matches" in missing.text
    for bad in ("0", "-1", "x", "1.5", "\uff11", "9" * 40):  # \uff11: a fullwidth 1
        answer = client.get(f"/matches?page={bad}")
        assert answer.status_code == 400, bad
        assert "page must be a whole number 1 or more" in answer.text


def test_an_empty_league_has_one_page_of_no_matches(league: League) -> None:
    store = LeagueStore(league.store_path)
    token = store.add_author("alice")
    with TestClient(create_app(league, background=False)) as client:
        client.cookies.set(COOKIE, token)
        answer = client.get("/matches")
        assert answer.status_code == 200 and "No matches yet." in answer.text
        assert client.get("/matches?page=2").status_code == 404


# -- /api/matches -------------------------------------------------------------------------


def _follow(client: TestClient, address: str) -> list[list[str]]:
    pages = []
    while address is not None:
        answer = client.get(address)
        assert answer.status_code == 200, answer.text
        pages.append([m["match_id"] for m in answer.json()["matches"]])
        address = answer.json()["next"]
        assert len(pages) < 20
    return pages


def test_the_api_hands_every_match_once_a_page_at_a_time(client: TestClient,
                                                         played: Played) -> None:
    every = sorted(played.seats)
    pages = _follow(client, "/api/matches?limit=5")
    assert pages == [every[:5], every[5:10], every[10:]]
    assert _follow(client, "/api/matches") == [every]  # the default: 100
    first = client.get("/api/matches?limit=2").json()
    assert first["next"] == "/api/matches?limit=2&after=L000002"
    assert first["matches"][0]["results"][0]["score"] in (0, 100)
    assert client.get("/api/matches?after=L000013").json() == {"matches": [], "next": None}
    # Filters keep to the cursor: by status, by bot (any of its versions), both.
    assert _follow(client, "/api/matches?status=done&limit=4") == [every[:4], every[4:8],
                                                                   every[8:10]]
    assert _follow(client, "/api/matches?bot=b&limit=3") == [
        sorted(played.of("b"))[i:i + 3] for i in range(0, len(played.of("b")), 3)]
    running = client.get("/api/matches?status=running&bot=a").json()
    assert [m["match_id"] for m in running["matches"]] == [played.running]
    assert client.get("/api/matches?status=running&bot=c").json()["matches"] == []


def test_new_matches_do_not_shift_a_cursor(client: TestClient, played: Played) -> None:
    first = client.get("/api/matches?limit=4").json()
    played.store.start_ladder_match(played.seats["L000001"])  # L000014, while paging
    rest = _follow(client, first["next"])
    listed = [m["match_id"] for m in first["matches"]]
    for page in rest:
        listed += page
    assert listed == [*sorted(played.seats), "L000014"]


@pytest.mark.parametrize(("query", "status", "said"), [
    ("limit=0", 400, "limit must be a whole number from 1 to 1,000"),
    ("limit=1001", 400, "limit must be a whole number from 1 to 1,000"),
    ("limit=ten", 400, "limit must be a whole number from 1 to 1,000"),
    ("limit=", 400, "limit must be a whole number from 1 to 1,000"),
    ("status=won", 400, "status must be one of scheduled, running, done, failed, discarded"),
    ("bot=nobody", 404, "no bot has that name"),
    ("page=2", 400, "unknown parameter(s) page; known: limit, after, status, bot"),
])
def test_the_api_says_what_a_bad_query_should_be(client: TestClient, query: str,
                                                 status: int, said: str) -> None:
    answer = client.get(f"/api/matches?{query}")
    assert answer.status_code == status
    assert said in answer.json()["error"]


# -- a bot's and a version's pages --------------------------------------------------------


def test_a_bots_page_lists_its_newest_played_matches(client: TestClient, played: Played,
                                                     monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    monkeypatch.setattr(client.app.state.site.pages, "recent_matches", 3)  # type: ignore[attr-defined]
    for bot in ("a", "b", "c"):
        page = client.get(f"/bots/{bot}.html")
        assert page.status_code == 200
        section = page.text.split("<h2>Recent matches</h2>")[1]
        done = [m for m in played.of(bot) if m <= "L000010"]
        assert re.findall(r"matches/(L\d{6})\.html", section) == done[:3], bot


def test_a_versions_page_lists_its_newest_matches_of_any_status(
        client: TestClient, played: Played, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client.app.state.site.pages, "recent_matches", 4)  # type: ignore[attr-defined]
    version = played.versions["a"][0]
    page = client.get(f"/me/versions/{version}")
    assert page.status_code == 200
    listed = re.findall(r"<li>(?:<a [^>]*>)?(L\d{6})", page.text)
    assert listed == played.of("a")[:4]
    assert f"{played.running} (running)" in page.text


def test_a_damaged_seat_is_a_503_not_a_traceback(client: TestClient, played: Played,
                                                 league: League) -> None:
    with sqlite3.connect(league.store_path) as db:
        db.execute("UPDATE matches SET seats = 'garbage' WHERE match_id = 'L000003'")
    for address in ("/bots/a.html", "/api/matches?bot=a", "/matches"):
        answer = client.get(address)
        assert answer.status_code == 503, address
        assert str(league.data) not in answer.text


def test_the_guides_paging_example_fetches_every_match_of_a_bot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The league server guide's example (docs/server.md), run as it is against a real
    server (its address, bot and page size changed): every done match of the bot, over
    several pages."""
    path = write_league(tmp_path)
    league = load_league(path)
    league.data.mkdir(parents=True)
    played = Played(league, 10)
    played.store.close()
    guide = (ROOT / "docs" / "server.md").read_text()
    found = re.search(r"```python\n(import json, urllib.request\n.*?)```", guide,
                      re.DOTALL)
    assert found is not None, "the guide's paging example"
    server = Server(path, free_port())
    server.start()
    try:
        code = found.group(1)
        code = code.replace("127.0.0.1:8080", f"127.0.0.1:{server.port}")
        code = code.replace("bot=greedy", "bot=a").replace("limit=1000", "limit=2")
        # No token: the match list is public.
        scope: dict[str, object] = {}
        exec(code, scope)  # the guide's own example
    finally:
        server.stop()
    assert [m["match_id"] for m in scope["matches"]] == sorted(  # type: ignore[attr-defined]
        m for m in played.of("a") if m <= "L000010")
