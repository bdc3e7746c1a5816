"""``arena replay`` without the key a log's deals came from says where that kind of log's
key is published: beside an ``arena play`` run's logs, on a league server's ladder or
final page, or by ``arena season reveal`` for a season's."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from .conftest import SAMPLES

LABELS = {
    "play": "play/match-0001",
    "ladder": "L000042",
    "final": "final/deal/0/1",
    "season": "deal/3/1",
}
"""The deal label each kind of log's header carries (the ladder's: the match id)."""
HINTS = {
    "play": "the secret key `arena play` drew for its run, kept beside its logs in "
            "secret-key.hex",
    "ladder": "a league server's secret ladder key: the server publishes it on its ladder "
              "page (/) and as \"key\" in /api/standings once its final is complete",
    "final": "a league server's secret final key: the server publishes it on its /final "
             "page (and as \"key\" in /api/final) once every final match is recorded",
    "season": "a secret season key: the season's organiser publishes it with `arena season "
              "reveal`",
}


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _relabelled(log: Path, label: str, target: Path) -> Path:
    lines = gzip.decompress(log.read_bytes()).decode().splitlines()
    header = json.loads(lines[0])
    assert header["key_label"].startswith("play/")
    header["key_label"] = label
    target.write_bytes(gzip.compress(("\n".join([json.dumps(header), *lines[1:]]) + "\n")
                                     .encode()))
    return target


def test_each_kind_of_log_says_where_its_key_is(tmp_path: Path) -> None:
    played = arena("play", str(SAMPLES / "greedy"), str(SAMPLES / "greedy"), "--matches", "1",
                   "--target", "50", "--logs", str(tmp_path / "play"), cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    log = next((tmp_path / "play").glob("*.jsonl.gz"))
    beside = arena("replay", "--quiet", str(log), cwd=tmp_path)
    assert beside.returncode == 0 and "replay agrees" in beside.stdout, beside.stdout
    elsewhere = tmp_path / "downloaded"
    elsewhere.mkdir()
    logs = {kind: _relabelled(log, label, elsewhere / f"{kind}.jsonl.gz")
            for kind, label in LABELS.items()}
    shown = arena("replay", *map(str, logs.values()), cwd=tmp_path)
    assert shown.returncode == 1
    lines = {kind: next(line for line in shown.stdout.splitlines()
                        if line.startswith(f"{logs[kind]}: replay failed"))
             for kind in LABELS}
    for kind, hint in HINTS.items():
        assert hint in lines[kind], (kind, lines[kind])
        assert "--key" in lines[kind]
    assert all("season reveal" not in lines[kind] for kind in ("play", "ladder", "final"))
    assert "0 of 4 logs agree" in shown.stdout
