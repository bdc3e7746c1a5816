"""The docker backend's command line (no Docker engine on these machines)."""

from __future__ import annotations

import sys
from pathlib import Path

from arena.sandbox import BotManifest, SandboxLimits
from arena.sandbox.docker import (
    client_env,
    container_argv,
    container_env,
    docker_command,
    image_for,
)

FOLDER = Path("/srv/bots/greedy")
BOT = BotManifest(folder=FOLDER, name="greedy", version="1.0", language="python",
                  run=("python3", "bot.py"))
SOCKETS = Path("/tmp/arena-match-x1")
ENV = {"ARENA_ADDRESS": f"unix:{SOCKETS}/referee.sock", "ARENA_TOKEN": "t0k3n",
       "ARENA_SEAT": "1"}


def option_values(command: list[str], option: str) -> list[str]:
    return [command[i + 1] for i, arg in enumerate(command) if arg == option]


def command(limits: SandboxLimits | None = None, *, build: bool = False) -> list[str]:
    return docker_command(BOT, [sys.executable, "bot.py"], ENV, SOCKETS,
                          limits or SandboxLimits(), name="arena-1", uid=1_600_000_123,
                          image="uno-arena/bot-python:1", build=build)


def test_run_command_isolates_and_limits() -> None:
    argv = command(SandboxLimits(memory_mib=512, processes=32, cpu_seconds=60,
                                        cpu_cores=1.5, open_files=256, file_size_mib=8,
                                        tmpfs_mib=32))
    assert argv[:3] == ["docker", "run", "--rm"]
    assert "--init" in argv and "--read-only" in argv
    assert option_values(argv, "--network") == ["none"]
    assert option_values(argv, "--memory") == ["512m"]
    assert option_values(argv, "--memory-swap") == ["512m"]  # no swap beyond the cap
    assert option_values(argv, "--pids-limit") == ["32"]
    assert option_values(argv, "--cpus") == ["1.5"]
    assert option_values(argv, "--ulimit") == [
        "cpu=60:65", "nofile=256:256", f"fsize={8 * 1024 * 1024}:{8 * 1024 * 1024}", "core=0:0"]
    assert option_values(argv, "--tmpfs") == ["/tmp:rw,nosuid,nodev,size=32m,mode=1777"]
    assert option_values(argv, "--user") == ["1600000123:1600000123"]
    assert option_values(argv, "--cap-drop") == ["ALL"]
    assert option_values(argv, "--security-opt") == ["no-new-privileges"]
    assert option_values(argv, "--name") == ["arena-1"]


def test_bot_folder_and_socket_are_read_only_mounts() -> None:
    argv = command()
    assert option_values(argv, "--volume") == [f"{FOLDER}:/bot:ro",
                                                f"{SOCKETS}:/run/arena:ro"]
    assert option_values(argv, "--workdir") == ["/bot"]


def test_image_then_command_with_the_images_interpreter() -> None:
    argv = command()
    image = argv.index("uno-arena/bot-python:1")
    assert argv[image + 1:] == ["python3", "bot.py"]
    assert container_argv(BOT, [sys.executable, f"{FOLDER}/bot.py", "x"]) == [
        "python3", "/bot/bot.py", "x"]


def test_secrets_are_passed_by_name_not_on_the_command_line() -> None:
    argv = command()
    assert "t0k3n" not in " ".join(argv)
    assert set(option_values(argv, "--env")) >= {"ARENA_TOKEN", "ARENA_ADDRESS", "ARENA_SEAT",
                                                  "HOME", "PATH"}
    assert container_env(ENV, SOCKETS) == option_values(argv, "--env")
    env = client_env(ENV, SOCKETS)
    assert env["ARENA_TOKEN"] == "t0k3n"
    assert env["ARENA_ADDRESS"] == "unix:/run/arena/referee.sock"
    assert env["HOME"] == "/tmp"


def test_build_gets_a_writable_folder_and_network_only_when_allowed() -> None:
    argv = command(build=True)
    assert f"{FOLDER}:/bot:rw" in option_values(argv, "--volume")
    assert option_values(argv, "--network") == ["none"]
    assert option_values(argv, "--memory") == ["2048m"]  # the build limits
    online = command(SandboxLimits(build_network=True), build=True)
    assert option_values(online, "--network") == ["bridge"]
    assert option_values(command(SandboxLimits(build_network=True)),
                         "--network") == ["none"], "the bot itself never gets the network"


def test_each_language_has_its_runtime_image() -> None:
    def image(language: str, protocol: str = "grpc") -> str:
        return image_for(BotManifest(folder=FOLDER, name="b", version="1", language=language,
                                     run=("x",), protocol=protocol))

    assert image("python") == "uno-arena/bot-python:1"
    assert image("javascript") == "uno-arena/bot-node:1"
    assert image("cpp") == "uno-arena/bot-cpp:1"
    assert image("stdio-json", "stdio-json") == "uno-arena/bot-python:1"
    for name in ("python", "node", "cpp"):
        dockerfile = Path(__file__).resolve().parents[1] / "docker" / name / "Dockerfile"
        assert dockerfile.is_file(), dockerfile
