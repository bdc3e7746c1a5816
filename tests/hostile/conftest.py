"""The hostile-bot arena: a hostile bot and a sample bot, both sandboxed, in a real match.

Everything the attacks aim at lives in a folder under the host's /tmp, laid out as the
README asks an organiser to lay out a league: the entrants in a folder others cannot enter
(each entrant's own folder readable), the match log and the bots' output in a folder only
the referee may enter (as ``arena play`` and ``arena season run`` make them), a root-only
secret, and a world-writable folder. The fallback runs with the organiser's opt-in
(``trusted``): the suite asserts what it contains and what it does not.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.referee import eventloop
from arena.referee.limits import Limits
from arena.referee.match import MatchOutcome, MatchSpec, Seat, run_match
from arena.rules.options import RuleOptions
from arena.sandbox import (
    BotManifest,
    SandboxLimits,
    StartedProcess,
    load_manifest,
    make_launcher,
    sandbox_record,
)
from arena.sandbox.process import SandboxProcess

ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).resolve().parent / "bots"
RAWBOT = ROOT / "tests" / "referee" / "bots" / "rawbot.py"
BACKENDS = ["bubblewrap", "fallback"]

SYSTEM_TARGETS = ("/usr/pwned", "/etc/pwned", "/pwned", "/root/pwned")
"""Host files the hostile bot tries to create (``write-outside-tmp``)."""
LATE_OPPONENT = ("disconnect-reconnect",)
"""Attacks made before the match starts: the opponent says hello a while later, so the
match (and the attacker's sandbox) does not end before the attack has been tried."""
DELAYED_START = ("import runpy, sys, time; time.sleep(1.5); sys.argv = sys.argv[1:]; "
                 "runpy.run_path(sys.argv[0], run_name='__main__')")
TARGET = RuleOptions(target_score=100)
CLOCK = Limits(decision_deadline=0.5, time_bank=2.0, strike_limit=3, hello_timeout=8.0)
LIMITS = SandboxLimits()


def tree_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError, IndexError):
            if marker.encode() in Path(entry.path, "cmdline").read_bytes():
                state = Path(entry.path, "status").read_text().split("\nState:")[1].split()[0]
                if state not in ("Z", "X"):
                    found.append(int(entry.name))
    return found


@dataclass
class HostileArena:
    backend: str
    world: Path
    marker: str = field(default_factory=lambda: f"arena-hostile-{uuid.uuid4().hex[:12]}")
    processes: list[StartedProcess] = field(default_factory=list)
    launchers: list[object] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    outcome: MatchOutcome | None = None
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self.world.chmod(0o755)
        self.host = self.world / "host"
        self.host.mkdir(mode=0o777)
        self.host.chmod(0o777)  # world-writable, like the host's /tmp
        self.host_file = self.host / "pwned"
        self.secret_file = self.world / "secret.key"
        self.secret_file.write_text("the organiser's key\n")
        self.secret_file.chmod(0o600)
        self.logs = self.world / "logs"
        self.logs.mkdir(mode=0o700)
        self.log_path = self.logs / "match.jsonl.gz"
        entrants = self.world / "entrants"
        entrants.mkdir(mode=0o700)
        self.opponent_folder = entrants / "opponent"
        shutil.copytree(ROOT / "sample_bots" / "python" / "greedy", self.opponent_folder)
        (self.opponent_folder / "secret.txt").write_text("the opponent's secret\n")
        self.hostile_folder = entrants / "hostile"
        self.hostile_folder.mkdir()
        shutil.copy(BOTS / "hostile.py", self.hostile_folder)
        shutil.copy(RAWBOT, self.hostile_folder)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.setblocking(False)
        self.opponent_hash = tree_hash(self.opponent_folder)

    def close(self) -> None:
        for process in self.processes:
            with contextlib.suppress(Exception):
                process.kill()
        for path in SYSTEM_TARGETS:  # should an attack have worked, leave the host clean
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                os.unlink(path)
        self.listener.close()
        shutil.rmtree(self.world, ignore_errors=True)

    # -- playing -------------------------------------------------------------------------

    def _seat(self, manifest: BotManifest, label: str, limits: SandboxLimits) -> Seat:
        launcher = make_launcher(self.backend, manifest, limits, self.logs, label,
                                 trusted=True)
        self.launchers.append(launcher)

        def launch(env: dict[str, str], socket_dir: Path) -> StartedProcess:
            process = launcher(env, socket_dir)
            self.processes.append(process)
            return process

        return launch

    def play(self, mode: str, *, limits: SandboxLimits = LIMITS,
             clock: Limits = CLOCK) -> MatchOutcome:
        config: dict[str, Any] = {
            "mode": mode, "host_file": str(self.host_file), "marker": self.marker,
            "other_bot": str(self.opponent_folder), "log_path": str(self.log_path),
            "port": self.listener.getsockname()[1], "checkout": str(ROOT),
            "secret_file": str(self.secret_file)}
        (self.hostile_folder / "attack.json").write_text(json.dumps(config))
        hostile = BotManifest(folder=self.hostile_folder, name="hostile", version=mode,
                              language="python", run=("python3", "hostile.py", self.marker))
        opponent = load_manifest(self.opponent_folder)
        run = (*opponent.run, self.marker)
        if mode in LATE_OPPONENT:  # the attack happens while the referee waits for it
            assert run[0] in ("python", "python3")
            run = (run[0], "-c", DELAYED_START, *run[1:])
        opponent = BotManifest(folder=opponent.folder, name=opponent.name,
                               version=opponent.version, language=opponent.language,
                               run=run)
        seats = [self._seat(hostile, "hostile", limits), self._seat(opponent, "opponent", limits)]
        spec = MatchSpec(f"hostile-{mode}", 7, 2, TARGET, clock, self.log_path,
                         sandbox=sandbox_record(self.launchers))
        started = time.monotonic()
        self.outcome = eventloop.run(run_match(spec, seats))
        self.seconds = time.monotonic() - started
        with contextlib.suppress(BlockingIOError):
            while True:
                connection, address = self.listener.accept()
                self.accepted.append(str(address))
                connection.close()
        return self.outcome

    # -- what happened -------------------------------------------------------------------

    @property
    def hostile_process(self) -> StartedProcess:
        return self.processes[0]

    def output(self, stream: str = "stdout") -> str:
        return (self.logs / f"hostile.{stream}.log").read_text(errors="replace")

    def reports(self) -> dict[str, dict[str, Any]]:
        """The hostile bot's REPORT lines, by what it tried."""
        found = {}
        for line in self.output().splitlines():
            if line.startswith("REPORT "):
                record = json.loads(line[7:])
                found[record["what"]] = record
        return found

    def assert_match_completed(self) -> None:
        outcome = self.outcome
        assert outcome is not None
        assert max(outcome.scores) >= TARGET.target_score or outcome.round_limit_reached
        opponent = outcome.seats[1]
        assert opponent.connected and opponent.name == "greedy", opponent
        assert opponent.faults == [] and not opponent.disqualified, opponent.faults
        assert tree_hash(self.opponent_folder) == self.opponent_hash, "the other bot changed"

    def assert_none_left(self) -> None:
        """Every process of both bots is gone: the sandboxes' own processes, anything
        under the bots' uids or in their cgroups, anything carrying the test's marker."""
        deadline = time.monotonic() + 5
        while True:
            left: dict[str, object] = {}
            for process in self.processes:
                assert process.poll() is not None, "a sandbox is still running"
                if isinstance(process, SandboxProcess) and process.leftover_pids():
                    left[process.label] = process.leftover_pids()
            if marked := processes_with(self.marker):
                left["marker"] = marked
            if not left:
                return
            if time.monotonic() > deadline:
                pytest.fail(f"processes left behind: {left}")
            time.sleep(0.05)

    def sandbox_header(self) -> dict[str, Any]:
        from arena.referee.log import read_log

        header = next(r for r in read_log(self.log_path) if r["type"] == "header")
        return dict(header["sandbox"])


@pytest.fixture(params=BACKENDS)
def arena(request: pytest.FixtureRequest) -> Iterator[HostileArena]:
    world = Path(tempfile.mkdtemp(prefix="arena-hostile-", dir="/tmp"))
    arena = HostileArena(request.param, world)
    try:
        yield arena
    finally:
        arena.close()

