"""What every sandbox backend shares: the launcher interface, resource limits, uids.

A launcher is built once per seat and match (``make_launcher`` in ``arena.sandbox``); the
referee calls it with the bot's protocol environment and the match's socket folder. Its
``describe()`` is what goes into the match log header (``MatchSpec.sandbox``).
"""

from __future__ import annotations

import enum
import os
import resource
import secrets
from pathlib import Path
from typing import Any, Protocol

from arena.sandbox import cgroups
from arena.sandbox.limits import MIB, SandboxLimits
from arena.sandbox.manifest import BotManifest
from arena.sandbox.plain import resolve_command
from arena.sandbox.process import Launcher

UID_BASE = 1_600_000_000
"""Bots run under uids picked at random from [UID_BASE, UID_BASE + UID_SPAN): far above
any user or subordinate-uid range, and a fresh one per process tree, so RLIMIT_NPROC counts
that bot alone and no bot can signal or read another."""
UID_SPAN = 100_000_000

class Backend(enum.StrEnum):
    BUBBLEWRAP = "bubblewrap"
    FALLBACK = "fallback"
    PLAIN = "plain"
    DOCKER = "docker"


class StartedProcess(Protocol):
    """A started sandbox, as the referee (``poll``, ``kill``) and the build step see it."""

    stdout_path: Path
    stderr_path: Path

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


class SandboxError(RuntimeError):
    """A sandbox that cannot be used here; the message says why and what to install."""


def allocate_uid() -> int:
    return UID_BASE + secrets.randbelow(UID_SPAN)


def is_root() -> bool:
    return os.geteuid() == 0


def rlimits(limits: SandboxLimits, *, memory_capped: bool, count_processes: bool
            ) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) for the launcher helper to set; inherited by the bot."""
    values = [
        # SIGXCPU at the soft limit, SIGKILL five seconds of CPU later.
        (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5),
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        (resource.RLIMIT_FSIZE, limits.file_size_mib * MIB, limits.file_size_mib * MIB),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if count_processes:
        values.append((resource.RLIMIT_NPROC, limits.processes, limits.processes))
    if not memory_capped:
        # Address space counts reservations (thread stacks, malloc arenas), not memory: twice
        # the cap keeps a gRPC Python bot alive. Node and the JVM need more than this allows.
        address_space = 2 * limits.memory_bytes
        values.append((resource.RLIMIT_AS, address_space, address_space))
    return values


class SandboxLauncher:
    """Base of the process backends: starts ``resolve_command(manifest)`` in the sandbox."""

    backend: Backend

    def __init__(self, manifest: BotManifest, log_dir: Path, label: str,
                 limits: SandboxLimits) -> None:
        self.manifest = manifest
        self.log_dir = log_dir
        self.label = label
        self.limits = limits
        self.warnings: list[str] = []
        self.cgroup_host = cgroups.detect()
        if self.cgroup_host is None:
            self.warnings.append(
                "no cgroup available: memory is capped by RLIMIT_AS (address space, at twice "
                "the memory limit; Node and the JVM may fail), processes by RLIMIT_NPROC only, "
                "no CPU quota")
        off_turn = self.off_turn()
        if off_turn == "run":
            why = ("off_turn = run" if limits.off_turn == "run" else
                   f"no cgroup to {limits.off_turn} it")
            self.warnings.append(f"bots run at full speed off turn ({why}): a bot can take "
                                 "CPU from the seat that is thinking, and watch it think")

    def off_turn(self) -> str:
        """What happens to a bot off turn here: the limits' choice, if a cgroup allows it."""
        needed = "freezer" if self.limits.off_turn == "freeze" else "cpu"
        if self.cgroup_host is None or needed not in self.cgroup_host.parents:
            return "run"
        return self.limits.off_turn

    def __call__(self, env: dict[str, str], socket_dir: Path) -> StartedProcess:
        return self.start(resolve_command(self.manifest), env, socket_dir)

    def start(self, argv: list[str], env: dict[str, str], socket_dir: Path | None, *,
              build: bool = False) -> StartedProcess:
        """Start ``argv`` in the sandbox; ``build`` gives it the build limits and a writable
        bot folder (the folder is then a private copy, see ``arena.sandbox.build``)."""
        raise NotImplementedError

    def make_cgroups(self, limits: SandboxLimits, label: str) -> cgroups.BotCgroups | None:
        if self.cgroup_host is None:
            return None
        try:
            return Launcher.get().bot_cgroups(self.cgroup_host, limits, label)
        except OSError as error:
            warning = f"could not create the bot's cgroup ({error}); RLIMIT_AS instead"
            if warning not in self.warnings:
                self.warnings.append(warning)
            return None

    def isolation(self) -> dict[str, Any]:
        return {"cgroup": self.cgroup_host.describe() if self.cgroup_host else None,
                "off_turn": {"throttle": "throttled to 1% of a core (cgroup CPU quota)",
                             "freeze": "frozen (cgroup freezer)",
                             "run": "running"}[self.off_turn()]}

    def describe(self) -> dict[str, Any]:
        """The record for the match log header: backend, limits, isolation, warnings."""
        return {"backend": str(self.backend), "limits": self.limits.to_record(),
                "isolation": self.isolation(), "warnings": list(self.warnings)}
