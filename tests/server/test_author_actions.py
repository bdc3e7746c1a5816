"""An author's own actions, over real HTTP against a running server: deleting a failed
version (its files too) frees a place of the bot limit and a played version is never
deleted; a challenge match is played, logged, shown to both authors and changes no
rating, within the hourly limit; retiring a bot takes it off the ladder and frees its
place, its results and the others' ratings kept; no author acts for another. And a store
written before these states existed takes them once opened."""

from __future__ import annotations

import gzip
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from league_servers import ROOT, SAMPLES, Server, copy_bot, file_entry, league_server, tar_gz

from arena.server.store import LeagueStore
from arena.server.uploads import pack

DUMP = Path(__file__).parent / "stores_before" / "league.sql.gz"
FINAL = ("active", "failed", "retired")


def _failing(name: str) -> bytes:
    """A bot whose build fails at once (validated in seconds, never on the ladder)."""
    toml = (f'name = "{name}"\nversion = "1"\nlanguage = "python"\n'
            'run = ["python3", "bot.py"]\nbuild = ["sh", "-c", "exit 3"]\n')
    return tar_gz([file_entry("bot.toml", toml.encode()), file_entry("bot.py", b"pass\n")])


def _cli(server: Server, author: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args, "--server", server.url],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "ARENA_TOKEN": server.tokens[author]})


def _get(server: Server, address: str, author: str | None = None) -> Any:
    with server.client(author) as client:
        answer = client.get(address)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _status(server: Server, author: str, version_id: int) -> str:
    return str(_get(server, f"/api/versions/{version_id}", author)["status"])


def _ladder_matches(server: Server, bot: str) -> list[dict[str, Any]]:
    found = _get(server, f"/api/matches?bot={bot}&status=done&limit=1000")["matches"]
    return [m for m in found if m["kind"] == "ladder"]


def test_authors_delete_failed_versions_challenge_and_retire(tmp_path: Path) -> None:
    with league_server(tmp_path / "league", ladder="max_bots_per_author = 2",
                       validation="validators = 1",
                       extra="\n[challenges]\nper_hour = 2\n") as server:
        for name in ("alice", "bob"):
            server.add_author(name)
        greedy = server.submit("alice", pack(copy_bot(SAMPLES / "greedy", tmp_path / "g")))
        random = server.submit("bob", pack(copy_bot(SAMPLES / "random", tmp_path / "r")))
        broken = server.submit("alice", _failing("broken"))  # the newest id
        assert {greedy.status_code, broken.status_code, random.status_code} == {201}
        ids = {"greedy": greedy.json()["id"], "broken": broken.json()["id"],
               "random": random.json()["id"]}
        server.wait_for(lambda: all(_status(server, author, ids[bot]) in FINAL for author, bot
                                    in (("alice", "greedy"), ("alice", "broken"),
                                        ("bob", "random"))), what="the three validated")
        assert _status(server, "alice", ids["broken"]) == "failed"

        # At the limit (two bots, one of them failed): a third bot is refused.
        refused = server.submit("alice", _failing("extra"))
        assert refused.status_code == 409 and "max_bots_per_author" in refused.text

        # Deleting: never another author's, never a version that is not failed.
        with server.client("bob") as bob, server.client("alice") as alice:
            assert bob.delete(f"/api/versions/{ids['broken']}").status_code == 403
            active = alice.delete(f"/api/versions/{ids['greedy']}")
            assert active.status_code == 409 and "only a failed version" in active.text
        sources = server.data / "bots" / broken.json()["content_hash"]
        logs = server.data / "validation" / str(ids["broken"])
        assert sources.is_dir() and logs.is_dir()
        done = _cli(server, "alice", "version", "delete", str(ids["broken"]))
        assert done.returncode == 0, done.stderr
        assert "deleted broken version 1; broken has no version left" in done.stdout
        assert not sources.exists() and not logs.exists()
        with server.client("alice") as alice:
            assert alice.get(f"/api/versions/{ids['broken']}").status_code == 404
            again = alice.delete(f"/api/versions/{ids['broken']}")
            assert again.status_code == 404
        assert _get(server, "/api/bots/broken")["state"] == "retired"
        extra = server.submit("alice", _failing("extra"))  # the place it held is free
        assert extra.status_code == 201, extra.text
        assert extra.json()["id"] > ids["broken"]  # a deleted version's id is not given again

        server.wait_for(lambda: len(_ladder_matches(server, "greedy")) >= 2,
                        what="ladder matches")

        # Challenges: another author's bot is not yours to challenge with; two an hour.
        with server.client("bob") as bob:
            theirs = bob.post("/api/challenges", json={"bot": "greedy", "opponent": "random"})
            assert theirs.status_code == 403
        done = _cli(server, "alice", "challenge", "greedy", "random", "--wait")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("challenge C000001 ")
        assert "done: " in done.stdout and "/matches/C000001.html" in done.stdout
        with server.client("alice") as alice:
            second = alice.post("/api/challenges", json={"bot": "greedy", "opponent": "random"})
            third = alice.post("/api/challenges", json={"bot": "greedy", "opponent": "random"})
        assert second.status_code == 201 and second.json()["kind"] == "challenge"
        assert third.status_code == 429 and int(third.headers["Retry-After"]) > 0
        assert third.json()["next_allowed_at"] > second.json()["asked_at"]

        # Bob, in a browser: his challenge by the form; one sent from another site refused.
        with server.client() as browser:
            browser.post("/login", data={"token": server.tokens["bob"]},
                         headers={"Origin": server.url})
            forged = browser.post("/me/challenges", data={"bot": "random", "opponent": "greedy"},
                                  headers={"Origin": "http://elsewhere.example"})
            assert forged.status_code == 403
            asked = browser.post("/me/challenges", data={"bot": "random", "opponent": "greedy"},
                                 headers={"Origin": server.url})
            assert asked.status_code == 200 and "Challenge C000003 of random" in asked.text
        server.wait_for(lambda: all(_get(server, f"/api/matches/C00000{n}")["status"] == "done"
                                    for n in (2, 3)), what="the challenges played")

        # Played and logged like any match, shown to both authors, rating nothing.
        match = _get(server, "/api/matches/C000001")
        assert match["kind"] == "challenge" and len(match["results"]) == 2
        with server.client() as visitor:
            for address in ("/matches/C000001.html", "/replays/C000001.html",
                            "/logs/C000001.jsonl.gz"):
                assert visitor.get(address).status_code == 200, address
            listed = visitor.get("/matches").text
        assert "C000001" in listed and ">challenge<" in listed
        for author in ("alice", "bob"):
            mine = _get(server, "/api/challenges", author)["challenges"]
            assert {c["match_id"] for c in mine} == {"C000001", "C000002", "C000003"}
            with server.client(author) as client:
                page = client.get("/me").text
            assert 'data-match="C000001"' in page and 'data-match="C000003"' in page
        assert _get(server, "/api/challenges", "bob")["left"] == 1
        for bot in ("greedy", "random"):
            shown = _get(server, f"/api/bots/{bot}")
            lines = {line["match_id"]: line for line in shown["recent_matches"]}
            assert lines["C000001"]["kind"] == "challenge"
            assert lines["C000001"]["rating_change"] is None
            assert all(h["match_id"].startswith("L") for v in shown["versions"]
                       for h in v["history"])
        # The record and the head-to-head count the ladder's matches (asked again while
        # the ladder plays on, until no match ends between the two reads).
        server.wait_for(lambda: _get(server, "/api/bots/random")["record"]["matches"]
                        == len(_ladder_matches(server, "random")), what="the record")
        server.wait_for(lambda: {(h["bot"], h["opponent"]): h["meetings"] for h in _get(
            server, "/api/head-to-head")["head_to_head"]}[("greedy", "random")]
            == len(_ladder_matches(server, "greedy")), what="the head-to-head")
        assert "challenge match_id=C000001" in server.log.read_text()

        # Retiring: never another author's bot; then off the ladder, its place free.
        with server.client("bob") as bob:
            assert bob.post("/api/bots/greedy/retire").status_code == 403
        rated = {bot: _get(server, f"/api/bots/{bot}")["versions"][0]["history"]
                 for bot in ("greedy", "random")}
        done = _cli(server, "alice", "bot", "retire", "greedy")
        assert done.returncode == 0, done.stderr
        assert "retired greedy (version 1 retired with it)" in done.stdout
        server.wait_for(lambda: not _get(server, "/api/matches?status=running")["matches"],
                        what="the last match over")
        before = {bot: _get(server, f"/api/bots/{bot}") for bot in ("greedy", "random")}
        with server.client("alice") as alice:
            twice = alice.post("/api/bots/greedy/retire")
            assert twice.status_code == 409 and "retired already" in twice.text
            assert alice.post("/api/bots/nobody/retire").status_code == 404
        with server.client("bob") as bob:
            gone = bob.post("/api/challenges", json={"bot": "random", "opponent": "greedy"})
            assert gone.status_code == 409 and "retired" in gone.text
        third_bot = server.submit("alice", _failing("third"))
        assert third_bot.status_code == 201, third_bot.text
        server.wait_for(lambda: _status(server, "alice", third_bot.json()["id"]) in FINAL,
                        what="the third bot validated")
        assert [row["bot"] for row in _get(server, "/api/standings")["ladder"]] == ["random"]
        after = {bot: _get(server, f"/api/bots/{bot}") for bot in ("greedy", "random")}
        assert after["greedy"]["state"] == "retired"
        assert after["greedy"]["versions"][0]["status"] == "retired"
        for bot in ("greedy", "random"):  # results and ratings kept, none added
            assert after[bot]["versions"] == before[bot]["versions"]
            assert after[bot]["record"] == before[bot]["record"]
            # Every rating it had before is as it was (the retired bot's matches included).
            assert after[bot]["versions"][0]["history"][:len(rated[bot])] == rated[bot]
        with server.client() as visitor:
            page = visitor.get("/bots/greedy.html").text
        assert "retired</span> by its author" in page


def test_a_store_written_before_takes_retired_bots_and_challenges(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    db = sqlite3.connect(path)
    db.executescript(gzip.decompress(DUMP.read_bytes()).decode())
    db.close()
    store = LeagueStore(path)
    try:
        results = store.results()
        assert store.retire_bot(3) == [3]
        match_id = store.ask_challenge(1, 1, 2, per_hour=1)
        assert match_id == "C000001" and store.match(match_id) is not None
        assert store.results() == results  # every row kept through the upgrade
        retired = store.bot("greedy2")
        assert retired is not None and retired.state == "retired"
        indexes = {row[0] for row in store.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"matches_by_state", "matches_by_kind"} <= indexes
    finally:
        store.close()
    LeagueStore(path).close()  # opened again: nothing more to upgrade
