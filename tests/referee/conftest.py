"""Helpers for referee tests: launch real bot processes and check none is left."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from arena.referee import eventloop
from arena.referee.limits import Limits
from arena.referee.match import MatchOutcome, MatchSpec, Seat, run_match
from arena.rules.options import RuleOptions
from arena.sandbox import BotManifest, PlainLauncher, PlainProcess, load_manifest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots" / "python"
BOTS = Path(__file__).resolve().parent / "bots"


def sample(name: str) -> BotManifest:
    return load_manifest(SAMPLES / name)


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"
"""What an HTTP/2 client sends first: the connection preface and an empty SETTINGS frame."""


def misbehaving(mode: str, variants: bool = False) -> BotManifest:
    """A misbehaving bot (``bots/misbehave.py``); with ``variants`` it declares them all."""
    return BotManifest(folder=BOTS, name=mode, version="0", language="python",
                       run=(sys.executable, "misbehave.py", mode,
                            *(["variants"] if variants else [])))


class Tracker:
    """Wraps launchers to remember every process started."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.processes: list[PlainProcess] = []

    def seat(self, manifest: BotManifest, label: str) -> Seat:
        launcher = PlainLauncher(manifest, self.logs, label)

        def launch(env: dict[str, str], socket_dir: Path) -> PlainProcess:
            process = launcher(env, socket_dir)
            self.processes.append(process)
            return process

        return launch

    def assert_none_left(self) -> None:
        deadline = time.monotonic() + 5
        for process in self.processes:
            assert process.poll() is not None, "the bot's main process is still running"
            while True:
                try:
                    os.killpg(process.pgid, 0)
                except ProcessLookupError:
                    break
                if time.monotonic() > deadline:
                    pytest.fail(f"process group {process.pgid} still has processes")
                time.sleep(0.05)


@pytest.fixture
def tracker(tmp_path: Path) -> Tracker:
    tracker = Tracker(tmp_path / "bot-output")
    yield tracker
    with contextlib.suppress(Exception):
        for process in tracker.processes:
            process.kill()


def play(seats: list[Seat], seed: int = 1, *, log: Path | None = None,
         options: RuleOptions | None = None, limits: Limits | None = None) -> MatchOutcome:
    spec = MatchSpec(f"test-{seed}", seed, len(seats), options or RuleOptions(),
                     limits or Limits(decision_deadline=0.3, time_bank=0.0, hello_timeout=3.0),
                     log)
    return eventloop.run(run_match(spec, seats))


def resident() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class PeakMemory:
    """The highest resident memory seen while the block runs, sampled every 5 ms."""

    def __init__(self) -> None:
        self.before = resident()
        self.peak = self.before
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.stop.wait(0.005):
            self.peak = max(self.peak, resident())

    def __enter__(self) -> PeakMemory:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()

    @property
    def growth(self) -> int:
        return self.peak - self.before
