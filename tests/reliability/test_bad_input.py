"""Damaged or unexpected input ends in one clear line and a non-zero exit code, never a
traceback, and loses nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, arena, clean_error, copy_played, no_traceback, tmpfs, write_season


def test_a_season_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = write_season(tmp_path)
    path.write_bytes(path.read_bytes().replace(b'name = "small"', b'name = "sm\xe9ll"'))
    for command in (("season", "run"), ("season", "status"), ("report",)):
        line = clean_error(arena(*command, path), path, "UTF-8")
        assert "byte" in line
    assert not (tmp_path / "small-runs").exists()


def test_an_unwritable_output_folder_is_named(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "readonly", "1m", read_only=True) as readonly:
        path = write_season(tmp_path, folder=readonly / "runs")
        clean_error(arena("season", "run", path), readonly / "runs", "Read-only file system",
                    "give the season an [output] folder it may write")


def test_an_output_folder_under_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    path = write_season(tmp_path, folder=tmp_path / "a-file" / "runs")
    clean_error(arena("season", "run", path), tmp_path / "a-file")


def test_a_corrupt_store_is_named_by_every_command(played: Path, tmp_path: Path) -> None:
    path = copy_played(played, tmp_path)
    store = tmp_path / "small-runs" / "season.sqlite"
    store.write_bytes(b"this is not a database " * 400)
    damaged = store.read_bytes()
    for command in (("season", "run"), ("season", "status"), ("season", "standings"),
                    ("season", "export"), ("report",)):
        clean_error(arena(*command, path), store, "not a season store")
    assert store.read_bytes() == damaged, "a damaged store is left as it is, for a look"


def test_an_empty_store_is_refused_not_restarted(played: Path, tmp_path: Path) -> None:
    path = copy_played(played, tmp_path)
    store = tmp_path / "small-runs" / "season.sqlite"
    store.write_bytes(b"")
    for command in (("season", "run"), ("season", "status"), ("season", "standings"),
                    ("season", "export"), ("report",)):
        clean_error(arena(*command, path), store, "empty")
    assert store.stat().st_size == 0
    logs = sorted((tmp_path / "small-runs" / "logs").glob("*.jsonl.gz"))
    assert len(logs) == 3, "the logs of the played matches are kept"


def test_export_and_report_of_a_season_never_run_create_nothing(tmp_path: Path) -> None:
    path = write_season(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    for command in (("season", "export"), ("season", "export", "--format", "json"),
                    ("season", "standings"), ("report",)):
        clean_error(arena(*command, path), "has not been run", "arena season run")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    status = arena("season", "status", path)
    assert status.returncode == 0 and "not started" in status.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_export_into_a_missing_folder_is_named(played: Path, tmp_path: Path) -> None:
    target = tmp_path / "missing" / "dir" / "x.csv"
    clean_error(arena("season", "export", played, "--out", target), target.parent)
    assert not target.parent.exists()


def test_export_into_a_pipe_closed_early_is_quiet(played: Path) -> None:
    command = (f"{sys.executable} -m arena.cli season export {played} --format json "
               "| head -c 10 >/dev/null")
    result = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    no_traceback(result)
    assert result.stderr == ""


def test_parallelism_is_validated_like_the_file(played: Path) -> None:
    for value in ("0", "-3", "257"):
        clean_error(arena("season", "run", played, "--parallelism", value),
                    "--parallelism", "an integer from 1 to 256", value)


def test_json_export_names_the_version_and_counts_whole_wins(played: Path) -> None:
    result = arena("season", "export", played, "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    for rating in data["ratings"]:
        assert rating["version"] == "1.0"
        assert isinstance(rating["wins"], int) and not isinstance(rating["wins"], bool)
    for row in data["results"]:
        assert row["version"] == "1.0"


def test_export_to_a_file(played: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    result = arena("season", "export", played, "--out", target)
    assert result.returncode == 0, result.stderr
    assert target.read_text().splitlines()[0].startswith("match_id,seat,bot,version")
    shutil.rmtree(tmp_path)


def test_brackets_in_paths_and_names_are_printed_as_they_are(tmp_path: Path) -> None:
    """Rich would read ``[/x]`` in a path or a bot's name as markup (and fail on it)."""
    import shutil

    from .conftest import BOTS

    where = tmp_path / "odd[/bold]folder"
    bots = []
    for name in ("random", "greedy"):
        shutil.copytree(BOTS / name, where / name)
        bots.append(where / name)
    manifest = where / "greedy" / "bot.toml"
    manifest.write_text(manifest.read_text().replace('version = "1.0"', 'version = "[/red]"'))
    path = write_season(where, entrants=bots)
    result = arena("season", "run", path)
    no_traceback(result)
    assert result.returncode == 0, result.stdout + result.stderr
    said = result.stdout
    assert f"output {where / 'small-runs'}" in said
    assert "greedy [/red]" in said


DAMAGED_VALUES = {  # the table, column and value put there, and what the report says
    "a match's seats not JSON": ("matches", "seats", "'garbage'", "JSONDecodeError"),
    "a match's seats not entrant ids": ("matches", "seats", "'[[1]]'",
                                        "not a list of entrant ids"),
    "a match naming no entrant": ("matches", "seats", "'[99]'", "[99]"),
    "a result's faults not JSON": ("results", "faults", "'[{'", "JSONDecodeError"),
    "a result's faults not records": ("results", "faults", "'[1]'", "not a list of dict"),
    "an entrant's manifest not an object": ("entrants", "manifest", "'[]'",
                                            "not a JSON object"),
    "the settings not JSON": ("meta", "value", "'{'", "JSONDecodeError"),
    "the settings nested past the parser": ("meta", "value", f"'{'[' * 5000}{']' * 5000}'",
                                            "nested deeper"),
    # Values of the right type that do not fit their table: believed, they would give
    # standings with two winners or a result counted for a match "to play".
    "a result's place 0": ("results", "place", "0", "does not fit its table"),
    "a result's place past the table": ("results", "place", "7", "does not fit its table"),
    "a result's place a huge number": ("results", "place", "100000000000",
                                       "does not fit its table"),
    "a result's score not a number": ("results", "score", "'abc'", "not a whole number"),
    "a result's score a fraction": ("results", "score", "1.5", "not a whole number"),
    "a result for another entrant than its seat's": ("results", "entrant_id", "3",
                                                     "does not fit its table"),
    "a match seating one entrant twice": ("matches", "seats", "'[1, 1]'",
                                          "does not fit its table"),
    "a played match set back to scheduled": ("matches", "status", "'scheduled'",
                                             "which is scheduled"),
    "a match's seconds not a number": ("matches", "seconds", "'NaN'",
                                       "holds a number that is not one"),
}


@pytest.mark.parametrize("case", sorted(DAMAGED_VALUES))
def test_a_value_damaged_inside_a_whole_store_is_named(case: str, played: Path,
                                                       tmp_path: Path) -> None:
    """A store that is a whole database but holds a value this version never writes (JSON
    that does not parse, of another shape, naming an entrant it does not hold): the report,
    which reads every value, names the store and the value; every other command either
    does not read that value or says the same, in one line, never a traceback."""
    import sqlite3

    path = copy_played(played, tmp_path)
    store = tmp_path / "small-runs" / "season.sqlite"
    table, column, value, words = DAMAGED_VALUES[case]
    where = "key = 'settings'" if table == "meta" else f"rowid = (SELECT MIN(rowid) FROM {table})"
    with sqlite3.connect(store) as db:
        assert db.execute(f"UPDATE {table} SET {column} = {value} WHERE {where}").rowcount == 1
    clean_error(arena("report", path), store, "the season store is damaged", words)
    for command in (("season", "status"), ("season", "standings"), ("season", "export"),
                    ("season", "run")):
        result = arena(*command, path)
        no_traceback(result)
        if result.returncode:
            clean_error(result, store)


def test_a_result_missing_an_entrant_unheld_or_a_match_id_naming_a_path_is_damage(
        played: Path, tmp_path: Path) -> None:
    """A played match short of a seat's result, a table (and its result) naming an entrant
    the store does not hold (export ended in a KeyError, standings showed a bot "?"), and a
    match id that would name a file outside the report (``../../evil``): damage named in one
    line by every command, nothing written."""
    import sqlite3

    for edit in ("DELETE FROM results WHERE rowid = (SELECT MIN(rowid) FROM results)",
                 "UPDATE results SET entrant_id = 7 WHERE match_id = 'm00001' AND seat = 0; "
                 "UPDATE matches SET seats = (SELECT json_set(seats, '$[0]', 7) FROM matches "
                 "WHERE match_id = 'm00001') WHERE match_id = 'm00001'",
                 "UPDATE results SET match_id = '../../evil' WHERE match_id = (SELECT "
                 "MIN(match_id) FROM matches); UPDATE matches SET match_id = '../../evil' "
                 "WHERE match_id = (SELECT MIN(match_id) FROM matches)"):
        where = tmp_path / str(len(edit))
        path = copy_played(played, where)
        store = where / "small-runs" / "season.sqlite"
        with sqlite3.connect(store) as db:
            db.executescript(edit)
        before = set(tmp_path.rglob("*"))
        for command in (("report",), ("season", "standings"), ("season", "export"),
                        ("season", "run")):
            clean_error(arena(*command, path), store, "the season store is damaged")
        assert not [p for p in set(tmp_path.rglob("*")) - before if "evil" in p.name]


@pytest.mark.parametrize("value", ["not json", '{"a": 1}', "[1, 2]"])
def test_the_entrant_folders_damaged_inside_a_store_are_named(
        played: Path, tmp_path: Path, value: str) -> None:
    """What a changed season is compared with (read only when the season file changed)."""
    import sqlite3

    from arena.league.store import SeasonStore, StoreError

    copy_played(played, tmp_path)
    store_path = tmp_path / "small-runs" / "season.sqlite"
    with sqlite3.connect(store_path) as db:
        assert db.execute("UPDATE meta SET value = ? WHERE key = 'entrant_folders'",
                          (value,)).rowcount == 1
    store = SeasonStore(store_path, read_only=True)
    try:
        with pytest.raises(StoreError, match="the season store is damaged"):
            store.entrant_folders()
    finally:
        store.close()


def test_a_seat_holding_a_json_boolean_names_no_entrant(played: Path, tmp_path: Path) -> None:
    """``true`` is no entrant id, though Python reads it as the int 1."""
    import sqlite3

    from arena.league.store import SeasonStore, StoreError

    copy_played(played, tmp_path)
    store_path = tmp_path / "small-runs" / "season.sqlite"
    with sqlite3.connect(store_path) as db:
        match_id = db.execute("SELECT MIN(match_id) FROM matches").fetchone()[0]
        db.execute("UPDATE matches SET seats = '[true, 2]' WHERE match_id = ?", (match_id,))
    store = SeasonStore(store_path, read_only=True)
    try:
        with pytest.raises(StoreError, match="not a list of int"):
            store.seats_of(match_id)
    finally:
        store.close()


def test_a_report_into_the_seasons_own_folders_is_refused(played: Path, tmp_path: Path) -> None:
    """``--out`` gets the check a season file's folders get: a site in the season's own
    folders would sit beside the store (the season's key in it), and one in a bot's folder
    would change the bot, so each is refused in one line, nothing written, whether the
    season is named by its file or its store."""
    path = copy_played(played, tmp_path)
    runs = tmp_path / "small-runs"
    from arena.league.season import load_season

    bot = load_season(path).entrants[0].folder
    for target, out, what in ((path, runs, "the season's output folder"),
                              (path, runs / "site", "the season's output folder"),
                              (path, tmp_path, "the season's output folder"),
                              (runs / "season.sqlite", runs / "x", "the season's output folder")):
        before = set(tmp_path.rglob("*"))
        result = arena("report", target, "--out", out)
        assert result.returncode == 2
        clean_error(result, what, "overlap")
        assert set(tmp_path.rglob("*")) == before
    before = set(bot.rglob("*"))
    clean_error(arena("report", path, "--out", bot / "site"), "the bot folder of", "overlap")
    assert set(bot.rglob("*")) == before
