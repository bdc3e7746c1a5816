"""``arena serve``: the rendered site on localhost; with several seasons, an index of them."""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import io
import os
import urllib.parse
from http import HTTPStatus
from pathlib import Path
from typing import BinaryIO

from markupsafe import escape

from arena.formats import json_value

COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml")
"""Content types sent gzipped to a client that accepts it (logs are gzip already)."""


def accepts_gzip(header: str | None) -> bool:
    """Whether an Accept-Encoding header allows gzip (``gzip;q=0`` refuses it)."""
    for item in (header or "").split(","):
        name, _, parameters = item.strip().partition(";")
        if name.strip().lower() not in ("gzip", "*"):
            continue
        quality = parameters.strip().lower()
        if quality.startswith("q="):
            try:
                return float(quality[2:]) > 0
            except ValueError:
                return False
        return True
    return False


SITE_FILES = (".html", ".css", ".js", ".json", ".csv", ".tar", ".jsonl.gz")
"""The kinds of file a rendered site holds: nothing else is served (a season's store, with
its key, a lock, a log still being written, a bot's output), wherever it lies."""


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site's own pages only: files of the kinds a site holds (``SITE_FILES``),
    no file or folder whose name starts with a dot (``.render-state.json``), nothing a link
    leads outside the site to, no directory listing (a folder without index.html is 404),
    and text compressed with gzip for clients that accept it."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def list_directory(self, path: str | os.PathLike[str]) -> io.BytesIO | None:
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")
        return None

    def _refused(self, path: str) -> bool:
        """A dotted name in the address, or a file outside the site's folder."""
        address = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if any(part.startswith(".") for part in address.split("/")):
            return True
        root = os.path.realpath(self.directory)
        try:
            real = os.path.realpath(path)
        except ValueError:  # a NUL byte in the address (%00): no file is named so
            return True
        inside = real == root or real.startswith(root.rstrip(os.sep) + os.sep)
        if os.path.isfile(real) and not real.endswith(SITE_FILES):
            return True
        return not inside or any(
            part.startswith(".") for part in os.path.relpath(real, root).split(os.sep)
            if part != os.curdir)

    def send_head(self) -> io.BytesIO | BinaryIO | None:
        path = self.translate_path(self.path)
        if self._refused(path):
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        if os.path.isdir(path):
            index = os.path.join(path, "index.html")
            if not urllib.parse.urlsplit(self.path).path.endswith("/") or (
                    not os.path.isfile(index)):
                return super().send_head()  # the redirect to "folder/", or the 404
            path = index
        content_type = self.guess_type(path)
        if not (accepts_gzip(self.headers.get("Accept-Encoding"))
                and content_type.startswith(COMPRESSIBLE) and os.path.isfile(path)):
            return super().send_head()
        try:
            with open(path, "rb") as handle:
                stat = os.fstat(handle.fileno())
                content = handle.read()
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        return self._send_content(content, content_type, int(stat.st_mtime))

    def _send_content(self, content: bytes, content_type: str, modified: int | None
                      ) -> io.BytesIO:
        """The headers of ``content`` (gzipped for a client that accepts it), and the body
        to send after them (for GET; HEAD sends the headers only)."""
        zipped = accepts_gzip(self.headers.get("Accept-Encoding"))
        body = gzip.compress(content, compresslevel=6, mtime=0) if zipped else content
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", content_type)
        if zipped:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        if modified is not None:
            self.send_header("Last-Modified", self.date_time_string(modified))
        self.end_headers()
        return io.BytesIO(body)


class _SeasonsHandler(_SiteHandler):
    """Serves a folder of season sites, answering / with an index of them (to GET and
    HEAD alike, gzipped as the sites' pages are)."""

    def send_head(self) -> io.BytesIO | BinaryIO | None:
        if urllib.parse.urlsplit(self.path).path in ("/", "/index.html"):
            return self._send_content(seasons_index(Path(self.directory)).encode(),
                                      "text/html; charset=utf-8", None)
        return super().send_head()


def season_sites(directory: Path) -> list[Path]:
    """The season sites directly inside ``directory`` (folders with an index.html)."""
    return sorted(p.parent for p in directory.glob("*/index.html"))


def seasons_index(directory: Path) -> str:
    """A page listing the seasons in ``directory`` (read from their standings.json)."""
    rows = []
    for site in season_sites(directory):
        facts: dict[str, object] = {}
        with contextlib.suppress(OSError, ValueError):  # a damaged file: just the folder name
            loaded = json_value((site / "standings.json").read_text(encoding="utf-8"))
            facts = loaded if isinstance(loaded, dict) else {}
        name = str(facts.get("season") or site.name)
        standings = facts.get("standings")
        leaders = [str(r.get("bot")) for r in standings if isinstance(r, dict)
                   and str(r.get("rank", "")).split("\N{EN DASH}")[0] == "1"
                   ] if isinstance(standings, list) else []
        counts = facts.get("matches")
        done = counts.get("done", "?") if isinstance(counts, dict) else "?"
        rows.append(f'<tr><th scope="row"><a href="{escape(site.name)}/index.html">'
                    f"{escape(name)}</a></th><td>{escape(', '.join(leaders))}</td>"
                    f'<td class="num">{escape(str(done))}</td></tr>')
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Seasons · UNO Arena</title>
<link rel="icon" href="data:,">
<style>
body {{ font: 15px/1.5 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; margin: 0; }}
header {{ background: #1d2330; color: #fff; padding: .75rem 1.25rem; font-weight: 800; }}
.logo {{ background: #c8102e; padding: 0 .35em; border-radius: 4px; font-style: italic; }}
main {{ max-width: 900px; margin: 0 auto; padding: 1rem 1.25rem; }}
table {{ border-collapse: collapse; width: 100%; background: #fff; }}
th, td {{ padding: .45rem .6rem; border-bottom: 1px solid #d9dee5; text-align: left; }}
td.num {{ text-align: right; }} a {{ color: #0b57d0; display: inline-block; min-height: 44px;
  line-height: 44px; }}
</style>
</head>
<body>
<header><span class="logo">UNO</span> Arena</header>
<main>
<h1>Seasons</h1>
<table class="seasons">
<thead><tr><th scope="col">Season</th><th scope="col">Rank 1</th>
<th scope="col">Matches played</th></tr></thead>
<tbody>
{"".join(rows)}
</tbody>
</table>
</main>
</body>
</html>
"""


def make_server(directory: Path, port: int = 8000, host: str = "127.0.0.1"
                ) -> http.server.ThreadingHTTPServer:
    """Serve ``directory``: a site, or (no index.html in it) a folder of season sites
    with an index of them at /."""
    several = not (directory / "index.html").exists() and season_sites(directory)
    handler = functools.partial(_SeasonsHandler if several else _SiteHandler,
                                directory=str(directory))
    return http.server.ThreadingHTTPServer((host, port), handler)
