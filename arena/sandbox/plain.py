"""The plain launcher: a bot in its own process group, no isolation beyond that.

Its output goes to per-bot log files with a size cap; the whole group is killed at the end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from arena.sandbox.environment import BOT_ENV
from arena.sandbox.manifest import BotManifest
from arena.text import file_label

OUTPUT_CAP_BYTES = 1024 * 1024


def copy_capped(source: IO[bytes], target: Path, cap: int) -> None:
    """Copy a pipe to a file, keeping the first ``cap`` bytes and draining the rest. A file
    that cannot be written (a full disk) stops the copy, not the draining."""
    written = 0
    try:
        out: IO[bytes] | None = open(target, "wb")  # noqa: SIM115 - closed below
    except OSError:
        out = None
    while chunk := source.read(65536):
        if out is not None and written < cap:
            keep = chunk[: cap - written]
            try:
                out.write(keep)
                written += len(keep)
                if written >= cap:
                    out.write(b"\n[output truncated by the referee]\n")
                    out.flush()
            except OSError:
                with contextlib.suppress(OSError):
                    out.close()
                out = None
    if out is not None:
        with contextlib.suppress(OSError):
            out.close()
    source.close()


def resolve_command(manifest: BotManifest) -> list[str]:
    """The run command; ``python``/``python3`` mean the referee's own interpreter, so a
    Python bot finds the ``arena`` SDK wherever the platform is installed. A bot with
    ``protocol = "stdio-json"`` runs behind the stdio bridge (``arena.bots.stdio_bridge``),
    which speaks gRPC to the referee and JSON lines to the bot."""
    argv = list(manifest.run)
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    if manifest.protocol == "stdio-json":
        argv = [sys.executable, "-m", "arena.bots.stdio_bridge", "--name", manifest.name,
                "--version", manifest.version,
                *(["--variants", ",".join(manifest.variants)] if manifest.variants else []),
                "--", *argv]
    return argv


class PlainProcess:
    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], log_dir: Path,
                 label: str, output_cap: int = OUTPUT_CAP_BYTES) -> None:
        log_dir.mkdir(parents=True, exist_ok=True)
        label = file_label(label)  # it may hold the bot's name
        self.stdout_path = log_dir / f"{label}.stdout.log"
        self.stderr_path = log_dir / f"{label}.stderr.log"
        self.popen = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        self.pgid = self.popen.pid
        self._threads = [
            threading.Thread(target=copy_capped, daemon=True,
                             args=(stream, log_dir / f"{label}.{name}.log", output_cap))
            for name, stream in (("stdout", self.popen.stdout), ("stderr", self.popen.stderr))
        ]
        for thread in self._threads:
            thread.start()

    def poll(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.popen.wait(timeout)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        for thread in self._threads:
            thread.join(timeout=2)


class PlainLauncher:
    """Start a bot from its manifest as a plain process group."""

    def __init__(self, manifest: BotManifest, log_dir: Path, label: str) -> None:
        self.manifest = manifest
        self.log_dir = log_dir
        self.label = label

    def describe(self) -> dict[str, object]:
        """The record for the match log header."""
        return {"backend": "plain", "limits": None, "isolation": None,
                "warnings": ["PLAIN: no sandbox; the bot runs as the referee's user with no "
                             "isolation and no resource limits"]}

    def __call__(self, env: dict[str, str], socket_dir: Path) -> PlainProcess:
        # The host's PATH: a plain bot runs with the host's tools, unconfined.
        full_env = {**BOT_ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
        return PlainProcess(resolve_command(self.manifest), self.manifest.folder, full_env,
                            self.log_dir, self.label)
