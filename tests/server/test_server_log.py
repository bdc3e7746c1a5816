"""The server's log, over real HTTP: every submission (taken or refused), every stage of
every version, and every match started and played is one JSON line (``--log-format
json``), with what an organiser needs to follow it."""

from __future__ import annotations

import json
from pathlib import Path

from league_servers import SAMPLES, Server, copy_bot, free_port, write_league

from arena.server.uploads import pack


def test_the_log_has_a_line_per_submission_stage_and_match(tmp_path: Path) -> None:
    server = Server(write_league(tmp_path / "league"), free_port(),
                    options=("--log-format", "json"))
    server.start()
    try:
        server.add_author("alice")
        server.add_author("bob")
        assert server.submit("alice", pack(copy_bot(SAMPLES / "greedy",
                                                    tmp_path / "g"))).status_code == 201
        assert server.submit("bob", pack(copy_bot(SAMPLES / "random",
                                                  tmp_path / "r"))).status_code == 201
        assert server.submit("bob", b"not an archive").status_code == 422
        with server.client() as client:
            server.wait_for(lambda: any(m["status"] == "done" for m in client.get(
                "/api/matches").json()["matches"]), timeout=120, what="a ladder match")
    finally:
        server.stop()
    lines = [json.loads(line) for line in server.log.read_text().splitlines()
             if line.startswith("{")]
    kinds = [line["event"] for line in lines]
    assert kinds[0] == "serving"
    taken = [line for line in lines if line["event"] == "submission"]
    assert sorted((t["author"], t["bot"], t["version"]) for t in taken) == [
        ("alice", "greedy", 1), ("bob", "random", 1)]
    [refused] = [line for line in lines if line["event"] == "submission_refused"]
    assert refused["status"] == 422 and refused["author"] == "bob"
    for submitted in taken:
        stages = [line["status"] for line in lines if line["event"] == "version"
                  and line["version_id"] == submitted["version_id"]]
        assert stages[:3] == ["building", "checking", "active"], stages
    done = [line for line in lines if line["event"] == "match" and line["status"] == "done"]
    started = {line["match_id"] for line in lines if line["event"] == "match_started"}
    assert done and {line["match_id"] for line in done} <= started
    assert all(isinstance(line["at"], float) and line["level"] == "info" for line in lines)
