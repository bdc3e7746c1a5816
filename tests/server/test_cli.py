"""The organiser's and the author's commands: one clear line and a non-zero exit for
every mistake, never a traceback."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest
from league_servers import SAMPLES, free_port, write_league

from arena.cli import main


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


Run = Callable[..., Done]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """``arena ARGS`` in this process (the commands' own code; no interpreter start-up)."""
    def run_arena(*args: str, env: dict[str, str] | None = None) -> Done:
        with mock.patch.dict(os.environ, env or {}):
            code = main(list(args))
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return run_arena


def one_line(done: Done, code: int, *words: str) -> None:
    assert done.returncode == code, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    for word in words:
        assert word in lines[0], lines[0]


def test_organiser_commands(run: Run, tmp_path: Path) -> None:
    league = str(write_league(tmp_path))
    added = run("server", "add-author", "alice", "--league", league)
    assert added.returncode == 0 and added.stdout.strip().splitlines()[-1].startswith("1.")
    one_line(run("server", "add-author", "alice", "--league", league), 2, "exists already")
    one_line(run("server", "withdraw", "nobody", "--league", league), 2, "no bot")
    one_line(run("server", "disqualify", "x", "--league", league), 2, "--reason")
    one_line(run("server", "advance", "later", "--league", league), 2, "unknown phase")
    assert run("server", "advance", "frozen", "--league", league).returncode == 0
    one_line(run("server", "advance", "open", "--league", league), 2, "only move on")
    one_line(run("server", "add-author", "bob", "--league", str(tmp_path / "no.toml")), 2,
             "no such league file")
    (tmp_path / "bad.toml").write_text('[league]\nname = "x"\n[ladder]\nparallel = 0\n')
    one_line(run("server", str(tmp_path / "bad.toml")), 2, "bad.toml", "parallel")
    one_line(run("server", "a", "b"), 2, "one league file")


def test_submit_errors(run: Run, tmp_path: Path) -> None:
    empty_config = {"ARENA_TOKEN": "", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    one_line(run("submit", str(SAMPLES / "random"), "--server", "http://127.0.0.1:9",
                 env=empty_config), 2, "no token", "ARENA_TOKEN")
    token_file = tmp_path / "config" / "uno-arena" / "token"
    token_file.parent.mkdir(parents=True)
    token_file.write_text("1.secret\n")
    port = free_port()  # nothing listens there
    one_line(run("submit", str(SAMPLES / "random"), "--server", f"http://127.0.0.1:{port}",
                 env=empty_config), 1, "cannot reach")
    one_line(run("submit", str(tmp_path), "--server", f"http://127.0.0.1:{port}",
                 env={"ARENA_TOKEN": "1.x"}), 2, "bot.toml")


def test_server_refuses_untrusted_bots_in_the_fallback_sandbox(run: Run, tmp_path: Path
                                                               ) -> None:
    league = write_league(tmp_path, extra='\n[sandbox]\nbackend = "fallback"\n')
    one_line(run("server", str(league)), 2, "fallback", "trusted")


def test_server_says_when_its_port_is_taken(run: Run, tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        one_line(run("server", str(write_league(tmp_path)), "--port", str(port)), 2,
                 f"cannot listen on 127.0.0.1:{port}", "in use")


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_server_refuses_what_is_not_a_port(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                           port: str) -> None:
    with pytest.raises(SystemExit) as exited:  # argparse's usage error, before anything starts
        main(["server", str(write_league(tmp_path)), "--port", port])
    assert exited.value.code == 2
    assert "is not a port: give 1 to 65535" in capsys.readouterr().err


@pytest.mark.parametrize(("status", "body", "code", "words"), [
    (201, b"garbage", 1, ("is not a league server", "not JSON")),
    (201, b'{"bot": 1}', 1, ("is not a league server", "not a version")),
    (201, b"[1, 2]", 1, ("is not a league server", "not a version")),
    (201, b"[" * 100_000 + b"]" * 100_000, 1, ("is not a league server", "not JSON")),
    (422, b'{"error": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 1, ("(422)",)),
    (501, b"<html>\n<p>Unsupported method</p>\n</html>", 1,
     ("refused the submission (501)", "Unsupported method")),
    (422, b'{"error": "evil\\u001b[2J refused"}', 1, ("(422)", "evil\\x1b[2J refused")),
    (201, b'{"id": 1, "bot": "x\\u001b]0;t\\u0007", "number": 1, "content_hash": "abc",'
          b' "status": "queued"}', 0, ()),
], ids=["not JSON", "not a version", "a list", "nested past the parser",
        "a refusal nested past the parser", "another web server", "a refusal with escapes",
        "a version with escapes"])
def test_submit_takes_nothing_for_granted_from_the_server(
        capsys: pytest.CaptureFixture[str], status: int, body: bytes, code: int,
        words: tuple[str, ...]) -> None:
    """`arena submit` to something that is not a league server, or a hostile one: one line
    saying so (no traceback), and the server's text shown, never run by the terminal."""
    import http.server
    import threading

    class Answer(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with mock.patch.dict(os.environ, {"ARENA_TOKEN": "1.secret"}):
            result = main(["submit", str(SAMPLES / "random"), "--server",
                           f"http://127.0.0.1:{server.server_port}", "--timeout", "10"])
    finally:
        server.shutdown()
        server.server_close()
    out, err = capsys.readouterr()
    assert result == code, out + err
    assert not {"\x1b", "\x07"} & set(out + err)
    if code:
        lines = err.strip().splitlines()
        assert len(lines) == 1, lines
        assert all(word in lines[0] for word in words), lines[0]
    else:
        assert "submitted x\\x1b]0;t\\x07 version 1" in out


@pytest.mark.parametrize(("args", "message"), [
    (("--server", "http://[::1"), "cannot reach"),
    (("--server", "ftp://x"), "cannot reach"),
])
def test_submit_to_an_address_that_is_not_one(run: Run, args: tuple[str, ...],
                                              message: str) -> None:
    one_line(run("submit", str(SAMPLES / "random"), *args, env={"ARENA_TOKEN": "1.x"}), 1,
             message)


@pytest.mark.parametrize("timeout", ["-5", "0", "nan", "inf", "soon"])
def test_submit_timeout_must_be_seconds(capsys: pytest.CaptureFixture[str],
                                        timeout: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["submit", str(SAMPLES / "random"), "--server", "http://127.0.0.1:9",
              "--timeout", timeout])
    assert exited.value.code == 2
    assert "is not a number of seconds above 0" in capsys.readouterr().err
