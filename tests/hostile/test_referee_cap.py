"""The referee process itself runs under a memory cap.

A season's worker process referees its matches; ``cap_referee`` moves it into a memory
cgroup of its own, a sibling of its bots' cgroups (so their memory never counts against
it), and the start-up sweep removes that cgroup once the worker is gone. What the inbox
bounds miss then kills the worker (its match fails and is replayed at the next run), not
the host.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from pathlib import Path
from typing import Any

from arena.league.executor import LocalExecutor, MatchJob
from arena.league.season import SandboxSettings
from arena.referee.limits import Limits
from arena.referee.log import read_log
from arena.rules.options import RuleOptions
from arena.rules.seeds import MatchSeed
from arena.sandbox import cgroups, load_manifest
from arena.sandbox.limits import MIB, REFEREE_MEMORY_MIB, SandboxLimits
from arena.sandbox.sweep import sweep_cgroups

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots" / "python"

def _capped_child(cap: int, allocate: int, report: Any) -> None:
    where = cgroups.cap_referee(cap)
    host = cgroups.detect()
    assert host is not None, "this host gives the referee no cgroup (CI's does)"
    bot = cgroups.BotCgroups.create(host, "cap-probe", SandboxLimits())
    try:
        report.send({"referee": str(where), "bot": str(bot.directories["memory"]),
                    "own": Path("/proc/self/cgroup").read_text(),
                    "again": str(cgroups.cap_referee(cap))})
    finally:
        bot.remove()
    block = b"x" * allocate  # every page written: resident, charged to the cgroup
    report.send({"survived": len(block)})


def _run_child(cap: int, allocate: int) -> tuple[int | None, list[dict[str, Any]]]:
    context = multiprocessing.get_context("spawn")
    reader, writer = context.Pipe(duplex=False)  # a pipe: sent before any kill lands
    child = context.Process(target=_capped_child, args=(cap, allocate, writer))
    child.start()
    writer.close()
    messages = []
    with contextlib.suppress(EOFError):
        while reader.poll(60):
            messages.append(reader.recv())
    child.join(60)
    return child.exitcode, messages


def test_a_referee_over_its_cap_is_killed_alone() -> None:
    exitcode, messages = _run_child(64 * MIB, 256 * MIB)
    assert exitcode == -9, f"the capped process ended with {exitcode}: {messages}"
    assert not any("survived" in m for m in messages)
    place = messages[0]
    referee = Path(place["referee"])
    assert referee.name.startswith("arena-referee-")
    assert f"{referee.name}\n" in place["own"] or place["own"].rstrip().endswith(referee.name)
    assert place["again"] == place["referee"], "capped once per process"
    # The bot's cgroup is the referee's sibling: a bot's memory never counts against it.
    assert Path(place["bot"]).parent == referee.parent
    # Once the referee is gone its empty cgroup goes with the next run's sweep.
    assert referee in sweep_cgroups() or not referee.exists()
    assert not referee.exists()


def test_under_its_cap_a_referee_works_as_before() -> None:
    exitcode, messages = _run_child(256 * MIB, 16 * MIB)
    assert exitcode == 0, messages
    assert messages[-1] == {"survived": 16 * MIB}
    sweep_cgroups()


def test_season_workers_referee_under_the_cap(tmp_path: Path) -> None:
    bots = tuple(load_manifest(SAMPLE_BOTS / name) for name in ("greedy", "random"))
    job = MatchJob("m00001", MatchSeed.public(5), bots, RuleOptions(target_score=50),
                   Limits(), SandboxSettings(backend="plain"), tmp_path / "m00001.jsonl.gz",
                   tmp_path / "m00001")
    executor = LocalExecutor(1, pin_cores=False)
    try:
        outcomes = list(executor.run([job]))
    finally:
        executor.shutdown()
    assert outcomes[0].record is not None, outcomes[0].error
    header = next(read_log(job.log_path))
    assert header["sandbox"]["referee_memory_mib"] == REFEREE_MEMORY_MIB
    assert not any("REFEREE MEMORY" in w for w in header["sandbox"]["warnings"])
    sweep_cgroups()
