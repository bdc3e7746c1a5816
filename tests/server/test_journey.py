"""Over real HTTP: a league server started with the README's
command, two authors submit the sample bots (one with ``arena submit``) and a new version of
one, every version is built, checked and goes active, the ladder plays, the version change
shows as one bot with two versions (the older one retired, its history kept), submissions
close when frozen, and the final round robin produces official standings, then reveals
its key."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from league_servers import ROOT, SAMPLES, Server, arena, copy_bot, league_server

from arena.server.uploads import pack


def ladder(server: Server) -> list[dict[str, object]]:
    with server.client() as client:
        rows: list[dict[str, object]] = client.get("/api/standings").json()["ladder"]
    return rows


def test_authors_submit_versions_ladder_plays_and_final_ranks(tmp_path: Path) -> None:
    with league_server(tmp_path / "league") as server:
        server.add_author("alice", cli=True)
        server.add_author("bob", cli=True)
        greedy = copy_bot(SAMPLES / "greedy", tmp_path / "greedy")
        random_bot = copy_bot(SAMPLES / "random", tmp_path / "random")

        # alice with the command line (token from the environment), bob over the API.
        done = _submit_cli(server, "alice", greedy)
        assert "submitted greedy version 1" in done
        assert done.rstrip().endswith("active")  # --wait followed it through validation
        response = server.submit("bob", pack(random_bot))
        assert response.status_code == 201, response.text
        assert response.json()["status"] == "queued"
        assert response.json()["number"] == 1

        server.wait_for(lambda: server.version_statuses("alice") == {("greedy", 1): "active"}
                        and server.version_statuses("bob") == {("random", 1): "active"},
                        what="both first versions active")
        server.wait_for(lambda: all(int(row["matches"]) >= 2 for row in ladder(server))
                        and len(ladder(server)) == 2, what="placement matches")

        # A new version of greedy: a changed file, the same name.
        newer = copy_bot(SAMPLES / "greedy", tmp_path / "greedy-2", change="version two")
        response = server.submit("alice", pack(newer))
        assert response.status_code == 201, response.text
        assert response.json()["number"] == 2
        server.wait_for(lambda: server.version_statuses("alice") == {
            ("greedy", 1): "retired", ("greedy", 2): "active"}, what="v2 active, v1 retired")
        server.wait_for(lambda: any(row["bot"] == "greedy" and row["version"] == 2
                                    and int(row["matches"]) >= 1 for row in ladder(server)),
                        what="v2 on the ladder")

        # One bot with two versions: one row on the ladder, both versions on its page.
        rows = ladder(server)
        assert sorted(str(row["bot"]) for row in rows) == ["greedy", "random"]
        greedy_row = next(row for row in rows if row["bot"] == "greedy")
        assert greedy_row["versions"] == 2
        with server.client("bob") as client:
            bot = client.get("/api/bots/greedy").json()
            page = client.get("/bots/greedy.html")
        assert [(v["number"], v["status"]) for v in bot["versions"]] == [
            (1, "retired"), (2, "active")]
        assert bot["versions"][0]["matches"] >= 2  # the retired version keeps its history
        assert "build_log" not in bot["versions"][0]  # bob sees none of alice's logs
        assert page.status_code == 200 and "v1" in page.text and "v2" in page.text

        # A visitor with no token: the bot's page, its matches against whom, the
        # head-to-head, the match list; the same in the API, with no author's logs.
        with server.client() as visitor:
            page = visitor.get("/bots/greedy.html", follow_redirects=False)
            table = visitor.get("/head-to-head")
            listed = visitor.get("/matches", follow_redirects=False)
            public = visitor.get("/api/bots/greedy").json()
            everyone = visitor.get("/api/head-to-head").json()["head_to_head"]
            wrong = visitor.get("/api/me", headers={"Authorization": "Bearer 1.wrong"})
        assert page.status_code == 200 and listed.status_code == 200
        assert 'href="/bots/random.html"' in page.text and "Rating change" in page.text
        [line, *_] = public["recent_matches"]
        assert line["opponents"][0]["bot"] == "random"
        assert line["result"] in ("won", "lost", "tied") and line["rating_change"] is not None
        assert public["record"]["matches"] >= 3 and public["head_to_head"][0]["opponent"] \
            == "random"
        assert all("build_log" not in v for v in public["versions"])
        pair = {(h["bot"], h["opponent"]): h for h in everyone}
        assert pair[("greedy", "random")]["meetings"] == pair[("random", "greedy")]["meetings"]
        assert pair[("greedy", "random")]["wins"] + pair[("random", "greedy")]["wins"] == \
            pair[("greedy", "random")]["meetings"]
        assert table.status_code == 200 and "greedy" in table.text and "random" in table.text
        assert wrong.status_code == 401 and "not valid" in wrong.json()["error"]

        # Frozen: no new submissions; final: a round robin, official standings, the key.
        arena("server", "advance", "frozen", "--league", str(server.league))
        refused = server.submit("bob", pack(random_bot))
        assert refused.status_code == 409 and "frozen" in refused.json()["error"]
        arena("server", "advance", "final", "--league", str(server.league))
        with server.client() as client:
            final = server.wait_for(
                lambda: (lambda f: f if f["complete"] else None)(
                    client.get("/api/final").json()), what="the final")
            page = client.get("/final")
        assert final["matches"] == {"done": 2}  # a duplicate deal: both seat orders
        assert [(row["bot"], row["version"]) for row in final["standings"]] in (
            [("greedy", 2), ("random", 1)], [("random", 1), ("greedy", 2)])
        assert all(len(row["rank_interval"]) == 2 for row in final["standings"])
        assert hashlib.sha256(bytes.fromhex(final["key"])).hexdigest() == \
            final["key_commitment"]
        assert final["key"] in page.text
        with server.client() as client:
            standings = client.get("/api/standings").json()
        assert hashlib.sha256(bytes.fromhex(standings["key"])).hexdigest() == \
            standings["key_commitment"]  # the ladder's key is published with the final's

        # The organiser disqualifies a bot: the reason is public, its results stay.
        played = {row["bot"]: row["matches"] for row in ladder(server)}
        arena("server", "disqualify", "random", "--reason", "shared code",
              "--league", str(server.league))
        row = next(row for row in ladder(server) if row["bot"] == "random")
        assert (row["state"], row["reason"], row["rank"]) == ("disqualified", "shared code",
                                                              None)
        assert row["matches"] == played["random"]
        with server.client() as client:
            assert "disqualified: shared code" in client.get("/").text

        # Each author reads their own bot's stderr of a match, never the other's.
        with server.client("alice") as alice, server.client("bob") as bob:
            seats = alice.get("/api/matches/L000001").json()["seats"]
            mine = next(i for i, seat in enumerate(seats) if seat["bot"] == "greedy")
            assert alice.get(f"/me/matches/L000001/stderr/{mine}").status_code == 200
            assert bob.get(f"/me/matches/L000001/stderr/{mine}").status_code == 403
            assert bob.get(f"/me/matches/L000001/stderr/{1 - mine}").status_code == 200

        # A match page is rendered per request from its log, checked against the SHA-256
        # recorded with the result: an edited log is named as such, and not served.
        with server.client() as client:
            shown = client.get("/matches/L000001.html")
            assert shown.status_code == 200 and "Final standing" in shown.text
            # The replay's data (each seat's view) loads from its own script; no bot's
            # stderr is public (its author reads it under /me).
            data = client.get("/replays/L000001.js")
            assert data.status_code == 200 and data.text.startswith("window.arenaReplay")
            assert '"stderr":[null,null]' in data.text, "a bot's stderr made public"
            log = server.data / "logs" / "L000001.jsonl.gz"
            log.write_bytes(log.read_bytes() + b"\0")
            altered = client.get("/matches/L000001.html")
            assert "log altered" in altered.text
            assert client.get("/logs/L000001.jsonl.gz").status_code == 404


def _submit_cli(server: Server, author: str, folder: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "submit", str(folder), "--server", server.url,
         "--wait"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={**os.environ, "ARENA_TOKEN": server.tokens[author]})
    assert done.returncode == 0, done.stderr
    return done.stdout
