"""`arena serve`: gzip for clients that accept it, and nothing but the site's own
pages: no internal file (`.render-state.json`, any dotted name), nothing outside the site's
folder (a link out, `..`), no directory listing. Real HTTP requests to a running server."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.report.serve import accepts_gzip, make_server

PAGE = "<!doctype html><title>standings</title>" + "<p>row</p>" * 2000


@contextlib.contextmanager
def serving(root: Path) -> Iterator[int]:
    """``arena serve root`` in a thread of this process: its port."""
    server = make_server(root, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture()
def site(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    root = tmp_path / "site"
    (root / "assets").mkdir(parents=True)
    (root / "bots").mkdir()
    (root / "logs").mkdir()
    (root / "empty").mkdir()
    (root / "index.html").write_text(PAGE)
    (root / "bots" / "a.html").write_text(PAGE.replace("standings", "bot a"))
    (root / "assets" / "tables.js").write_text("console.log('tables');\n" * 200)
    (root / ".render-state.json").write_text('{"_templates": "secret"}')
    (root / "bots" / ".hidden.html").write_text("hidden")
    (root / "logs" / "m00001.jsonl.gz").write_bytes(gzip.compress(b'{"type": "header"}\n'))
    # What a season's output folder holds, were it put inside the site: never served.
    for name in ("season.sqlite", "season.sqlite-wal", "season.lock", "season.toml",
                 "logs/m00002.jsonl.gz.123.partial", "logs/seat0-a.stderr.log"):
        (root / name).write_text("secret")
    outside = tmp_path / "outside.html"
    outside.write_text("the organiser's own file")
    os.symlink(outside, root / "link.html")
    os.symlink(tmp_path, root / "up")
    with serving(root) as port:
        yield root, port


def get(port: int, path: str, method: str = "GET", **headers: str
        ) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, headers=headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_pages_are_gzipped_for_clients_that_accept_it(site: tuple[Path, int]) -> None:
    root, port = site
    for path, file in (("/", "index.html"), ("/index.html", "index.html"),
                       ("/bots/a.html", "bots/a.html"), ("/assets/tables.js", "assets/tables.js")):
        status, headers, body = get(port, path, **{"Accept-Encoding": "gzip, deflate"})
        assert status == 200, path
        assert headers["content-encoding"] == "gzip"
        assert headers["vary"] == "Accept-Encoding"
        assert int(headers["content-length"]) == len(body) < (root / file).stat().st_size / 5
        assert gzip.decompress(body) == (root / file).read_bytes()


def test_pages_are_plain_for_other_clients(site: tuple[Path, int]) -> None:
    root, port = site
    for headers in ({}, {"Accept-Encoding": "identity"}, {"Accept-Encoding": "gzip;q=0"}):
        status, answer, body = get(port, "/index.html", **headers)
        assert status == 200
        assert "content-encoding" not in answer
        assert body == (root / "index.html").read_bytes()


def test_head_gives_the_headers_of_get(site: tuple[Path, int]) -> None:
    _, port = site
    status, headers, body = get(port, "/index.html", "HEAD", **{"Accept-Encoding": "gzip"})
    _, full, content = get(port, "/index.html", **{"Accept-Encoding": "gzip"})
    assert status == 200 and body == b""
    assert headers["content-length"] == full["content-length"] == str(len(content))


def test_logs_are_sent_as_they_are(site: tuple[Path, int]) -> None:
    """A gzip file is not compressed again (nor declared as an encoding the browser would
    undo): the download is the log's own bytes."""
    root, port = site
    status, headers, body = get(port, "/logs/m00001.jsonl.gz", **{"Accept-Encoding": "gzip"})
    assert status == 200
    assert "content-encoding" not in headers
    assert body == (root / "logs" / "m00001.jsonl.gz").read_bytes()


@pytest.mark.parametrize("path", [
    "/.render-state.json", "/%2erender-state.json", "/bots/.hidden.html",
    "/bots/%2Ehidden.html", "/./.render-state.json", "/bots/../.render-state.json",
    "/assets/", "/empty/", "/bots/", "/link.html", "/up/outside.html", "/up/",
    "/../outside.html", "/%2e%2e/outside.html", "/missing.html",
    "/index.html%00", "/%00", "/bots/a.html%00.png",  # a NUL byte: no traceback, a 404
    "/" + "x" * 300, "/season.sqlite", "/season.sqlite-wal", "/season.lock",
    "/season.toml", "/logs/m00002.jsonl.gz.123.partial", "/logs/seat0-a.stderr.log",
])
def test_internal_files_outside_files_and_listings_are_404(site: tuple[Path, int],
                                                           path: str) -> None:
    _, port = site
    for headers in ({}, {"Accept-Encoding": "gzip"}):
        status, _, body = get(port, path, **headers)
        assert status == 404, f"{path} answered {status}"
        assert b"secret" not in body and b"organiser" not in body and b"row" not in body


def test_a_folder_without_its_slash_is_redirected_then_refused(site: tuple[Path, int]) -> None:
    _, port = site
    status, headers, _ = get(port, "/empty")
    assert status == 301 and headers["location"] == "/empty/"


def test_accept_encoding_parsing() -> None:
    assert accepts_gzip("gzip")
    assert accepts_gzip("deflate, gzip;q=0.5")
    assert accepts_gzip("*")
    assert accepts_gzip("GZIP")
    assert not accepts_gzip(None)
    assert not accepts_gzip("")
    assert not accepts_gzip("br, deflate")
    assert not accepts_gzip("gzip;q=0")
    assert not accepts_gzip("gzip;q=0.0")
    assert not accepts_gzip("gzip;q=nonsense")


@pytest.fixture()
def seasons(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """`arena serve reports/`: a folder of two season sites, answered with their index."""
    root = tmp_path / "reports"
    for name, leader in (("autumn", "greedy-1"), ("winter", "strategist-2")):
        (root / name).mkdir(parents=True)
        (root / name / "index.html").write_text(PAGE.replace("standings", name))
        (root / name / "standings.json").write_text(
            f'{{"season": "{name} cup", "standings": [{{"bot": "{leader}", "rank": "1"}}],'
            ' "matches": {"done": 12}}')
        (root / name / ".render-state.json").write_text('{"_templates": "secret"}')
    with serving(root) as port:
        yield root, port


@pytest.mark.parametrize("path", ["/", "/index.html", "/?sort=name"])
def test_the_seasons_index_answers_get_and_head_gzipped_or_not(seasons: tuple[Path, int],
                                                             path: str) -> None:
    _, port = seasons
    status, plain_headers, plain = get(port, path)
    assert status == 200 and "content-encoding" not in plain_headers
    assert b"autumn cup" in plain and b"strategist-2" in plain
    assert int(plain_headers["content-length"]) == len(plain)
    status, headers, body = get(port, path, **{"Accept-Encoding": "gzip"})
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert gzip.decompress(body) == plain
    for encoding in ({}, {"Accept-Encoding": "gzip"}):
        status, head_headers, nothing = get(port, path, "HEAD", **encoding)
        _, got_headers, _ = get(port, path, **encoding)
        assert status == 200 and nothing == b""
        assert {k: v for k, v in head_headers.items() if k != "date"} == {
            k: v for k, v in got_headers.items() if k != "date"}


def test_each_season_is_served_as_a_site(seasons: tuple[Path, int]) -> None:
    _, port = seasons
    status, _, body = get(port, "/winter/")
    assert status == 200 and b"<title>winter</title>" in body
    for path in ("/winter/.render-state.json", "/winter/%2erender-state.json",
                 "/../reports/winter/index.html", "/spring/"):
        status, _, body = get(port, path, **{"Accept-Encoding": "gzip"})
        assert status == 404, f"{path} answered {status}"
        assert b"secret" not in body


def test_a_port_that_cannot_be_listened_on_is_one_clear_line(site: tuple[Path, int]) -> None:
    """`arena serve --port`: not a port (past 65535, negative, a word) is a usage error;
    a port in use is one line saying so, with no traceback."""
    import socket
    import subprocess
    import sys

    root, _ = site

    def serve(port: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "arena.cli", "serve", str(root),
                               "--port", port], capture_output=True, text=True, timeout=60)

    for port in ("70000", "-1", "eighty"):
        refused = serve(port)
        assert refused.returncode == 2 and "is not a port: give 1 to 65535" in refused.stderr
        assert "Traceback" not in refused.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = serve(str(taken.getsockname()[1]))
    assert busy.returncode == 1, busy.stdout + busy.stderr
    assert "cannot listen on 127.0.0.1:" in busy.stderr and "choose another --port" in busy.stderr
    assert "Traceback" not in busy.stderr
