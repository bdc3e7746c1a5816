"""The match log's header names the sandbox backend the bots actually ran in, not the one
the season asked for (a failed probe switches a worker to another backend)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.league import executor
from arena.league.executor import MatchJob, play_job
from arena.league.season import SandboxSettings
from arena.referee.limits import Limits
from arena.referee.log import read_log
from arena.rules.options import RuleOptions
from arena.sandbox import PlainLauncher, load_manifest

from .conftest import BOTS


def test_the_header_names_the_backend_used(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def substitute(settings: Any, bot: Any, log_dir: Path, label: str
                   ) -> tuple[PlainLauncher, dict[str, Any]]:
        # As when bubblewrap's probe fails in a worker: another backend, which says so.
        backend = "fallback" if label.startswith("seat0") else "plain"
        return PlainLauncher(bot, log_dir, label), {
            "backend": backend, "warnings": [f"{backend} instead of {settings.backend}"]}

    monkeypatch.setattr(executor, "seat_launcher", substitute)
    bots = tuple(load_manifest(BOTS / name) for name in ("greedy", "random"))
    job = MatchJob("m00001", 5, bots, RuleOptions(target_score=50), Limits(),
                   SandboxSettings(backend="bubblewrap"), tmp_path / "m00001.jsonl.gz",
                   tmp_path / "m00001")
    outcome = play_job(job)
    assert outcome.record is not None, outcome.error
    header = next(read_log(job.log_path))
    assert header["sandbox"]["backend"] == "fallback + plain"
    assert header["sandbox"]["requested"]["backend"] == "bubblewrap"
    assert header["sandbox"]["warnings"] == ["fallback instead of bubblewrap",
                                             "plain instead of bubblewrap"]
