"""A bot cannot use another bot's CPU.

A spinner (a process in a busy loop from its start, answering its own decisions at once)
plays a thinker (each decision takes it ``THINK`` seconds of CPU), both pinned to the same
core, under bubblewrap and the fallback. Off turn, a bot's cgroup is throttled to 1% of a
core (or frozen: ``SandboxLimits.off_turn``), so the spinner gets next to no CPU while the
thinker thinks. Measured side by side, the same match with the spinner left running shows
what it prevents: the spinner takes the core whenever it can, the thinker's turns included.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.referee import eventloop
from arena.referee.limits import Limits
from arena.referee.log import read_log
from arena.referee.match import MatchSpec, run_match
from arena.rules.options import RuleOptions
from arena.sandbox import BotManifest, SandboxLimits, make_launcher, sandbox_record

from .conftest import BOTS, RAWBOT

THINK = 0.05
CLOCK = Limits(decision_deadline=1.0, time_bank=20.0, strike_limit=3, hello_timeout=10.0)


@pytest.fixture
def world() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="arena-fair-cpu-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def bot(world: Path, mode: str, core: int) -> BotManifest:
    folder = world / mode
    folder.mkdir()
    folder.chmod(0o755)
    shutil.copy(BOTS / "hostile.py", folder)
    shutil.copy(RAWBOT, folder)
    (folder / "attack.json").write_text(json.dumps(
        {"mode": mode, "core": core, "think_seconds": THINK}))
    return BotManifest(folder=folder, name=mode, version="1", language="python",
                       run=("python3", "hostile.py"))


def play(world: Path, backend: str, off_turn: str, core: int) -> tuple[float, float, float]:
    """(the thinker's median decision latency, the spinner's CPU seconds, the match's
    playing seconds)."""
    logs = world / f"logs-{backend}-{off_turn}"
    limits = SandboxLimits(off_turn=off_turn)
    folder = world / f"{backend}-{off_turn}"
    folder.mkdir()
    bots = [bot(folder, mode, core) for mode in ("spinner", "thinker")]
    seats = [make_launcher(backend, b, limits, logs, b.name, trusted=True) for b in bots]
    log = logs / "match.jsonl.gz"
    spec = MatchSpec(f"fair-{backend}-{off_turn}", 3, 2, RuleOptions(target_score=40), CLOCK,
                     log, sandbox=sandbox_record(seats))
    outcome = eventloop.run(run_match(spec, seats))
    assert [len(s.faults) for s in outcome.seats] == [0, 0], outcome.seats
    # Every decision the thinker was asked has its timing line (the bot answered each).
    latencies = [r["latency_ms"] / 1000 for r in read_log(log)
                 if r["type"] == "timing" and r["seat"] == 1]
    spinner = [json.loads(line[7:]) for line in
               (logs / "spinner.stdout.log").read_text().splitlines()
               if line.startswith("REPORT ")]
    cpu = next(r["result"] for r in spinner if r["what"] == "cpu seconds in play")
    return statistics.median(latencies), cpu, outcome.play_seconds


@pytest.mark.slow
@pytest.mark.parametrize("off_turn", ["throttle", "freeze"])
@pytest.mark.parametrize("backend", ["bubblewrap", "fallback"])
def test_an_off_turn_bot_gets_no_cpu_while_its_opponent_thinks(world: Path, backend: str,
                                                               off_turn: str) -> None:
    core = max(os.sched_getaffinity(0))
    _, running_cpu, running_seconds = play(world, backend, "run", core)
    _, paused_cpu, paused_seconds = play(world, backend, off_turn, core)
    figures = (paused_cpu, running_cpu, paused_seconds, running_seconds)
    # Left running, the spinner takes the core whenever it can: while the thinker thinks too.
    assert running_cpu > 0.1 * running_seconds, figures
    # Throttled or frozen off turn, it ran only on its own (short) turns, and at most 1% of
    # the core beside: a fraction of that. (What it costs the thinker, decision by decision,
    # is measured by benchmarks/sandbox.py: timing on a shared machine is no assertion.)
    assert paused_cpu < 0.3 * running_cpu, figures


def test_a_season_file_chooses_what_happens_off_turn(tmp_path: Path) -> None:
    from arena.league.season import SeasonError, load_season
    from arena.sandbox import limits_from

    greedy = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
    path = tmp_path / "season.toml"
    for value, expected in (('"freeze"', "freeze"), (None, "throttle")):
        table = f"off_turn = {value}" if value else ""
        path.write_text(f'[season]\nname = "s"\nentrants = ["{greedy}/*"]\n'
                        f'[sandbox]\n{table}\n')
        assert limits_from(load_season(path).sandbox).off_turn == expected
    path.write_text(f'[season]\nname = "s"\nentrants = ["{greedy}/*"]\n'
                    '[sandbox]\noff_turn = "sleep"\n')
    with pytest.raises(SeasonError, match="off_turn"):
        load_season(path)
