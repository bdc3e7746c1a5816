"""``arena report`` with damaged, missing or edited logs: everything else is rendered, the
bad logs are listed on the site and in the exit status."""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import sqlite3
from pathlib import Path

import pytest

from .conftest import arena, no_traceback, write_season


@pytest.fixture(scope="module")
def six(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("six")
    path = write_season(where, per_group=2)
    result = arena("season", "run", path)
    assert result.returncode == 0, result.stderr
    return path


def links_resolve(site: Path) -> None:
    for page in site.rglob("*.html"):
        for href in re.findall(r'href="([^"#?]+)', page.read_text()):  # a file, not its query
            if "://" in href or href.startswith(("data:", "mailto:")):
                continue
            assert (page.parent / href).exists(), f"{page}: broken link {href}"


def test_bad_logs_are_listed_and_the_rest_is_rendered(six: Path, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(six.parent, tmp_path, dirs_exist_ok=True)
    path = tmp_path / six.name
    path.write_text(six.read_text().replace(str(six.parent), str(tmp_path)))
    runs = tmp_path / "small-runs"
    store = runs / "season.sqlite"
    with contextlib.closing(sqlite3.connect(store)) as db, db:
        db.execute("UPDATE matches SET log_path = replace(log_path, ?, ?)",
                   (str(six.parent), str(tmp_path)))
        # A store of a version that records no log hash: its logs are read instead.
        db.execute("UPDATE matches SET log_sha256 = NULL WHERE match_id = 'm00004'")
    logs = runs / "logs"
    # m00001: a score edited after the result was recorded (the log still reads fine).
    lines = gzip.decompress((logs / "m00001.jsonl.gz").read_bytes()).decode().splitlines()
    result = json.loads(lines[-1])
    result["scores"] = [s + 100 for s in result["scores"]]
    lines[-1] = json.dumps(result, separators=(",", ":"))
    (logs / "m00001.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(),
                                                         mtime=0))
    (logs / "m00002.jsonl.gz").unlink()  # missing
    content = (logs / "m00004.jsonl.gz").read_bytes()
    (logs / "m00004.jsonl.gz").write_bytes(content[: len(content) // 2])  # cut short

    report = arena("report", path)
    no_traceback(report)
    assert report.returncode == 1, report.stdout + report.stderr
    said = report.stderr.strip()
    assert len(said.splitlines()) == 1, said
    for match, kind in (("m00001", "altered"), ("m00002", "missing"), ("m00004", "damaged")):
        assert f"{match} log {kind}" in said
    site = tmp_path / "small-site"
    for good in ("m00003", "m00005", "m00006"):
        assert (site / "replays" / f"{good}.html").is_file()
        assert (site / "logs" / f"{good}.jsonl.gz").is_file()
        assert "Final standing" in (site / "matches" / f"{good}.html").read_text()
    for bad, kind in (("m00001", "altered"), ("m00002", "missing"), ("m00004", "damaged")):
        page = (site / "matches" / f"{bad}.html").read_text()
        assert f"log {kind}" in page and "Final standing" in page
        assert not (site / "replays" / f"{bad}.html").exists()
        for listing in ("index.html", "matches.html"):
            assert f'matches/{bad}.html">{bad}</a>: <strong>log {kind}' in (
                site / listing).read_text()
    assert "3 match logs damaged or missing" in (site / "index.html").read_text()
    links_resolve(site)

    # Restored: the report is whole again, and says nothing more.
    (logs / "m00004.jsonl.gz").write_bytes(content)
    with contextlib.closing(sqlite3.connect(store)) as db, db:
        db.execute("UPDATE matches SET status = 'scheduled' WHERE match_id IN "
                   "('m00001', 'm00002')")
        db.execute("DELETE FROM results WHERE match_id IN ('m00001', 'm00002')")
    again = arena("report", path)
    assert again.returncode == 0, again.stderr
    assert "damaged or missing" not in (site / "index.html").read_text()
    assert "Final standing" in (site / "matches" / "m00004.html").read_text()
    assert (site / "replays" / "m00004.html").is_file()
    links_resolve(site)


def test_bot_pages_chart_think_time_across_incremental_renders(six: Path,
                                                                tmp_path: Path) -> None:
    """Each bot page charts the bot's median think time per match (the match
    pages chart every decision); a render that reuses every match page (their logs are
    not read again) shows the same chart."""
    import shutil

    shutil.copytree(six.parent, tmp_path, dirs_exist_ok=True)
    path = tmp_path / six.name
    path.write_text(six.read_text().replace(str(six.parent), str(tmp_path)))
    runs = tmp_path / "small-runs"
    with contextlib.closing(sqlite3.connect(runs / "season.sqlite")) as db, db:
        db.execute("UPDATE matches SET log_path = replace(log_path, ?, ?)",
                   (str(six.parent), str(tmp_path)))
    site = tmp_path / "small-site"
    shutil.rmtree(site, ignore_errors=True)
    pages = {}
    for attempt in ("fresh", "reused"):
        report = arena("report", path)
        assert report.returncode == 0, report.stdout + report.stderr
        if attempt == "reused":
            assert "0 rendered" in report.stdout or "(0 matches rendered" in report.stdout, \
                report.stdout
        # The bot pages (not their lists of matches, which have no chart).
        pages[attempt] = {p.name: p.read_text() for p in (site / "bots").glob("*.html")
                          if ".matches" not in p.name}
    assert pages["fresh"] == pages["reused"]
    for name, html in pages["fresh"].items():
        chart = html.split('class="chart bot-time-chart"', 1)
        assert len(chart) == 2, f"{name}: no think-time chart"
        points = re.findall(r'<circle class="point"[^>]*><title>match \d+: ([\d.]+) ms',
                            chart[1].split("</svg>", 1)[0])
        # Every bot of the six-match season played 4 matches, each timed (real bots).
        assert len(points) == 4, (name, points)
        assert all(0 < float(ms) < 1000 for ms in points), points


def test_a_copied_season_reads_its_own_logs(six: Path, tmp_path: Path) -> None:
    """A match's log is the one beside the store, named by its match, not the path
    recorded: read by that path, a season copied elsewhere (a backup restored, a folder
    moved) would read the first one's logs and miss a damaged log of its own, and with the
    first one gone would call its own logs "missing"."""
    import shutil

    shutil.copytree(six.parent, tmp_path, dirs_exist_ok=True)  # the store's paths untouched
    path = tmp_path / six.name
    path.write_text(six.read_text().replace(str(six.parent), str(tmp_path)))
    logs = tmp_path / "small-runs" / "logs"
    (logs / "m00003.jsonl.gz").write_bytes(b"not the log")  # the copy's own, damaged
    report = arena("report", path)
    no_traceback(report)
    assert report.returncode == 1, report.stdout + report.stderr
    said = report.stderr.strip()
    assert "m00003 log altered" in said and "m00001" not in said, said
    assert (six.parent / "small-runs" / "logs" / "m00003.jsonl.gz").read_bytes() != (
        b"not the log")  # the first season's log is whole: it was not read
