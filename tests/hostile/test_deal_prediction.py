"""Deals a bot cannot predict, under both sandboxes.

The predictor bot searches the small space of public match seeds for the one its seat seed
comes from, deals the match itself and compares the hand it predicts with its own. Under a
public seed (a season's base seed plus the match's index) it succeeds, which shows the
attack is real; under a match key derived from a secret season key it finds nothing.
"""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path

import pytest

from arena.referee import eventloop
from arena.referee.limits import Limits
from arena.referee.match import MatchSpec, run_match
from arena.rules.options import RuleOptions
from arena.rules.seeds import KEY_BYTES, MatchSeed
from arena.sandbox import SandboxLimits, load_manifest, make_launcher

ROOT = Path(__file__).resolve().parents[2]
PREDICTOR = Path(__file__).resolve().parent / "bots" / "predictor.py"
GREEDY = ROOT / "sample_bots" / "python" / "greedy"


def predictor_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "predictor"
    folder.mkdir()
    shutil.copy(PREDICTOR, folder / "bot.py")
    (folder / "bot.toml").write_text(
        'name = "predictor"\nversion = "1.0"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n')
    for path in (tmp_path, folder, *folder.iterdir()):
        path.chmod(path.stat().st_mode | 0o755)
    return folder


def prediction(tmp_path: Path, backend: str, seed: int | MatchSeed) -> str:
    bots = [load_manifest(predictor_folder(tmp_path)), load_manifest(GREEDY)]
    logs = tmp_path / "logs"
    seats = [make_launcher(backend, bot, SandboxLimits(), logs, f"seat{seat}-{bot.name}",
                           trusted=True)
             for seat, bot in enumerate(bots)]
    spec = MatchSpec("predict", seed, 2, RuleOptions(target_score=50),
                     Limits(decision_deadline=5.0, time_bank=30.0), logs / "predict.jsonl.gz")
    outcome = eventloop.run(run_match(spec, seats))
    assert not outcome.seats[0].faults, outcome.seats[0].faults
    lines = [line for line in (logs / "seat0-predictor.stderr.log").read_text().splitlines()
             if line.startswith("prediction:")]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("backend", ["bubblewrap", "fallback"])
def test_a_public_match_seed_gives_the_deals_away(tmp_path: Path, backend: str) -> None:
    found = prediction(tmp_path, backend, 1234)
    assert found.startswith("prediction: match seed 1234, hand"), found


@pytest.mark.parametrize("backend", ["bubblewrap", "fallback"])
def test_a_secret_season_key_gives_nothing_away(tmp_path: Path, backend: str) -> None:
    seed = MatchSeed.keyed(secrets.token_bytes(KEY_BYTES), "m00001")
    found = prediction(tmp_path, backend, seed)
    assert found.startswith("prediction: none of 20000 match seeds"), found
