"""The secret season key: drawn at the first run, kept in the store,
committed to in every log and on the site, revealed by the organiser after the season.

Seasons here are small (the Python sample bots, plain processes, matches to 100).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from arena.league.driver import open_store, season_key
from arena.league.season import load_season
from arena.league.store import SeasonStore
from arena.referee.log import read_log

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots" / "python"

SEASON = f"""
[season]
name = "keyed"
table_size = 2
matches_per_group = 2
parallelism = 2
entrants = ["{BOTS}/greedy", "{BOTS}/random"]

[rules]
target_score = 100

[sandbox]
backend = "plain"

[output]
folder = "out"
report = "site"
"""


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def season_at(folder: Path, **changes: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = SEASON
    for old, new in changes.items():
        text = text.replace(old, new)
    path = folder / "season.toml"
    path.write_text(text)
    return path


def stored_key(folder: Path) -> str:
    store = SeasonStore(folder / "out" / "season.sqlite")
    try:
        return store.meta("season_key") or ""
    finally:
        store.close()


def game_content(log: Path) -> list[dict[str, object]]:
    """What a log says of the game: everything but timings."""
    return [{k: v for k, v in record.items() if k != "latency_ms"}
            for record in read_log(log) if record["type"] in ("event", "decision", "result")]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("keyed")
    path = season_at(folder)
    run = arena("season", "run", str(path), cwd=folder)
    assert run.returncode == 0, run.stdout + run.stderr
    return folder


def test_the_first_run_draws_a_key_the_organiser_alone_can_read(played: Path) -> None:
    key = stored_key(played)
    assert len(bytes.fromhex(key)) == 32
    store = played / "out" / "season.sqlite"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert key not in (played / "season.toml").read_text()


def test_every_log_commits_to_the_key_and_never_holds_it(played: Path) -> None:
    key = stored_key(played)
    commitment = hashlib.sha256(bytes.fromhex(key)).hexdigest()
    logs = sorted((played / "out" / "logs").glob("*.jsonl.gz"))
    assert len(logs) == 2
    store = SeasonStore(played / "out" / "season.sqlite")
    try:  # the label each match's deals derive under (a duplicate deal's, at two seats)
        labels = {m["match_id"]: m["chance"] for m in store.matches()}
    finally:
        store.close()
    assert set(labels.values()) == {"deal/0/0"}, "one deal, played from both seats"
    for log in logs:
        header = next(read_log(log))
        assert header["key_commitment"] == commitment
        assert header["key_label"] == labels[log.name.split(".")[0]]
        assert "seed" not in header
        assert key.encode() not in gzip.decompress(log.read_bytes())
        assert stat.S_IMODE(log.stat().st_mode) == 0o644


def test_a_log_replays_with_the_key_and_not_without(played: Path, tmp_path: Path) -> None:
    log = sorted((played / "out" / "logs").glob("*.jsonl.gz"))[0]
    beside_the_store = arena("replay", "--quiet", str(log), cwd=played)
    assert beside_the_store.returncode == 0, beside_the_store.stdout
    assert "replay agrees" in beside_the_store.stdout
    published = tmp_path / "m.jsonl.gz"  # as a visitor downloads it from the site
    published.write_bytes(log.read_bytes())
    without = arena("replay", str(published), cwd=tmp_path)
    assert without.returncode == 1
    assert "secret season key" in without.stdout and "--key" in without.stdout
    wrong = arena("replay", str(published), "--key", "ab" * 32, cwd=tmp_path)
    assert wrong.returncode == 1 and "does not match the commitment" in wrong.stdout
    right = arena("replay", str(published), "--key", stored_key(played), cwd=tmp_path)
    assert right.returncode == 0, right.stdout


def test_the_site_shows_the_commitment_then_the_revealed_key(played: Path) -> None:
    key = stored_key(played)
    commitment = hashlib.sha256(bytes.fromhex(key)).hexdigest()
    rendered = arena("report", str(played / "season.toml"), cwd=played)
    assert rendered.returncode == 0, rendered.stderr
    site = played / "site"
    files = [p for p in site.rglob("*") if p.is_file()]
    assert commitment in (site / "index.html").read_text()
    for path in files:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        assert key.encode() not in data, f"{path} shows the secret key"

    revealed = arena("season", "reveal", str(played / "season.toml"), cwd=played)
    assert revealed.returncode == 0, revealed.stderr
    assert key in revealed.stdout and commitment in revealed.stdout
    assert arena("report", str(played / "season.toml"), cwd=played).returncode == 0
    assert key in (site / "index.html").read_text()
    # Revealing again says the same (and changes nothing).
    again = arena("season", "reveal", str(played / "season.toml"), cwd=played)
    assert again.returncode == 0 and key in again.stdout


def test_reveal_refuses_while_matches_are_to_play(tmp_path: Path) -> None:
    path = season_at(tmp_path)
    store, _, _ = open_store(load_season(path))
    try:
        season_key(store)
    finally:
        store.close()
    refused = arena("season", "reveal", str(path), cwd=tmp_path)
    assert refused.returncode == 1
    assert "still to play" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    forced = arena("season", "reveal", str(path), "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr


def test_reveal_of_a_season_never_run_says_so(tmp_path: Path) -> None:
    path = season_at(tmp_path)
    refused = arena("season", "reveal", str(path), cwd=tmp_path)
    assert refused.returncode == 1 and "has not been run" in refused.stderr
    assert not (tmp_path / "out").exists()


def test_the_same_key_deals_the_same_season_and_another_key_another(tmp_path: Path) -> None:
    key = "5e" * 32
    logs = {}
    for name, given in (("one", key), ("two", key), ("three", "a1" * 32)):
        folder = tmp_path / name
        path = season_at(folder)
        run = arena("season", "run", str(path), "--key", given, cwd=folder)
        assert run.returncode == 0, run.stdout + run.stderr
        assert stored_key(folder) == given
        logs[name] = {log.name: game_content(log)
                      for log in sorted((folder / "out" / "logs").glob("*.jsonl.gz"))}
    assert logs["one"] == logs["two"]
    deals = {name: [[r for r in content if r.get("event") == "Dealt"]
                    for content in by_log.values()] for name, by_log in logs.items()}
    assert deals["three"] != deals["one"]


def test_a_given_key_must_match_the_stored_one(played: Path) -> None:
    again = arena("season", "run", str(played / "season.toml"), "--key", "cd" * 32,
                  cwd=played)
    assert again.returncode == 2
    assert "already has a different key" in again.stderr and "Traceback" not in again.stderr


def test_a_bad_key_is_refused_by_the_parser(tmp_path: Path) -> None:
    bad = arena("season", "run", str(season_at(tmp_path)), "--key", "xyz", cwd=tmp_path)
    assert bad.returncode == 2 and "hexadecimal" in bad.stderr


# -- arena play ---------------------------------------------------------------------------


def play(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return arena("play", str(BOTS / "greedy"), str(BOTS / "random"), "--matches", "2",
                 "--target", "100", "--sandbox", "plain", "--logs", str(tmp_path / "logs"),
                 *extra, cwd=tmp_path)


def test_play_deals_from_a_fresh_secret_key_kept_beside_the_logs(tmp_path: Path) -> None:
    deals = []
    for _ in range(2):
        run = play(tmp_path)
        assert run.returncode == 0, run.stdout + run.stderr
        key_file = tmp_path / "logs" / "secret-key.hex"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        key = key_file.read_text().strip()
        log = tmp_path / "logs" / "match-0001.jsonl.gz"
        header = next(read_log(log))
        assert header["key_commitment"] == hashlib.sha256(bytes.fromhex(key)).hexdigest()
        deals.append([r for r in game_content(log) if r.get("event") == "Dealt"])
        replayed = arena("replay", "--quiet", str(log), cwd=tmp_path)
        assert replayed.returncode == 0, replayed.stdout
    assert deals[0] != deals[1], "two runs dealt the same cards"


def test_play_with_a_seed_is_predictable_and_says_so(tmp_path: Path) -> None:
    runs = [play(tmp_path, "--seed", "42") for _ in range(2)]
    contents = []
    for run in runs:
        assert run.returncode == 0, run.stdout + run.stderr
        assert "predictable" in run.stdout
        log = tmp_path / "logs" / "match-0001.jsonl.gz"
        assert next(read_log(log))["seed"] == 42
        contents.append(game_content(log))
    assert contents[0] == contents[1]
    assert not (tmp_path / "logs" / "secret-key.hex").exists()


def test_the_key_file_is_not_a_symlink_trap(tmp_path: Path) -> None:
    """A planted link in place of the key file is replaced, not followed."""
    (tmp_path / "logs").mkdir()
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    os.symlink(target, tmp_path / "logs" / "secret-key.hex")
    run = play(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert target.read_text() == "keep me"
    assert not (tmp_path / "logs" / "secret-key.hex").is_symlink()
