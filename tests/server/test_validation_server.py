"""The validation queue on a running server, over HTTP: identical sources take an earlier
result at once, a quick check never waits behind a compile, versions say where they
stand, and ``arena submit --wait`` follows a version through a server restart."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from league_servers import ROOT, SAMPLES, Server, copy_bot, file_entry, league_server, tar_gz

from arena.server.uploads import pack

FINAL = ("active", "failed", "retired")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with league_server(tmp_path / "league", validation="validators = 1") as running:
        for name in ("alice", "bob", "carol"):
            running.add_author(name)
        yield running


def _built_bot(name: str, build: str, run: str = "print('never run')") -> bytes:
    toml = (f'name = "{name}"\nversion = "1"\nlanguage = "python"\n'
            f'run = ["python3", "bot.py"]\nbuild = ["sh", "-c", "{build}"]\n')
    return tar_gz([file_entry("bot.toml", toml.encode()), file_entry("bot.py", run.encode())])


def _version(server: Server, author: str, version_id: int) -> dict[str, object]:
    with server.client(author) as client:
        answer = client.get(f"/api/versions/{version_id}")
    assert answer.status_code == 200, answer.text
    found: dict[str, object] = answer.json()
    return found


def _final(server: Server, author: str, version_id: int, timeout: float = 120
           ) -> dict[str, object]:
    return server.wait_for(lambda: (v := _version(server, author, version_id))["status"]
                           in FINAL and v, timeout=timeout, what=f"version {version_id}")


def test_identical_sources_take_the_earlier_result_at_once(server: Server,
                                                           tmp_path: Path) -> None:
    failing = _built_bot("broken", "echo compiling the bot; exit 3")
    first = server.submit("alice", failing).json()
    assert _final(server, "alice", first["id"])["status"] == "failed"
    again = server.submit("alice", failing).json()
    reused = _final(server, "alice", again["id"])
    assert reused["status"] == "failed" and reused["reused_from"] == first["id"]
    assert str(reused["build_log"]).startswith(
        "the same sources, build and toolchains as broken version 1")
    assert "nothing was built or checked again" in str(reused["build_log"])

    bot = copy_bot(SAMPLES / "greedy", tmp_path / "greedy", name="twice")
    played = server.submit("bob", pack(bot)).json()
    assert _final(server, "bob", played["id"])["status"] == "active"
    second = server.submit("bob", pack(bot)).json()
    taken = _final(server, "bob", second["id"])
    assert taken["status"] == "active" and taken["reused_from"] == played["id"]
    assert "its result is reused" in str(taken["check_report"])
    with server.client("bob") as client:
        page = client.get(f"/me/versions/{second['id']}").text
    assert f"those of version {played['id']}" in page


def test_a_quick_check_never_waits_behind_a_compile_and_versions_say_where_they_stand(
        server: Server, tmp_path: Path) -> None:
    """One validator compiles alice's bot while bob's build waits: carol's bot, with no
    build step, is taken by the quick lane's validator at once."""
    slow = server.submit("alice", _built_bot("slow", "sleep 15; exit 3")).json()
    server.wait_for(lambda: _version(server, "alice", slow["id"])["status"] == "building",
                    what="the slow build to start")
    building = _version(server, "alice", slow["id"])["queue"]
    assert isinstance(building, dict) and building["stage"] == "building"
    assert building["position"] is None and building["stage_started_at"] is not None
    queued_build = server.submit("bob", _built_bot("later", "sleep 1; exit 3")).json()
    assert queued_build["queue"]["position"] == 1 and queued_build["queue"]["lane"] == "build"
    with server.client("bob") as client:
        page = client.get(f"/me/versions/{queued_build['id']}").text
        me = client.get("/me").text
    assert "Number 1 in the build lane of the validation queue" in page
    assert "number 1 in the build lane" in me
    quick = server.submit("carol", pack(copy_bot(SAMPLES / "random", tmp_path / "random",
                                                 name="quick"))).json()
    server.wait_for(lambda: _version(server, "carol", quick["id"])["status"] != "queued",
                    what="the quick check to be taken")
    assert _version(server, "alice", slow["id"])["status"] == "building", \
        "taken while the compile still runs"
    assert _version(server, "bob", queued_build["id"])["status"] == "queued"
    assert _final(server, "carol", quick["id"])["status"] == "active"
    assert _final(server, "carol", quick["id"])["queue"] is None


def test_submit_wait_follows_a_version_through_a_server_restart(server: Server,
                                                                tmp_path: Path) -> None:
    folder = copy_bot(SAMPLES / "greedy", tmp_path / "greedy", name="patient")
    with open(folder / "bot.toml", "a") as toml:  # slow enough to be in hand at the stop
        toml.write('build = ["sh", "-c", "sleep 3"]\n')
    waiting = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "submit", str(folder), "--server", server.url,
         "--wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "ARENA_TOKEN": server.tokens["alice"]})
    try:
        server.wait_for(lambda: ("patient", 1) in server.version_statuses("alice"),
                        what="the submission")
        server.stop()
        time.sleep(2)  # --wait asks once a second: it finds no server at least once
        server.start()
        out, err = waiting.communicate(timeout=180)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, (out, err)
    assert "the server does not answer" in out
    assert out.rstrip().endswith("active"), out
