"""Core pinning (for throughput): workers that fill the cores get one core each, and the
match a worker plays (the referee, the sandbox launcher, every bot process) stays on it;
fewer workers than cores, or ``pin_cores = false``, leave every process free to use them all.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.league.cluster import DaskExecutor
from arena.league.executor import LocalExecutor, MatchJob, core_plan, usable_cores
from arena.league.season import SandboxSettings
from arena.referee.limits import Limits
from arena.rules.options import RuleOptions
from arena.rules.seeds import MatchSeed
from arena.sandbox.manifest import load_manifest


@pytest.mark.parametrize(("workers", "cores", "plan"), [
    (2, [0, 1], [0, 1]),                 # the workers fill the cores: one each
    (1, [0, 1], None),                   # a core to spare: a lone match uses both
    (3, [0, 1], [0, 1, 0]),              # more workers than cores share them in turn
    (4, [0, 1], [0, 1, 0, 1]),
    (2, [3, 7], [3, 7]),                 # only the cores this process may use (a cpuset)
    (1, [5], [5]),
    (7, list(range(8)), None),
    (8, list(range(8)), list(range(8))),
    (2, [], None),
])
def test_core_plan(workers: int, cores: list[int], plan: list[int] | None) -> None:
    assert core_plan(workers, cores) == plan


def test_the_local_executor_plans_for_the_workers_its_matches_start() -> None:
    cores = usable_cores()
    assert LocalExecutor(len(cores)).placement(100) == cores
    assert LocalExecutor(len(cores), pin_cores=False).placement(100) is None
    if len(cores) > 1:  # fewer matches than cores: the workers they start leave cores spare
        assert LocalExecutor(len(cores)).placement(len(cores) - 1) is None


WHERE_BOT = '''
import os, sys
from arena.bots.sdk import run
print("cores", *sorted(os.sched_getaffinity(0)), file=sys.stderr, flush=True)
run(lambda turn: turn.legal_actions[0], name="where", version="1.0")
'''


@pytest.fixture
def where(tmp_path: Path) -> Path:
    """A bot that prints the cores it may run on to its stderr, then plays."""
    folder = tmp_path / "where"
    folder.mkdir()
    folder.chmod(0o755)  # the sandboxed bot runs under a uid of its own
    (folder / "bot.toml").write_text(
        'name = "where"\nversion = "1.0"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n')
    (folder / "bot.py").write_text(WHERE_BOT)
    return folder


def bot_cores(output: Path) -> list[set[int]]:
    """The cores each bot of the played matches saw, from their stderr logs."""
    found = []
    for log in sorted(output.rglob("*.stderr.log")):
        line = re.search(r"^cores( \d+)+$", log.read_text(), re.MULTILINE)
        assert line, f"{log} has no cores line: {log.read_text()[:500]}"
        found.append({int(core) for core in line.group(0).split()[1:]})
    return found


def play(where: Path, tmp_path: Path, workers: int, pin_cores: bool, backend: str
         ) -> list[set[int]]:
    bot = load_manifest(where)
    jobs = [MatchJob(f"m{index}", seed=MatchSeed.public(index), bots=(bot, bot),
                     rules=RuleOptions(target_score=50), limits=Limits(),
                     sandbox=SandboxSettings(backend=backend),
                     log_path=tmp_path / f"m{index}.jsonl.gz",
                     output_dir=tmp_path / "out" / str(index))
            for index in range(2 * workers)]
    outcomes = list(LocalExecutor(workers, pin_cores).run(jobs))
    assert [o.error for o in outcomes] == [None] * len(jobs)
    seen = bot_cores(tmp_path / "out")
    assert len(seen) == 2 * len(jobs)
    return seen


@pytest.mark.parametrize("backend", ["bubblewrap", "plain"])
def test_workers_filling_the_cores_keep_their_matches_on_one_core(
        where: Path, tmp_path: Path, backend: str) -> None:
    cores = set(usable_cores())
    seen = play(where, tmp_path, len(cores), True, backend)
    for bot in seen:
        assert len(bot) == 1 and bot <= cores, f"a bot ran on {bot}, not one core of {cores}"


def test_unpinned_workers_leave_every_core_to_their_matches(where: Path, tmp_path: Path
                                                            ) -> None:
    cores = set(usable_cores())
    assert play(where, tmp_path, len(cores), False, "bubblewrap") == [cores] * 4 * len(cores)


def test_a_lone_worker_with_cores_to_spare_is_not_pinned(where: Path, tmp_path: Path) -> None:
    cores = set(usable_cores())  # (on a one-core machine, pinned or not, the same core)
    assert play(where, tmp_path, 1, True, "bubblewrap") == [cores] * 4


def test_dask_workers_filling_a_hosts_cores_are_pinned_one_each() -> None:
    executor = DaskExecutor(None, workers=len(usable_cores()))
    try:
        client = executor._connect()
        where = client.run(lambda: sorted(os.sched_getaffinity(0)))
    finally:
        executor.shutdown()
    assert sorted(cores for cores in where.values()) == [[core] for core in usable_cores()]


@pytest.mark.parametrize("pin", [True, False])
def test_season_run_says_whether_each_match_gets_a_core(tmp_path: Path, pin: bool) -> None:
    bots = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
    path = tmp_path / "cores.toml"
    path.write_text(f"""
[season]
name = "cores"
entrants = ["{bots}/random", "{bots}/greedy"]
matches_per_group = {2 * len(usable_cores())}
parallelism = {len(usable_cores())}
pin_cores = {str(pin).lower()}

[rules]
target_score = 50

[sandbox]
backend = "plain"

[output]
folder = "{tmp_path / 'out'}"
""")
    result = subprocess.run([sys.executable, "-m", "arena.cli", "season", "run", str(path)],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())  # rich wraps the line
    assert f"{len(usable_cores())} at a time" in said
    assert ("a core each" in said) is pin
