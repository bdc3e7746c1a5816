"""docker/compose.yaml: it parses, and the commands it runs are real ``dask``/``arena``
commands, run here for real on loopback (no Docker engine on these machines)."""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from arena.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker" / "compose.yaml"


def compose() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(COMPOSE.read_text())


def driver_commands() -> list[list[str]]:
    command = compose()["services"]["driver"]["command"]
    assert command[:2] == ["sh", "-c"]
    return [shlex.split(part) for part in command[2].split("&&")]


def test_compose_parses_with_scheduler_workers_and_driver() -> None:
    services = compose()["services"]
    assert set(services) == {"scheduler", "worker", "driver"}
    for name in services:
        assert "seccomp=unconfined" in services[name]["security_opt"]
    assert services["worker"]["command"][:2] == ["dask", "worker"]
    assert [c[:3] for c in driver_commands()] == [["arena", "season", "run"],
                                                  ["arena", "report", "sample_bots/season.toml"]]
    for command in driver_commands():
        build_parser().parse_args(command[1:])  # a real arena command line


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_the_compose_commands_run_a_season_on_a_real_scheduler(tmp_path: Path) -> None:
    services = compose()["services"]
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler_cmd = [("--port" if a == "--port" else str(port) if a == "8786" else a)
                     for a in services["scheduler"]["command"]]
    scheduler_cmd = [a if a != ":8787" else ":0" for a in scheduler_cmd]
    worker_cmd = [address if a == "tcp://scheduler:8786" else a
                  for a in services["worker"]["command"]]
    bin_dir = Path(sys.executable).parent
    processes = [subprocess.Popen([str(bin_dir / scheduler_cmd[0]), *scheduler_cmd[1:]],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        time.sleep(2)
        processes.append(subprocess.Popen([str(bin_dir / worker_cmd[0]), *worker_cmd[1:]],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        season = tmp_path / "season.toml"
        text = (ROOT / "sample_bots" / "season.toml").read_text()
        # The Python sample bots only: the commands are under test, not the builds.
        text = re.sub(r"^entrants = .*$", f'entrants = ["{ROOT}/sample_bots/python/*"]', text,
                      flags=re.MULTILINE)
        text = text.replace("matches_per_group = 10", "matches_per_group = 2")
        text = text.replace('folder = "../runs/sample"', f'folder = "{tmp_path}/runs"')
        text = text.replace('report = "../reports/sample"', f'report = "{tmp_path}/site"')
        season.write_text(text)
        for command in driver_commands():
            command = [str(season) if a == "sample_bots/season.toml" else
                       address if a == "tcp://scheduler:8786" else a for a in command]
            result = subprocess.run([sys.executable, "-m", "arena.cli", *command[1:]],
                                    capture_output=True, text=True, timeout=300)
            assert result.returncode == 0, result.stdout + result.stderr
        assert (tmp_path / "site" / "index.html").exists()
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=20)
