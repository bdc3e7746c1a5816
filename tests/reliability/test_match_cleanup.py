"""A match cancelled while it cleans up (a worker stopped just as its match ended) still
kills its bots and removes its socket folder (a SIGINT at that moment would leave a match
folder)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from arena.bots.policies import GreedyPolicy
from arena.processes import owner_tag
from arena.referee import eventloop
from arena.referee.limits import Limits
from arena.referee.match import InProcessSeat, MatchSpec, run_match
from arena.rules.options import RuleOptions
from arena.sandbox import PlainLauncher, load_manifest

from .conftest import ROOT
from .processes import Tree

LINGER = """
import sys, time
from rawbot import RawBot

bot = RawBot()
bot.hello()
for response in bot.responses():
    if response.WhichOneof("message") == "match_end":
        time.sleep(60)  # keeps its stream open: the referee waits for it to hang up
    if response.WhichOneof("message") == "decision_request":
        bot.answer(response.decision_request.request_id)
"""


def test_a_match_cancelled_during_its_clean_up_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "linger"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "referee" / "bots" / "rawbot.py", folder)
    (folder / "linger.py").write_text(LINGER)
    (folder / "bot.toml").write_text('name = "linger"\nversion = "1"\nlanguage = "python"\n'
                                     'run = ["python3", "linger.py"]\n')
    bot = load_manifest(folder)
    log = tmp_path / "m1.jsonl.gz"
    spec = MatchSpec("m1", 3, 2, RuleOptions(target_score=30), Limits(), log)
    tree = Tree(os.getpid())

    async def cancel_once_ended() -> None:
        seats = [PlainLauncher(bot, tmp_path / "out", "linger"),
                 InProcessSeat(GreedyPolicy(1), "greedy")]
        task = asyncio.ensure_future(run_match(spec, seats))
        while not log.exists():  # the log is closed as the match ends, before clean-up
            tree.sample()
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)  # waiting for the lingering bot to hang up
        tree.sample()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    eventloop.run(cancel_once_ended())

    def lingering() -> list[int]:  # this test's bot (the suite's other processes aside)
        found = []
        for pid in tree.alive():
            with contextlib.suppress(OSError):
                if b"linger.py" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
        return found

    deadline = time.monotonic() + 5
    while lingering() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lingering() == [], "the bot outlived its match"
    assert not list(Path(tempfile.gettempdir()).glob(f"arena-match-{owner_tag()}-*"))
