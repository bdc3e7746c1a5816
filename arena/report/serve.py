"""``arena serve``: the rendered site on localhost; with several seasons, an index of them."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
from pathlib import Path

from markupsafe import escape


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()


class _SeasonsHandler(_QuietHandler):
    """Serves a folder of season sites, answering / with an index of them."""

    def do_GET(self) -> None:
        if self.path.split("?")[0] in ("/", "/index.html"):
            body = seasons_index(Path(self.directory)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def season_sites(directory: Path) -> list[Path]:
    """The season sites directly inside ``directory`` (folders with an index.html)."""
    return sorted(p.parent for p in directory.glob("*/index.html"))


def seasons_index(directory: Path) -> str:
    """A page listing the seasons in ``directory`` (read from their standings.json)."""
    rows = []
    for site in season_sites(directory):
        facts: dict[str, object] = {}
        with contextlib.suppress(OSError, ValueError):  # a damaged file: just the folder name
            loaded = json.loads((site / "standings.json").read_text(encoding="utf-8"))
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
    handler = functools.partial(_SeasonsHandler if several else _QuietHandler,
                                directory=str(directory))
    return http.server.ThreadingHTTPServer((host, port), handler)
