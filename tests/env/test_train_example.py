"""The training example (examples/train/): a tiny cross-entropy run is a pure function of its
seed and plays better than its starting point on fixed deals; its export is a bot folder
that passes ``arena check`` in the sandbox and plays by the very features it was trained on.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.bots.policies import GreedyPolicy
from arena.rules import Match
from arena.rules.actions import CHALLENGE, CHOOSE_COLOUR, DecisionKind
from examples.train import policy as trained_policy
from examples.train.export import export
from examples.train.policy import FEATURES, SIZE, LinearPolicy, load_weights, save_weights
from examples.train.train import Settings, round_margins, train

ROOT = Path(__file__).resolve().parents[2]
TINY = Settings(generations=4, population=10, elite=3, deals=24)
"""A few seconds of training: enough to learn the colour and the challenge."""
EVALUATION_SEEDS = range(100_000, 100_400)
"""Deals no tiny run trains on (its deals are drawn below 2**62 at random)."""
STANDARD_ERRORS = 3


@pytest.fixture(scope="module")
def tiny() -> np.ndarray:
    weights, history = train(seed=5, settings=TINY)
    assert len(history) == TINY.generations
    return weights


def test_the_same_seed_gives_the_same_weights_another_seed_others(tiny: np.ndarray) -> None:
    again, _ = train(seed=5, settings=TINY, workers=2)  # the same, over two processes
    assert again.tolist() == tiny.tolist()
    other, _ = train(seed=6, settings=TINY)
    assert other.tolist() != tiny.tolist()


def test_a_tiny_run_beats_its_starting_point_on_fixed_deals(tiny: np.ndarray) -> None:
    """The starting point is the Gaussian's first mean, all weights 0; each deal's margin
    over greedy (mean points a round, both seatings) is compared pair by pair."""
    greedy = GreedyPolicy()
    start = round_margins(LinearPolicy([0.0] * SIZE), greedy, EVALUATION_SEEDS)
    trained = round_margins(LinearPolicy(tiny.tolist()), greedy, EVALUATION_SEEDS)
    gains = [after - before for after, before in zip(trained, start, strict=True)]
    mean = statistics.fmean(gains)
    error = statistics.stdev(gains) / math.sqrt(len(gains))
    assert mean > STANDARD_ERRORS * error, (
        f"gain {mean:+.1f} points a round (standard error {error:.1f}); start "
        f"{statistics.fmean(start):+.1f}, trained {statistics.fmean(trained):+.1f}")


def test_zero_weights_play_cards_as_greedy_does() -> None:
    """Ties go to the first listed action: the greedy plays, but the first colour and a
    challenge, which training has to unlearn."""
    policy, greedy = LinearPolicy([0.0] * SIZE), GreedyPolicy()
    match = Match(2, random.Random(3))
    kinds = set()
    while not match.is_over:
        seat = match.current_seat
        observation, legal = match.observation(seat), match.legal_actions()
        ours = policy.decide(observation, legal)
        if observation.decision is DecisionKind.CHOOSE_COLOUR:
            assert ours == CHOOSE_COLOUR
        elif observation.decision is DecisionKind.CHALLENGE_OR_ACCEPT:
            assert ours == CHALLENGE
        else:
            assert ours == greedy.decide(observation, legal)
        kinds.add(observation.decision)
        match.apply(greedy.decide(observation, legal))
    assert {DecisionKind.PLAY_OR_DRAW, DecisionKind.CHOOSE_COLOUR} <= kinds


def test_weights_round_trip_and_refuse_other_features(tmp_path: Path) -> None:
    path = tmp_path / "weights.json"
    weights = [index / 7 for index in range(SIZE)]
    save_weights(path, weights, {"seed": 1})
    assert load_weights(path) == weights
    document = json.loads(path.read_text())
    document["features"]["a feature of another policy"] = document["features"].pop(FEATURES[0])
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="a feature of another policy"):
        load_weights(path)


def test_the_exported_bot_passes_arena_check(tiny: np.ndarray, tmp_path: Path) -> None:
    folder = tmp_path / "trained-bot"
    export(folder, tiny.tolist(), {"seed": 5}, name="trained-bot")
    assert sorted(path.name for path in folder.iterdir()) == [
        "bot.py", "bot.toml", "policy.py", "weights.json"]
    assert (folder / "policy.py").read_bytes() == Path(trained_policy.__file__).read_bytes()
    assert load_weights(folder / "weights.json") == tiny.tolist()
    checked = subprocess.run(
        [sys.executable, "-m", "arena.cli", "check", str(folder), "--logs",
         str(tmp_path / "logs")], cwd=ROOT, capture_output=True, text=True, timeout=600,
        check=False)
    output = checked.stdout + checked.stderr
    assert checked.returncode == 0, output
    assert "all checks passed" in checked.stdout, output
    # Its opponents never bluff, so it may have learned never to challenge, which the
    # check's freely bluffing opponent shows (examples/train/README.md); nothing else.
    warnings = [line for line in checked.stdout.splitlines() if line.startswith("WARN")]
    assert all(line.startswith("WARN never challenges a Wild Draw Four") for line in warnings), (
        output)
