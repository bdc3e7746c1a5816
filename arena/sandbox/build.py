"""A bot's optional build step (``build`` in ``bot.toml``), run once, sandboxed, before use.

The build never writes into the entrant's folder. It runs on a private copy, made under
``<log_dir>/builds/<name>-<version>-<content hash>/`` (the copy leaves out ``__pycache__``
and the names the folder's ``.gitignore`` lists at its top level, such as ``build/`` or
``node_modules/``, so a build starts from the sources, not from the author's own build
tree), in the same sandbox as the bot, with that copy as its writable working folder
(``/bot``), the build limits (``SandboxLimits.for_build``: more memory, processes and disk)
and its own wall-clock limit (``build_seconds``). Builds are offline unless the limits say
``build_network``: a build then needs its dependencies in the bot folder.

The copy, once built, is the folder the bot runs from (read-only, like any bot folder); a
later ``prepare`` of the same bot content reuses it, so a season builds each entrant once.
A failing build raises ``BuildError`` naming the bot and quoting the end of its output.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import fnmatch
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from arena.sandbox.launcher import StartedProcess, is_root
from arena.sandbox.manifest import BotManifest, ManifestError, ignored_patterns

BUILT_MARKER = ".arena-built"
TAIL_LINES = 20


class BuildError(ManifestError):
    """A bot whose build step failed or timed out: that entrant cannot play."""


def copy_sources(folder: Path, target: Path) -> None:
    """Copy the bot folder to ``target``, leaving out what its .gitignore names."""
    patterns = ignored_patterns(folder)

    def ignore(directory: str, names: list[str]) -> set[str]:
        relative = Path(directory).relative_to(folder)
        skipped = set()
        for name in names:
            path = (relative / name).as_posix()
            if any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(path, p) for p in patterns):
                skipped.add(name)
        return skipped

    shutil.copytree(folder, target, ignore=ignore, symlinks=True)


def _chown_tree(folder: Path, uid: int, gid: int) -> None:
    for root, directories, files in os.walk(folder):
        for name in [*directories, *files]:
            with contextlib.suppress(OSError):
                os.lchown(os.path.join(root, name), uid, gid)
    os.chown(folder, uid, gid)


def _make_readable(folder: Path) -> None:
    """Others may read the built folder (the bot runs under a uid of its own)."""
    for root, directories, files in os.walk(folder):
        for name in directories:
            path = os.path.join(root, name)
            with contextlib.suppress(OSError):
                os.chmod(path, os.stat(path).st_mode | 0o755)
        for name in files:
            path = os.path.join(root, name)
            with contextlib.suppress(OSError):
                if not os.path.islink(path):
                    os.chmod(path, os.stat(path).st_mode | 0o444)
    os.chmod(folder, os.stat(folder).st_mode | 0o755)


def _tail(process: StartedProcess) -> str:
    lines: list[str] = []
    for path in (process.stdout_path, process.stderr_path):
        with contextlib.suppress(OSError):
            lines += path.read_text(errors="replace").splitlines()
    return "\n".join(f"  | {line}" for line in lines[-TAIL_LINES:]) or "  (no output)"


def build_folder(manifest: BotManifest, log_dir: Path) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{manifest.name}-{manifest.version}")
    return log_dir / "builds" / f"{safe}-{manifest.content_hash()}"


def build(manifest: BotManifest, start: Callable[[BotManifest, str], StartedProcess],
          log_dir: Path, build_seconds: float) -> BotManifest:
    """Build ``manifest`` once (see the module documentation) and return the manifest of the
    built copy. ``start(built, label)`` starts the build command of the copy in the sandbox
    with a writable folder (``SandboxLauncher.start(..., build=True)``)."""
    if not manifest.build:
        return manifest
    target = build_folder(manifest, log_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    built = dataclasses.replace(manifest, folder=target)
    with open(target.with_name(target.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel workers: one builds, the others reuse
        if (target / BUILT_MARKER).exists():
            return built
        shutil.rmtree(target, ignore_errors=True)
        copy_sources(manifest.folder, target)
        _make_readable(target)
        started = time.monotonic()
        process = start(built, f"build-{target.name}")
        try:
            code: int | None = process.wait(timeout=build_seconds)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            process.kill()
        seconds = time.monotonic() - started
        if is_root():  # take the copy back from the build's uid
            _chown_tree(target, os.getuid(), os.getgid())
        if code != 0:
            what = (f"timed out after {build_seconds:g} s" if code is None else
                    f"failed with exit code {code} after {seconds:.1f} s")
            raise BuildError(
                f"bot {manifest.label} ({manifest.folder}): the build step "
                f"{list(manifest.build)} {what}; the last lines of its output "
                f"(all of it in {process.stdout_path.parent}/):\n{_tail(process)}")
        _make_readable(target)
        (target / BUILT_MARKER).write_text(f"built in {seconds:.1f} s\n")
    return built


def hand_over(folder: Path, uid: int) -> None:
    """Give a build's private copy to the build's uid, so the sandboxed build can write it."""
    _chown_tree(folder, uid, uid)
