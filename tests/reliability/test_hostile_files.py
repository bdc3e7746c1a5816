"""Small files that cost their reader dearly are damaged or hostile input like any other:
the reader's own error, one clear line, no traceback, no memory spent on them.

* A value nested thousands of levels deep (a few kilobytes of brackets) in any file or
  answer the platform reads: Python's parsers recurse, and raise RecursionError.
  Each reader of JSON or TOML from outside gets the same few kilobytes; ``arena.formats``
  is where the parsers' depth is turned into their error.
* A match log that unpacks to one enormous line (a decompression bomb: 2 MB of gzip can
  hold a 2 GB line, and `arena inspect` reading it whole takes 50 s and 4.3 GB of memory): a
  log's lines are read at most ``LINE_MOST`` bytes at a time."""

from __future__ import annotations

import gzip
import json
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from arena.cli import main
from arena.formats import NestedTooDeep, json_value, toml_table

from .conftest import ROOT, arena, clean_error, copy_played, no_traceback, write_season

DEPTH = 100_000
JSON_ARRAY = "[" * DEPTH + "]" * DEPTH
JSON_OBJECT = '{"a":' * DEPTH + "1" + "}" * DEPTH
TOML_ARRAY = "[" * DEPTH + "]" * DEPTH
TOML_TABLE = "{a=" * DEPTH + "1" + "}" * DEPTH


@pytest.mark.parametrize("text", [JSON_ARRAY, JSON_OBJECT, JSON_ARRAY.encode()],
                         ids=["array", "object", "bytes"])
def test_json_nested_past_the_parser_is_its_decode_error(text: str | bytes) -> None:
    with pytest.raises(json.JSONDecodeError) as raised:
        json_value(text)
    assert isinstance(raised.value, NestedTooDeep)
    assert str(raised.value) == ("nested deeper than the parser goes (a damaged or hostile "
                                 "value)")


@pytest.mark.parametrize("text", [TOML_ARRAY, TOML_TABLE], ids=["array", "inline table"])
def test_toml_nested_past_the_parser_is_its_decode_error(text: str) -> None:
    with pytest.raises(tomllib.TOMLDecodeError, match="nested deeper than the parser goes"):
        toml_table(f"key = {text}\n")


def test_what_the_parsers_read_is_read_as_they_read_it() -> None:
    """Below the depth, the same values as json and tomllib (400 levels)."""
    deep = "[" * 400 + "1" + "]" * 400
    assert json_value(deep) == json.loads(deep)
    assert json_value('{"a": [1, 2.5, "x", null, true]}') == {"a": [1, 2.5, "x", None, True]}
    assert toml_table(f"a = {deep}\nb = {{c = 1}}\n") == tomllib.loads(
        f"a = {deep}\nb = {{c = 1}}\n")


def _nested_bot(folder: Path) -> Path:
    bot = folder / "bot"
    shutil.copytree(ROOT / "sample_bots" / "python" / "random", bot)
    with (bot / "bot.toml").open("a") as manifest:
        manifest.write(f"\nnotes = {TOML_ARRAY}\n")
    return bot


def _nested_season(folder: Path) -> Path:
    path = write_season(folder)
    with path.open("a") as season:
        season.write(f"\n[notes]\ndeep = {TOML_ARRAY}\n")
    return path


def _nested_log(folder: Path, played: Path) -> Path:
    [log, *_] = sorted((played.parent / "small-runs" / "logs").glob("*.jsonl.gz"))
    lines = gzip.decompress(log.read_bytes()).splitlines()
    damaged = folder / log.name
    damaged.write_bytes(gzip.compress(b"\n".join([lines[0], JSON_OBJECT.encode(),
                                                  *lines[1:]]) + b"\n"))
    return damaged


COMMANDS: dict[str, tuple[Callable[[Path, Path], list[str | Path]], tuple[str, ...]]] = {
    # what is read, and the words of its one line
    "a bot's bot.toml (arena check)": (
        lambda folder, _: ["check", _nested_bot(folder)], ("bot.toml", "not valid TOML",
                                                           "nested deeper")),
    "a season file (arena season run)": (
        lambda folder, _: ["season", "run", _nested_season(folder)],
        ("not valid TOML", "nested deeper")),
    "a match log (arena view)": (
        lambda folder, played: ["view", _nested_log(folder, played), "--out",
                                folder / "view"], ("a damaged match log", "nested deeper")),
    "a match log (arena inspect)": (
        lambda folder, played: ["inspect", _nested_log(folder, played), "--seat", "0"],
        ("a damaged match log", "nested deeper")),
}


@pytest.mark.parametrize("case", sorted(COMMANDS))
def test_a_nested_input_is_one_line(case: str, played: Path, tmp_path: Path) -> None:
    make, words = COMMANDS[case]
    clean_error(arena(*make(tmp_path, played)), *words)


def test_replay_says_which_log_is_nested_past_the_parser(played: Path,
                                                         tmp_path: Path) -> None:
    """`arena replay` reports each log's verdict on stdout (several logs: each its own)."""
    log = _nested_log(tmp_path, played)
    result = arena("replay", log)
    no_traceback(result)
    assert result.returncode == 1
    [line] = result.stdout.strip().splitlines()
    assert f"{log}: replay failed: nested deeper than the parser goes" in line


def test_a_league_file_nested_past_the_parser_is_named(tmp_path: Path) -> None:
    from arena.server.config import LeagueError, load_league

    path = tmp_path / "league.toml"
    path.write_text(f'[league]\nname = "x"\ndeep = {TOML_ARRAY}\n')
    with pytest.raises(LeagueError, match="not valid TOML: arrays or tables nested deeper"):
        load_league(path)


def test_a_report_over_a_nested_state_file_renders_everything_again(
        played: Path, tmp_path: Path) -> None:
    """The site's state file (the last render's keys) nested past the parser: no state,
    every page rendered again, the same site as from scratch."""
    from arena.report.render import STATE_FILE, render_site

    path = copy_played(played, tmp_path)
    store = tmp_path / "small-runs" / "season.sqlite"
    first = render_site(store, tmp_path / "site")
    (tmp_path / "site" / STATE_FILE).write_text(JSON_OBJECT)
    again = render_site(store, tmp_path / "site")
    assert (again.match_pages_rendered, again.match_pages_reused) == (
        first.match_pages_rendered, 0)
    assert path.exists()


def test_a_lock_file_and_a_served_standings_file_nested_past_the_parser(
        tmp_path: Path) -> None:
    """Files the platform wrote, damaged: a season's lock holds nobody, a served site's
    standings name only its folder."""
    from arena.league.lock import LOCK_FILE, read_holder
    from arena.report.serve import seasons_index

    (tmp_path / LOCK_FILE).write_text(JSON_ARRAY)
    assert read_holder(tmp_path) is None
    site = tmp_path / "sites" / "a-season"
    site.mkdir(parents=True)
    (site / "index.html").write_text("<p>a season</p>")
    (site / "standings.json").write_text(JSON_OBJECT)
    assert "a-season" in seasons_index(tmp_path / "sites")


def _bomb_log(folder: Path, played: Path) -> Path:
    """A real log with a line of 64 MiB of spaces after its header (about 64 KB packed)."""
    [log, *_] = sorted((played.parent / "small-runs" / "logs").glob("*.jsonl.gz"))
    lines = gzip.decompress(log.read_bytes()).splitlines()
    bomb = folder / f"bomb-{log.name}"
    bomb.write_bytes(gzip.compress(b"\n".join([lines[0], b" " * (64 << 20), *lines[1:]])
                                   + b"\n", compresslevel=1))
    return bomb


def test_a_log_line_is_read_up_to_its_limit(tmp_path: Path) -> None:
    from arena.referee.log import LINE_MOST, log_lines

    path = tmp_path / "lines.jsonl.gz"
    path.write_bytes(gzip.compress(b"x" * (LINE_MOST - 1) + b"\n" + b"{}\n"))
    assert [len(line) for line in log_lines(path)] == [LINE_MOST, 3]
    path.write_bytes(gzip.compress(b"{}\n" + b"x" * LINE_MOST + b"\n"))
    with pytest.raises(ValueError, match="a line longer than 1,048,576 bytes"):
        list(log_lines(path))


@pytest.mark.parametrize("command", ["view", "inspect", "replay"])
def test_a_log_that_unpacks_to_a_huge_line_is_refused(command: str, played: Path,
                                                       tmp_path: Path) -> None:
    bomb = _bomb_log(tmp_path, played)
    extra = {"view": ["--out", str(tmp_path / "view")], "inspect": ["--seat", "0"],
             "replay": []}[command]
    result = arena(command, bomb, *extra)
    no_traceback(result)
    assert result.returncode != 0
    [line] = (result.stdout if command == "replay" else result.stderr).strip().splitlines()
    assert "a line longer than 1,048,576 bytes" in line and str(bomb) in line


def test_a_report_lists_a_log_that_unpacks_to_a_huge_line(played: Path,
                                                          tmp_path: Path) -> None:
    """A season's log swapped for a bomb (its SHA-256 not the recorded one is what
    the report says first; a store of an older version, with none recorded, reads the log:
    it is listed as damaged, the rest rendered)."""
    import sqlite3

    from arena.report.render import render_site

    copy_played(played, tmp_path)
    store = tmp_path / "small-runs" / "season.sqlite"
    [log, *_] = sorted((tmp_path / "small-runs" / "logs").glob("*.jsonl.gz"))
    log.write_bytes(_bomb_log(tmp_path, played).read_bytes())
    with sqlite3.connect(store) as db:
        db.execute("UPDATE matches SET log_sha256 = NULL")
    summary = render_site(store, tmp_path / "site")
    [problem] = summary.log_problems
    assert problem.kind == "damaged" and "a line longer than" in problem.detail
    assert summary.match_pages_rendered == 2


def test_a_hand_edited_log_shows_its_text_as_text(played: Path, tmp_path: Path) -> None:
    """``arena view`` of a log handed over by someone: a decision's source written as
    markup reaches the time chart escaped, as text, so it cannot run in the browser."""
    [log, *_] = sorted((played.parent / "small-runs" / "logs").glob("*.jsonl.gz"))
    markup = "<img src=x onerror=alert(1)>"
    lines = []
    for line in gzip.decompress(log.read_bytes()).splitlines():
        record = json.loads(line)
        if record.get("type") == "decision":
            record["source"] = markup
        lines.append(json.dumps(record).encode())
    edited = tmp_path / log.name
    edited.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    assert main(["view", str(edited), "--out", str(tmp_path / "view")]) == 0
    pages = [path.read_text() for path in (tmp_path / "view").rglob("*.html")]
    assert pages and not any(markup in page for page in pages)
    assert any(str(escape(markup)) in page for page in pages)


def _edited(played: Path, folder: Path, name: str, edit: Callable[[list[Any]], None]
            ) -> Path:
    [log, *_] = sorted((played.parent / "small-runs" / "logs").glob("*.jsonl.gz"))
    records = [json.loads(line) for line in gzip.decompress(log.read_bytes()).splitlines()]
    edit(records)
    path = folder / f"{name}.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in records)))
    return path


def _first(kind: str, records: list[Any]) -> dict[str, Any]:
    return next(r for r in records if isinstance(r, dict) and r.get("type") == kind)


EDITS: dict[str, Callable[[list[Any]], None]] = {
    "a line that is not an object": lambda r: r.insert(5, 5),
    "a seat that is not the match's": lambda r: _first("decision", r).update(seat=-5),
    "players as text": lambda r: r[0].update(players="two"),
    "rules as a list": lambda r: r[0].update(rules=[1]),
    "a limit as text": lambda r: r[0].update(limits={"decision_deadline": "x"}),
    "a source as a number": lambda r: _first("decision", r).update(source=5),
    "a timing as a list": lambda r: _first("timing", r).update(latency_ms=[1]),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("command", ["view", "replay", "inspect", "refeed"])
def test_a_log_edited_by_hand_is_one_clear_error(
        played: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str,
        command: str) -> None:
    """Each of these edits is one "damaged match log" error from every command, never a
    traceback, and nothing is written."""
    log = str(_edited(played, tmp_path, "edited", EDITS[edit]))
    argv = {"view": ["view", log, "--out", str(tmp_path / "view")],
            "replay": ["replay", log],
            "inspect": ["inspect", log, "--seat", "0"],
            "refeed": ["refeed", log, "--seat", "0", "--decision", "1",
                       str(ROOT / "sample_bots" / "python" / "random")]}[command]
    assert main(argv) != 0
    said = capsys.readouterr()
    assert "damaged match log" in said.out + said.err
    assert not (tmp_path / "view").exists()
