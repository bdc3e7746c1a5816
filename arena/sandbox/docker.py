"""The docker backend, for production hosts with a Docker engine (images in ``docker/``).

Each bot runs in a throw-away container of its language's runtime image: no network, a
read-only root, a private size-capped tmpfs at /tmp, the bot folder read-only at /bot, the
match's socket folder read-only at /run/arena, no capabilities, no-new-privileges, a uid of
its own, Docker's default seccomp profile, and the memory, pids, CPU and rlimit caps of
``SandboxLimits``. The protocol variables (the token among them) are passed by name
(``--env NAME``) from the docker client's environment, so they are not on its command line.

Our machines have no Docker engine; ``docker_command`` is a pure function and is what the
unit tests check.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.sandbox.bubblewrap import unreadable_by_others
from arena.sandbox.build import hand_over
from arena.sandbox.environment import BOT_ENV, HOST_ONLY
from arena.sandbox.launcher import (
    Backend,
    SandboxError,
    SandboxLauncher,
    allocate_uid,
    is_root,
)
from arena.sandbox.limits import MIB, SandboxLimits
from arena.sandbox.manifest import BotManifest
from arena.sandbox.plain import copy_capped
from arena.text import file_label

IMAGE_PREFIX = "uno-arena/bot-"
IMAGES = {"python": "python", "stdio-json": "python", "javascript": "node", "cpp": "cpp",
          "other": "python"}
"""The runtime image of each language (``docker/<name>/Dockerfile``). stdio-json bots run
behind the Python bridge, so their image is the Python one (it has bash too)."""
BOT_DIR = "/bot"
SOCKET_DIR = "/run/arena"


def image_for(manifest: BotManifest, prefix: str = IMAGE_PREFIX, tag: str = "1") -> str:
    return f"{prefix}{IMAGES.get(manifest.language, 'python')}:{tag}"


def container_argv(manifest: BotManifest, argv: list[str]) -> list[str]:
    """The command inside the container: the referee's interpreter is the image's python3,
    and paths into the bot folder are paths under /bot."""
    folder = str(manifest.folder)
    inside = []
    for arg in argv:
        if arg == sys.executable:
            arg = "python3"
        elif arg == folder or arg.startswith(folder + "/"):
            arg = BOT_DIR + arg[len(folder):]
        inside.append(arg)
    return inside


def docker_command(manifest: BotManifest, argv: list[str], env: Mapping[str, str],
                   socket_dir: Path | None, limits: SandboxLimits, *, name: str, uid: int,
                   image: str, build: bool = False, docker: str = "docker") -> list[str]:
    """The ``docker run`` command line for one bot (or its build step, with ``build``)."""
    if build:
        limits = limits.for_build()
    network = "bridge" if build and limits.build_network else "none"
    file_size = limits.file_size_mib * MIB
    command = [
        docker, "run", "--rm", "--init", "--name", name, "--hostname", "arena-bot",
        "--network", network, "--read-only",
        "--tmpfs", f"/tmp:rw,nosuid,nodev,size={limits.tmpfs_mib}m,mode=1777",
        "--memory", f"{limits.memory_mib}m", "--memory-swap", f"{limits.memory_mib}m",
        "--pids-limit", str(limits.processes), "--cpus", f"{limits.cpu_cores:g}",
        "--ulimit", f"cpu={limits.cpu_seconds}:{limits.cpu_seconds + 5}",
        "--ulimit", f"nofile={limits.open_files}:{limits.open_files}",
        "--ulimit", f"fsize={file_size}:{file_size}", "--ulimit", "core=0:0",
        "--user", f"{uid}:{uid}", "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges",
        "--volume", f"{manifest.folder}:{BOT_DIR}:{'rw' if build else 'ro'}",
        "--workdir", BOT_DIR,
    ]
    if socket_dir is not None:
        command += ["--volume", f"{socket_dir}:{SOCKET_DIR}:ro"]
    for variable in container_env(env, socket_dir):
        command += ["--env", variable]
    return [*command, image, *container_argv(manifest, argv)]


def container_env(env: Mapping[str, str], socket_dir: Path | None) -> list[str]:
    """Names of the variables the container gets from the client's environment."""
    return sorted({*BOT_ENV, *env} - set(HOST_ONLY))


def client_env(env: Mapping[str, str], socket_dir: Path | None) -> dict[str, str]:
    """The docker client's environment: the bot's variables, ARENA_ADDRESS rewritten to the
    socket's path inside the container, plus what the client itself needs."""
    values = {name: value for name, value in {**BOT_ENV, **env}.items()
              if name not in HOST_ONLY}
    address = values.get("ARENA_ADDRESS", "")
    if socket_dir is not None and address.startswith("unix:") and \
            Path(address[5:]).parent == socket_dir:
        values["ARENA_ADDRESS"] = f"unix:{SOCKET_DIR}/{Path(address[5:]).name}"
    for name in ("DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "DOCKER_CERT_PATH",
                 "DOCKER_TLS_VERIFY"):
        if name in os.environ:
            values[name] = os.environ[name]
    values["PATH"] = BOT_ENV["PATH"]  # the container's PATH; the client is found by path
    return values


class DockerProcess:
    """A ``docker run`` client; ``kill()`` removes the container, then the client."""

    def __init__(self, command: list[str], env: dict[str, str], name: str, log_dir: Path,
                 label: str, output_cap: int) -> None:
        log_dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.docker = command[0]
        label = file_label(label)  # it may hold the bot's name
        self.stdout_path = log_dir / f"{label}.stdout.log"
        self.stderr_path = log_dir / f"{label}.stderr.log"
        self.popen = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      start_new_session=True)
        self._threads = [
            threading.Thread(target=copy_capped, daemon=True, args=(stream, path, output_cap))
            for stream, path in ((self.popen.stdout, self.stdout_path),
                                 (self.popen.stderr, self.stderr_path))]
        for thread in self._threads:
            thread.start()

    def poll(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.popen.wait(timeout)

    def kill(self) -> None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run([self.docker, "kill", self.name], capture_output=True, timeout=20,
                           check=False)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        for thread in self._threads:
            thread.join(timeout=2)


class DockerLauncher(SandboxLauncher):
    """Start a bot in a container of its language's runtime image."""

    backend = Backend.DOCKER

    def __init__(self, manifest: BotManifest, log_dir: Path, label: str,
                 limits: SandboxLimits, *, image: str | None = None,
                 docker: str | None = None) -> None:
        super().__init__(manifest, log_dir, label, limits)
        self.cgroup_host = None  # the engine makes the cgroups
        self.warnings = []
        self.image = image or image_for(manifest)
        found = docker or shutil.which("docker")
        if found is None:
            raise SandboxError("docker is not installed or not on PATH; the docker sandbox "
                               "needs a Docker engine (see docker/README.md)")
        self.docker = found
        self._count = 0
        unreadable = unreadable_by_others(manifest.folder)
        if unreadable:
            raise SandboxError(
                f"{manifest.home}: {unreadable} cannot be read by other users, and the bot's "
                f"container runs under a uid of its own: chmod -R o+rX {manifest.home}")

    def isolation(self) -> dict[str, Any]:
        return {"engine": "docker", "image": self.image, "network": "none",
                "uid": "one per bot", "filesystem": "read-only image, bot folder read-only, "
                "private tmpfs /tmp", "seccomp": "Docker's default profile"}

    def start(self, argv: list[str], env: dict[str, str], socket_dir: Path | None, *,
              build: bool = False) -> DockerProcess:
        self._count += 1
        label = f"{self.label}.build" if build else self.label
        name = f"arena-{os.getpid()}-{self._count}-{abs(hash(label)) % 10**8}"
        uid = allocate_uid()
        if build and is_root():
            hand_over(self.manifest.folder, uid)
        command = docker_command(self.manifest, argv, env, socket_dir, self.limits,
                                 name=name, uid=uid, image=self.image, build=build,
                                 docker=self.docker)
        limits = self.limits.for_build() if build else self.limits
        return DockerProcess(command, client_env(env, socket_dir), name, self.log_dir, label,
                             limits.output_bytes)
