"""A bot's optional build step (``build`` in ``bot.toml``), run once, sandboxed, before use.

The build never writes into the entrant's folder, and nothing it leaves behind is ever
followed, written or changed by the referee (which runs as root):

1. a private copy of exactly the sources its content hash covers (leaving out
   ``__pycache__`` and what the folder's ``.gitignore`` names, such as ``build/`` or
   ``node_modules/``) is made in a fresh work folder, and handed to the build's own uid;
2. the build runs in the same sandbox as the bot, with that copy as its writable ``/bot``,
   the build limits (``SandboxLimits.for_build``) and its own wall-clock limit;
3. once every process of the build is gone, its output is packed into an archive: the walk
   opens every folder and file relative to its parent's descriptor, never following a
   link (``os.fwalk``, ``O_NOFOLLOW``), and keeps only folders and regular files, with
   normalised modes (0755, or 0644 for a file nobody may execute) and owner; symbolic
   links, pipes, sockets and devices are left out (named in the build's log), a hard link
   is just another copy of its content; then the work folder is deleted (``rmtree``, which
   does not follow links either);
4. the archive is unpacked (``tarfile``'s ``data`` filter) into a fresh folder that the
   build never had access to, named by the build key, and that folder is moved into place
   in one step (``rename``): its existence says the build is complete.

The build key is the SHA-256 of the bot's sources (``BotManifest.content_digest``), its
build command, and the toolchain's identity (``toolchain_identity``): the same bot built
with the same tools is built once, and reused by every later season and process through
the build cache (``ARENA_BUILD_CACHE``, by default ``~/.cache/uno-arena/builds``); a file
lock makes parallel workers build it once. A kept build is reused only while it matches
the digest stored beside it (``<key>.sha256``); one that does not is built again. The
cache folder must be this user's, writable by no one else. A failing build raises
``BuildError`` naming the bot and quoting the end of its output.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import hashlib
import json
import os
import platform
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arena.cache import cache_folder
from arena.sandbox.launcher import StartedProcess
from arena.sandbox.manifest import (
    BotManifest,
    ManifestError,
    file_chunks,
    source_entries,
)
from arena.sandbox.offline import network_hint, offline_advice
from arena.sandbox.trees import MOST_TREE_DEPTH, MOST_TREE_PATH_BYTES, path_problem, remove_tree
from arena.text import visible

TAIL_LINES = 20
CACHE_VARIABLE = "ARENA_BUILD_CACHE"
OUTPUT_LIMIT_BYTES = 4 * 1024 ** 3
"""A build's output (its sources included) may not exceed this, nor ``OUTPUT_LIMIT_ENTRIES``
files and folders: past it, the build fails rather than fill the referee's disk."""
OUTPUT_LIMIT_ENTRIES = 200_000
DISK_RESERVE_BYTES = 1024 ** 3
DISK_POLL_SECONDS = 0.2
"""While a build runs, its disk is watched this often: the build is stopped when it has
taken more than ``OUTPUT_LIMIT_BYTES`` of it, or left it less than ``DISK_RESERVE_BYTES``
free (the output check after the build would come too late for a disk already full)."""
TOOLCHAIN_COMMANDS = ("cc", "c++", "gcc", "g++", "clang", "clang++", "cmake", "make", "go",
                      "rustc", "cargo", "java", "javac", "mvn", "node", "npm")
"""Compilers and runtimes a build may use, each known by the file it is."""
TOOLCHAIN_FILES = ("/var/lib/dpkg/status",)
"""Where a Debian host lists every installed package's version (the compilers, libraries
and runtimes a build uses): a change there is a new toolchain, and builds are redone."""


class BuildError(ManifestError):
    """A bot whose build step failed or timed out: that entrant cannot play."""


def cache_root() -> Path:
    """Where built bots are kept, across seasons and processes (``ARENA_BUILD_CACHE``)."""
    return cache_folder("builds", CACHE_VARIABLE)


@functools.cache
def toolchain_identity() -> str:
    """A hash of what a build's result depends on besides the bot: the machine, the
    referee's Python, the installed packages, the operator's extra runtimes, and each
    compiler and runtime the builds find, where it is and which file it is (its size and
    time): a Go in /usr/local, a rustup toolchain or a JDK under /opt is no Debian package,
    and upgrading one must not reuse the builds of the old."""
    from arena.sandbox.runtimes import LANGUAGE_TOOLCHAINS

    digest = hashlib.sha256()
    for part in (platform.machine(), sys.version, os.environ.get("ARENA_SANDBOX_RUNTIMES", "")):
        digest.update(part.encode() + b"\0")
    for name in TOOLCHAIN_FILES:
        with contextlib.suppress(OSError):
            digest.update(Path(name).read_bytes())
    tools = [found for name in TOOLCHAIN_COMMANDS if (found := shutil.which(name))]
    folders = {folder for find in set(LANGUAGE_TOOLCHAINS.values()) for folder in find().folders}
    tools += [str(folder / "bin" / name) for folder in sorted(folders)
              for name in TOOLCHAIN_COMMANDS]
    for tool in tools:
        with contextlib.suppress(OSError):
            path = Path(tool).resolve()
            status = path.stat()
            digest.update(f"{tool}={path}:{status.st_size}:{status.st_mtime_ns}\0".encode(
                "utf-8", "surrogateescape"))
    return digest.hexdigest()


def build_key(manifest: BotManifest) -> str:
    """The build's content address: the bot's sources, its build command, the toolchain."""
    described = json.dumps({"sources": manifest.content_digest(), "build": list(manifest.build),
                            "toolchain": toolchain_identity()}, sort_keys=True)
    return hashlib.sha256(described.encode()).hexdigest()


def copy_sources(folder: Path, target: Path, only: set[str] | None = None) -> None:
    """Copy exactly the bot's sources, what its content hash covers (``source_entries``:
    not what its .gitignore names), into ``target`` (made if missing), file by file below
    the folder, never through a link (the folder was checked by ``load_manifest``: its
    links stay inside it). ``only``: just these paths, and the folders that hold them."""
    target.mkdir(mode=0o755, exist_ok=True)
    holders = {str(Path(p).parents[i]) for p in only or () for i in range(len(Path(p).parts) - 1)}
    for entry in source_entries(folder, modes=True):
        if only is not None and entry.relative not in only and entry.relative not in holders:
            continue
        path = target / entry.relative
        if entry.kind == "dir":
            path.mkdir(mode=0o755)
        elif entry.kind == "link":
            os.symlink(os.fsdecode(entry.target), path)
        else:
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                              | os.O_CLOEXEC, 0o644), "wb") as copy:
                for chunk in file_chunks(folder, entry):
                    copy.write(chunk)
            path.chmod(0o755 if entry.kind == "exec" else 0o644)


def hand_over(folder: Path, uid: int) -> None:
    """Give a build's fresh copy (made by the referee, not yet touched by any bot) to the
    build's uid, so the sandboxed build can write it; folders 0755, files readable."""
    for _, directories, files, directory_fd in os.fwalk(folder, follow_symlinks=False):
        for name in [*directories, *files]:
            os.chown(name, uid, uid, dir_fd=directory_fd, follow_symlinks=False)
            status = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
            if stat.S_ISDIR(status.st_mode) or stat.S_ISREG(status.st_mode):
                os.chmod(name, status.st_mode | (0o755 if stat.S_ISDIR(status.st_mode)
                                                 else 0o644), dir_fd=directory_fd)
    os.chown(folder, uid, uid)
    os.chmod(folder, 0o755)


def pack_output(folder: Path, archive_path: Path, *, times: bool = False) -> list[str]:
    """Pack the build's output (see the module documentation, step 3) into a tar file;
    the paths left out (links and special files). BuildError when it is too big.
    ``times``: keep each file's modification time (a compiler cache compares them)."""
    dropped: list[str] = []
    total = entries = 0
    with tarfile.open(archive_path, "w", format=tarfile.PAX_FORMAT) as archive:
        for root, directories, files, root_fd in os.fwalk(folder, follow_symlinks=False):
            relative_root = os.path.relpath(root, folder)
            kept_directories = []
            for name in sorted([*directories, *files]):
                relative = os.path.normpath(os.path.join(relative_root, name))
                problem = path_problem(relative)
                if problem:  # checked before the walk goes deeper
                    raise BuildError(f"the build left {problem}; a bot's folder goes at most "
                                     f"{MOST_TREE_DEPTH} folders deep, its paths at most "
                                     f"{MOST_TREE_PATH_BYTES:,} bytes")
                entries += 1
                if entries > OUTPUT_LIMIT_ENTRIES:
                    raise BuildError(f"the build left more than {OUTPUT_LIMIT_ENTRIES:,} "
                                     "files and folders")
                status = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
                info = tarfile.TarInfo(relative)
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                if stat.S_ISDIR(status.st_mode):
                    kept_directories.append(name)
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    archive.addfile(info)
                    continue
                if not stat.S_ISREG(status.st_mode):
                    dropped.append(relative)
                    continue
                descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK |
                                     os.O_CLOEXEC, dir_fd=root_fd)
                with open(descriptor, "rb") as file:
                    opened = os.fstat(file.fileno())
                    if not stat.S_ISREG(opened.st_mode) or opened.st_ino != status.st_ino:
                        dropped.append(relative)  # changed under us: not what was walked
                        continue
                    total += opened.st_size
                    if total > OUTPUT_LIMIT_BYTES:
                        raise BuildError(f"the build left more than "
                                         f"{OUTPUT_LIMIT_BYTES // 1024 ** 3} GiB of files")
                    info.size = opened.st_size
                    if times:
                        info.mtime = opened.st_mtime
                    info.mode = 0o755 if opened.st_mode & 0o111 else 0o644
                    archive.addfile(info, file)
            directories[:] = [d for d in directories if d in kept_directories]
    return dropped


def unpack_output(archive_path: Path, folder: Path) -> None:
    """Unpack a build archive into ``folder`` (a fresh one, which ``cache_entry`` moves into
    place)."""
    with tarfile.open(archive_path) as archive:
        archive.extractall(folder, filter="data")


def _digest_path(target: Path) -> Path:
    return target.with_name(f"{target.name}.sha256")


def tree_digest(folder: Path) -> str:
    """The SHA-256 of a built tree: each entry's path, kind, mode and content (files read a
    MiB at a time), never following a link."""
    digest = hashlib.sha256()
    for root, directories, files, root_fd in os.fwalk(folder, follow_symlinks=False):
        directories.sort()
        relative = os.path.relpath(root, folder)
        for name in sorted([*directories, *files]):
            status = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
            digest.update(f"{relative}/{name}\0{status.st_mode:o}\0".encode(
                "utf-8", "surrogateescape"))
            if stat.S_ISREG(status.st_mode):
                descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                     dir_fd=root_fd)
                with open(descriptor, "rb") as file:
                    while chunk := file.read(1 << 20):
                        digest.update(chunk)
                digest.update(f"\0{status.st_size}\0".encode())
    return digest.hexdigest()


def _sound(target: Path) -> bool:
    """Whether a kept build is as it was stored: a file emptied or removed in the cache
    would be run as the author's bot, which would then fail its check."""
    try:
        return _digest_path(target).read_text().strip() == tree_digest(target)
    except OSError:
        return False


def _trusted_cache(root: Path) -> None:
    """BuildError unless the cache folder is a folder of ours that no one else may write:
    a build kept there is run as the bot it names, and a folder others could write would
    let them plant a build, and a link as its lock file."""
    try:
        info = root.lstat()
    except OSError as error:
        raise BuildError(f"the build cache {root}: {error.strerror}") from None
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
            or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        raise BuildError(f"the build cache {root} is not a folder of this user's that only "
                         f"it may write; builds kept there could be replaced: set "
                         f"{CACHE_VARIABLE} to one that is (or fix its owner and mode)")


def _tail(process: StartedProcess) -> str:
    lines: list[str] = []
    for path in (process.stdout_path, process.stderr_path):
        with contextlib.suppress(OSError):
            lines += path.read_text(errors="replace").splitlines()
    # What a build printed is the bot's: its escape sequences are shown, not run.
    return "\n".join(f"  | {visible(line)}" for line in lines[-TAIL_LINES:]) or "  (no output)"


def _output(process: StartedProcess, most: int = 256 * 1024) -> str:
    """The end of what the build printed, both streams."""
    parts = []
    for path in (process.stdout_path, process.stderr_path):
        with contextlib.suppress(OSError), open(path, "rb") as stream:
            stream.seek(0, os.SEEK_END)
            stream.seek(max(0, stream.tell() - most))
            parts.append(stream.read().decode("utf-8", errors="replace"))
    return "\n".join(parts)


def cache_entry(root: Path, key: str, fill: Callable[[Path], None]) -> Path:
    """The cache entry ``root/key``: reused while it matches the digest stored beside it,
    else made (again) by ``fill`` in a fresh folder, which is moved into place in one step
    once its digest is written: its existence says it is complete. A file lock makes
    parallel workers make it once."""
    root.mkdir(mode=0o755, parents=True, exist_ok=True)
    _trusted_cache(root)
    target = root / key
    try:
        locking = os.open(root / f"{key}.lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW
                          | os.O_CLOEXEC, 0o600)
    except OSError as error:  # a link in its place (ELOOP): never followed
        raise BuildError(f"the build cache {root}: its lock {key}.lock cannot be opened as "
                         f"a file ({error.strerror}); remove it") from None
    with open(locking, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.lexists(target):
            if _sound(target):
                return target
            # Damaged (or kept with no digest): moved aside whole, then made again.
            aside = Path(tempfile.mkdtemp(prefix=".damaged-", dir=root))
            os.rename(target, aside / "entry")
            remove_tree(aside)
        staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=root))
        try:
            fill(staging)
            staging.chmod(0o755)
            sums = _digest_path(target)
            partial = sums.with_name(f".{sums.name}.{os.getpid()}")
            partial.write_text(tree_digest(staging) + "\n")
            partial.replace(sums)
            staging.rename(target)
        except BaseException:
            remove_tree(staging)
            raise
    return target


def stage(manifest: BotManifest, cache: Path | None = None) -> BotManifest:
    """A bot with no build step, as it plays: a copy of exactly its sources, what its
    content hash covers, kept in the build cache under their digest. Run from its own
    folder, it would also see what its ``.gitignore`` names, which no hash covers: code
    put there would change the bot and not its version."""
    kept = cache_entry((cache or cache_root()).absolute(), f"sources-{manifest.content_digest()}",
                 lambda staging: copy_sources(manifest.folder, staging))
    return dataclasses.replace(manifest, folder=kept, origin=manifest.home)


def _wait_watching_disk(process: StartedProcess, folder: Path, seconds: float
                        ) -> tuple[int | None, str | None]:
    """Wait up to ``seconds`` for the build: its exit code (None if it did not end), and
    why it was stopped early for the disk under ``folder`` (see ``DISK_RESERVE_BYTES``)."""
    deadline = time.monotonic() + seconds
    at_start = shutil.disk_usage(folder).free
    while True:
        try:
            return process.wait(timeout=max(0.0, min(DISK_POLL_SECONDS,
                                                     deadline - time.monotonic()))), None
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                return None, None
        free = shutil.disk_usage(folder).free
        if at_start - free > OUTPUT_LIMIT_BYTES:
            return None, (f"was stopped: it had written more than "
                          f"{OUTPUT_LIMIT_BYTES / 1024 ** 3:g} GiB to the disk")
        if free < DISK_RESERVE_BYTES:
            return None, (f"was stopped: the disk it builds on had less than "
                          f"{DISK_RESERVE_BYTES // 1024 ** 2} MiB free left")


Starter = Callable[[BotManifest, str, list[str], "tuple[str, ...] | None"], StartedProcess]
"""``start(workspace, label, argv, hosts)`` starts ``argv`` in the sandbox with ``workspace``
as its writable folder (``SandboxLauncher.start(..., build=True)``); ``hosts``: online to
these hosts alone (the fetch step), or None for the build's own network setting."""


def run_sandboxed(manifest: BotManifest, workspace: Path, start: Starter, label: str,
                  argv: list[str], seconds: float, what: str, *, offline: bool,
                  hosts: tuple[str, ...] | None = None) -> StartedProcess:
    """Run ``argv`` (a build or fetch step, ``what``) in ``workspace`` and wait for it;
    BuildError, quoting the end of its output, unless it ends with exit code 0."""
    started = time.monotonic()
    process = start(dataclasses.replace(manifest, folder=workspace), label, argv, hosts)
    try:
        code, disk = _wait_watching_disk(process, workspace.parent, seconds)
    finally:
        process.kill()  # every process of the step: nothing changes the tree now
    elapsed = time.monotonic() - started
    if code != 0:
        result = (disk if disk is not None else
                  f"timed out after {seconds:g} s" if code is None else
                  f"failed with exit code {code} after {elapsed:.1f} s")
        hint = network_hint(_output(process)) if offline else None
        raise BuildError(
            f"bot {manifest.label} ({manifest.folder}): {what} {result}; the last lines of "
            f"its output (all of it in {process.stdout_path.parent}/):\n{_tail(process)}"
            + (f"\n{offline_advice(hint)}" if hint else ""))
    return process


def build(manifest: BotManifest, start: Starter, build_seconds: float,
          cache: Path | None = None, offline: bool = False, *,
          key: str | None = None, argv: list[str] | None = None,
          setup: Callable[[Path], None] | None = None,
          finish: Callable[[Path], None] | None = None) -> BotManifest:
    """Build ``manifest`` once (see the module documentation) and return the manifest of its
    built folder (a bot with no build step: ``stage``). ``offline``: the build has no
    network, so a failure whose output shows a failed fetch says which tool tried to reach
    what. The fetch step (``arena.sandbox.pipeline``) passes its own ``key``, the command to
    run (``argv``; empty: none), and what to do in the workspace before (``setup``) and after
    (``finish``) it."""
    command = list(manifest.build) if argv is None else argv
    if not command and setup is None:
        return stage(manifest, cache)
    root = (cache or cache_root()).absolute()  # the sandbox starts elsewhere
    key = key or build_key(manifest)

    def fill(staging: Path) -> None:
        work = Path(tempfile.mkdtemp(prefix=f".work-{key[:16]}-", dir=root))  # 0700, root's
        try:
            workspace = work / "bot"
            copy_sources(manifest.folder, workspace)
            workspace.chmod(0o755)
            if setup is not None:
                setup(workspace)
            dropped: list[str] = []
            process = None
            if command:
                process = run_sandboxed(
                    manifest, workspace, start, f"build-{manifest.name}-{key[:16]}", command,
                    build_seconds, f"the build step {list(manifest.build)}", offline=offline)
            if finish is not None:
                finish(workspace)
            archive = work / "output.tar"
            try:
                dropped = pack_output(workspace, archive)
            except BuildError as error:
                raise BuildError(f"bot {manifest.label} ({manifest.folder}): {error}") from None
            if dropped and process is not None:
                with contextlib.suppress(OSError), open(process.stderr_path, "a") as log:
                    log.write(f"\n[arena build] left out {len(dropped)} symbolic link(s) and "
                              f"special file(s): {', '.join(dropped[:20])}\n")
            unpack_output(archive, staging)
        finally:
            remove_tree(work)  # the build's own tree: any depth

    return dataclasses.replace(manifest, folder=cache_entry(root, key, fill),
                               origin=manifest.home)
