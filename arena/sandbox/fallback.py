"""The fallback backend, for hosts where bubblewrap is missing or unusable: weaker isolation,
for trusted bots only (``make_launcher`` refuses untrusted ones, see ``TRUST_HINT``).

What it does, when the referee is root: each bot runs under a fresh uid of its own
(``setpriv --reuid --regid --clear-groups``, no capabilities, no-new-privileges), in new
network, pid, IPC, UTS and mount namespaces with a private /proc (``unshare``, util-linux),
under the cgroup caps and rlimits. In its mount namespace, /tmp, /var/tmp and /dev/shm are
empty private tmpfs (size-capped, its HOME), and every folder others cannot enter on the
path to what the bot needs (the referee's /root on the way to the Python runtime, a 0700
folder of entrants on the way to its own folder) is replaced by an empty tmpfs in which only
what it needs is bound back (``spawn.private_mounts``). Its socket is a link to the
referee's in a folder of its own (mode 0700, owned by its uid): no other seat can reach it.

What it does not: the rest of the host's file system is the host's, seen as an
unprivileged user: the bot reads whatever others may read, and writes whatever others may
write (outside the masked temporary folders). There is no seccomp filter: every socket
family works, in an empty network namespace. Every match log records the warning (see
``describe()``); the table in ``docs/sandbox.md`` lists what each backend contains.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from arena.sandbox import network as build_network
from arena.sandbox.bubblewrap import runtime_paths
from arena.sandbox.build import hand_over
from arena.sandbox.environment import BOT_ENV
from arena.sandbox.launcher import (
    Backend,
    SandboxError,
    SandboxLauncher,
    allocate_uid,
    is_root,
    rlimits,
)
from arena.sandbox.limits import MIB
from arena.sandbox.process import HelperPlan, SandboxProcess

WARNING = ("FALLBACK SANDBOX: bubblewrap is not in use; the bot sees the host's files as an "
           "unprivileged user (what others may read or write), every socket family (no "
           "seccomp filter); only its network, processes, resources and temporary folders "
           "are private: for trusted bots only")
TRUST_HINT = ("install bubblewrap (apt-get install bubblewrap) where user namespaces are "
              "allowed; or, if you trust every bot, pass --trust-bots (season file: "
              "[sandbox] trusted_bots = true)")
PRIVATE_TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm")
"""World-writable host folders: each an empty private tmpfs in the bot's mount namespace."""
SOCKET_NAME = "referee.sock"

NAMESPACE_VARIANTS = (
    ("--net", "--ipc", "--uts", "--pid", "--fork", "--kill-child", "--mount-proc"),
    ("--user", "--map-root-user", "--net", "--ipc", "--uts", "--pid", "--fork",
     "--kill-child", "--mount-proc"),
    ("--net",),
    ("--user", "--map-root-user", "--net"),
)
"""Tried in order; the first the kernel accepts is used (root needs no user namespace)."""

DROP_PRIVILEGES = ("--no-new-privs", "--inh-caps=-all", "--bounding-set=-all")


def closed_ancestor(path: Path) -> Path | None:
    """The outermost folder on the way to ``path`` (itself included) that others cannot
    enter (no o+x), or None."""
    current = Path("/")
    for part in path.parts[1:]:
        current = current / part
        try:
            mode = os.stat(current).st_mode
        except OSError:
            return None
        if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            return current
    return None


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def private_view(needed: list[Path], tmpfs_bytes: int
                 ) -> tuple[list[tuple[str, str]], list[str]]:
    """The masks (folder, tmpfs options) and reveals of a bot's mount namespace: the host's
    temporary folders and every closed folder on the way to a needed path are masked; the
    needed paths under a mask are bound back (see the module documentation)."""
    masks: dict[Path, str] = {Path(p): f"mode=1777,size={tmpfs_bytes}"
                              for p in PRIVATE_TEMPORARY if os.path.isdir(p)}
    for path in needed:
        closed = closed_ancestor(path)
        if closed is not None:
            masks.setdefault(closed, "mode=0711,size=1m")
    kept = sorted(masks, key=lambda p: len(p.parts))
    outer = [m for i, m in enumerate(kept) if not any(_under(m, o) for o in kept[:i])]
    wanted = sorted({p for p in needed if any(_under(p, m) for m in outer)},
                    key=lambda p: len(p.parts))
    reveals = [p for i, p in enumerate(wanted) if not any(_under(p, o) for o in wanted[:i])]
    return [(str(m), masks[m]) for m in outer], [str(p) for p in reveals]


@functools.cache
def namespace_options() -> tuple[str, ...] | None:
    """The ``unshare`` options that work here, or None when no namespace can be made."""
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if unshare is None or setpriv is None:
        return None
    for options in NAMESPACE_VARIANTS:
        if options[0] == "--user" and is_root():
            continue
        try:
            result = subprocess.run([unshare, *options, "--", setpriv, *DROP_PRIVILEGES,
                                     "--", "true"], capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if result.returncode == 0:
            return options
    return None


class FallbackLauncher(SandboxLauncher):
    """Start a bot with rlimits, cgroups and ``unshare`` namespaces only."""

    backend = Backend.FALLBACK

    def __init__(self, *args: Any, reason: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.options = namespace_options()
        self.distinct_uid = is_root() and shutil.which("setpriv") is not None
        self.warnings.insert(0, WARNING)
        if reason:
            self.warnings.insert(1, f"bubblewrap was not used: {reason}")
        if self.options is None:
            self.warnings.append("unshare is unavailable: the bot shares the host's network "
                                 "and sees its processes")
        elif "--pid" not in self.options:
            self.warnings.append("no pid namespace: the bot sees the host's processes")
        if not self.distinct_uid:
            self.warnings.append("the referee is not root: the bot runs under the referee's "
                                 "uid and can read and write whatever the referee can")
        elif "--mount-proc" not in (self.options or ()):
            self.warnings.append("no mount namespace: the bot shares the host's /tmp and "
                                 "cannot enter closed folders (such as /root) it may need")
        if self.cgroup_host is None or "pids" not in self.cgroup_host.parents:
            self.warnings.append("no pids cgroup: the bot's processes are not capped")

    def isolation(self) -> dict[str, Any]:
        namespaces = [] if self.options is None else [
            name for flag, name in (("--net", "net"), ("--pid", "pid"), ("--ipc", "ipc"),
                                    ("--uts", "uts"), ("--user", "user"),
                                    ("--mount-proc", "mount"))
            if flag in self.options]
        private = self.options is not None and "--mount-proc" in self.options
        return {**super().isolation(), "namespaces": namespaces,
                "uid": "one per bot" if self.distinct_uid else "the referee's",
                "filesystem": ("the host's, as an unprivileged user; private /tmp, /var/tmp, "
                               "/dev/shm; closed folders masked but for the bot's own paths"
                               if private else "the host's, unrestricted"),
                "seccomp": None}

    def _socket_folder(self, socket_dir: Path, uid: int | None,
                       environment: dict[str, str]) -> Path | None:
        """A folder of this seat's own (mode 0700, owned by its uid) holding a link to the
        referee's socket; ARENA_ADDRESS is rewritten to it. None when the address is not
        the match's Unix socket."""
        address = environment.get("ARENA_ADDRESS", "")
        socket = Path(address[5:]) if address.startswith("unix:") else None
        if socket is None or socket.parent != socket_dir or uid is None:
            return None
        folder = Path(tempfile.mkdtemp(prefix="seat-", dir=socket_dir))
        os.link(socket, folder / SOCKET_NAME)
        os.chown(folder, uid, uid)
        os.chmod(folder, 0o700)
        environment["ARENA_ADDRESS"] = f"unix:{folder / SOCKET_NAME}"
        return folder

    def start(self, argv: list[str], env: dict[str, str], socket_dir: Path | None, *,
              build: bool = False) -> SandboxProcess:
        limits = self.limits.for_build() if build else self.limits
        label = f"{self.label}.build" if build else self.label
        group = self.make_cgroups(limits, label)
        uid = allocate_uid() if self.distinct_uid else None
        if build and uid is not None:
            hand_over(self.manifest.folder, uid)
        environment = {**BOT_ENV, **env}
        environment["PATH"] = os.environ.get("PATH", environment["PATH"])
        command = list(argv)
        if command and not os.path.isabs(command[0]):
            found = shutil.which(command[0], path=environment["PATH"])
            if found is None and (self.manifest.folder / command[0]).exists():
                found = str(self.manifest.folder / command[0])
            command[0] = found or command[0]
        network = build and limits.build_network
        if network:
            # The build's network namespace is made by its own uid inside a user namespace
            # of its own (so pasta, as that uid, may join it), and the build keeps no
            # capability there (it could otherwise change its address and reach the host).
            unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
            if unshare is None or setpriv is None or uid is None:
                raise SandboxError(f"{self.manifest.home}: an online build under the "
                                   "fallback needs root, unshare and setpriv; build offline")
            environment.update(build_network.PROXY_ENVIRONMENT)
            command = [unshare, "--user", "--map-root-user", "--net", "--", setpriv,
                       *DROP_PRIVILEGES, "--", *build_network.waiting_for_proxy(command)]
        isolated = self.options is not None
        options = [o for o in self.options or () if not (network and o == "--net")]
        private = isolated and "--mount-proc" in options
        cleanup: list[Path] = []
        masks: list[tuple[str, str]] = []
        reveals: list[str] = []
        seat_folder = (self._socket_folder(socket_dir, uid, environment)
                       if socket_dir is not None else None)
        if private and uid is not None:
            environment.update(HOME="/tmp", TMPDIR="/tmp")
            needed = [self.manifest.folder, *runtime_paths(self.manifest, command)]
            if seat_folder is not None:
                needed.append(seat_folder)
            masks, reveals = private_view(needed, limits.tmpfs_mib * MIB)
        else:  # a private HOME and TMPDIR at least
            home = Path(tempfile.mkdtemp(prefix="arena-fallback-home-"))
            if uid is not None:
                os.chown(home, uid, uid)
            cleanup.append(home)
            environment.update(HOME=str(home), TMPDIR=str(home))
        drop = list(DROP_PRIVILEGES)
        if uid is not None:
            drop = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *drop]
        setpriv = shutil.which("setpriv")
        if isolated:
            unshare = shutil.which("unshare")
            assert unshare is not None and setpriv is not None
            command = [unshare, *options, "--", setpriv, *drop, "--", *command]
        elif setpriv is not None and uid is not None:
            command = [setpriv, *drop, "--", *command]
        plan = HelperPlan(
            argv=command, env=environment, cgroups=group, chdir=str(self.manifest.folder),
            masks=masks, reveals=reveals, standby=not build,
            rlimits=rlimits(limits, memory_capped=group is not None and
                            "memory" in group.directories, count_processes=uid is not None))
        process = SandboxProcess(plan, log_dir=self.log_dir, label=label,
                                 off_turn="run" if build else limits.off_turn,
                                 output_cap=limits.output_bytes, cleanup=cleanup, uid=uid)
        if network:
            try:
                route = build_network.attach(process.pid, uid, lambda: process.poll() is None,
                                             limits.egress_hosts(),
                                             build_network.stop_at_refusal(process)
                                             if limits.egress_only else None)
            except build_network.NetworkUnavailable as error:
                process.kill()
                raise SandboxError(
                    f"{self.manifest.home}: the build step may use the network, but its "
                    f"network could not be set up ({error}; the fallback needs user "
                    "namespaces for it); install the Debian package passt, or build "
                    "offline (--offline-build, build_network = false)") from None
            process.on_kill(route.close)
        return process
