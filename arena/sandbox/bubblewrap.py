"""The default backend: each bot in a bubblewrap sandbox.

Inside, the bot sees a fresh root: ``/usr`` and the loader's files read-only, the runtimes
its language needs read-only at their own paths (``arena.sandbox.runtimes``: Python's prefix
and the ``arena`` package, Node, Go, Rust, the JDK and Maven, and the folders its bot.toml
declares, once checked), its own
folder read-only at ``/bot`` (its working directory), the match's socket folder read-only at
``/run/arena``, a private tmpfs of capped size at ``/tmp`` (also HOME), a fresh ``/proc``
(its own processes only) and a minimal ``/dev``. Nothing else of the host exists there: not
the other bots, not the referee's files or logs, not /root or the rest of the checkout.

It runs in new user, pid, network (no interface up: no 127.0.0.1, no DNS), IPC, UTS and
cgroup namespaces, as a uid of its own (when the referee is root), with no capabilities,
no-new-privileges, in a new session, killed with its parent, under the seccomp filter of
``arena.sandbox.seccomp`` and the cgroup and rlimit caps of ``SandboxLimits``.

bubblewrap's arguments (the bot's token among them) go through a file descriptor, not the
command line, so other host users cannot read them in ``ps``.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.processes import owner_tag
from arena.sandbox import network as build_network
from arena.sandbox import runtimes, seccomp
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
from arena.sandbox.limits import MIB, SandboxLimits
from arena.sandbox.manifest import BotManifest
from arena.sandbox.plain import resolve_command
from arena.sandbox.process import FIRST_FILE, HelperPlan, SandboxProcess

BOT_DIR = "/bot"
SOCKET_DIR = "/run/arena"
USERNS_PLACEHOLDER = "@ARENA_USERNS_FD@"
LOADER_FILES = ("/etc/ld.so.cache", "/etc/alternatives")
"""The dynamic loader's cache, and /etc/alternatives for Debian's symlinked tools (each bind
costs start-up time: bots get no more of /etc; their clock is UTC)."""
NETWORK_FILES = ("/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates",
                 "/etc/pki")
"""Only for a build step allowed on the network (``SandboxLimits.build_network``): the
certificates its TLS checks (names are resolved by the proxy, ``network.py``)."""
TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
VISIBLE = ("/usr", "/dev", "/proc", "/etc/alternatives", *(f"/{n}" for n in TOP_LEVEL))
"""Host paths that exist inside every sandbox (as themselves or as fresh mounts)."""
RUNTIMES_VARIABLE = runtimes.OPERATOR_VARIABLE
NEUTRAL_PROC = ("meminfo", "stat", "loadavg", "uptime", "vmstat", "diskstats", "interrupts",
                "softirqs", "schedstat", "cpuinfo", "pressure/cpu", "pressure/io",
                "pressure/memory")
"""Host-wide files of /proc that runtimes read, each replaced by a fixed copy
(``neutral_proc``): a bot that reads them learns nothing of the other bots, and cannot
signal to them through them."""
SHOWN_PROC = frozenset({"self", "thread-self", "mounts", "net", "version", "filesystems"})
"""The rest of /proc's top level a bot is shown: its own processes' entries (and the pid
folders of its sandbox), and what never changes. Everything else is hidden
(``hidden_proc``): an allowlist, as a list of what to hide misses host-wide counters a
bot could move and another read (/proc/sys/kernel/pty/nr carries six bits a turn between
two bots, without an error)."""


@functools.cache
def hidden_proc() -> tuple[tuple[str, bool], ...]:
    """(path, whether a folder) of each entry of /proc's top level a bot is not shown:
    neither its own (``SHOWN_PROC``, the pid folders) nor a neutral copy's."""
    neutral = {name.split("/")[0] for name in NEUTRAL_PROC}
    hidden = []
    with os.scandir("/proc") as entries:
        for entry in entries:
            if entry.name.isdigit() or entry.name in SHOWN_PROC or entry.is_symlink():
                continue
            folder = entry.is_dir(follow_symlinks=False)
            if entry.name in neutral and not folder:
                continue
            hidden.append((entry.path, folder))
    return tuple(sorted(hidden))


@functools.cache
def neutral_proc(memory_bytes: int) -> tuple[tuple[str, bytes], ...]:
    """(path, content) of a fixed copy of each of ``NEUTRAL_PROC`` the host has: the same
    names and layout, every counter zero, the memory the bot's cap (as LXCFS shows a
    container's), one ``cpuN`` line per CPU of the host (glibc counts them there when /sys
    is hidden, as it is)."""
    files: list[tuple[str, bytes]] = []
    kib = memory_bytes // 1024
    for name in NEUTRAL_PROC:
        path = Path("/proc") / name
        try:
            host = path.read_text()
        except OSError:
            continue
        if name == "meminfo":
            lines = []
            for line in host.splitlines():
                key = line.split(":", 1)[0]
                value = kib if key in ("MemTotal", "MemFree", "MemAvailable") else 0
                lines.append(f"{key + ':':<16}{value:>8} kB" if line.endswith("kB") else
                             f"{key + ':':<16}{value:>8}")
            content = "\n".join(lines) + "\n"
        elif name == "stat":
            cpus = [line.split()[0] for line in host.splitlines() if line.startswith("cpu")]
            content = "".join(f"{cpu} 0 0 0 0 0 0 0 0 0 0\n" for cpu in cpus) + (
                "intr 0\nctxt 0\nbtime 0\nprocesses 1\nprocs_running 1\n"
                "procs_blocked 0\nsoftirq 0\n")
        elif name == "loadavg":
            content = "0.00 0.00 0.00 1/1 1\n"
        elif name == "uptime":
            content = "0.00 0.00\n"
        elif name == "vmstat":
            content = "".join(f"{line.split()[0]} 0\n" for line in host.splitlines() if line)
        elif name == "cpuinfo":  # the clock of each core moves with the load
            first = next((line for line in host.splitlines() if line.startswith("cpu MHz")),
                         "")
            content = "".join((first if line.startswith("cpu MHz") else line) + "\n"
                              for line in host.splitlines())
        elif name.startswith("pressure/"):
            content = "".join(f"{line.split()[0]} avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                              for line in host.splitlines() if line)
        else:  # per-device and per-interrupt tables: none
            content = ""
        files.append((str(path), content.encode()))
    return tuple(files)


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def _under(path: Path, others: list[Path]) -> bool:
    return any(path == other or other in path.parents for other in others)


def _file(files: list[tuple[str, bytes]], name: str, content: bytes) -> str:
    """Add an anonymous file for the sandbox command; its fd number there."""
    files.append((name, content))
    return str(FIRST_FILE + len(files) - 1)


def runtime_paths(manifest: BotManifest, argv: list[str],
                  declared: Sequence[Path] = ()) -> list[Path]:
    """Host folders the bot's runtime needs, bound read-only at the same path (beyond /usr):
    the operator's, its language's toolchain (``arena.sandbox.runtimes``) and the folders its
    bot.toml declares (``declared``, already checked by ``runtimes.declared_folders``)."""
    wanted = [*runtimes.operator_folders(), *runtimes.toolchain(manifest, argv).folders,
              *declared]
    kept: list[Path] = [Path("/usr")]
    for path in sorted({p.resolve() for p in wanted if p.exists()}, key=lambda p: len(p.parts)):
        if path != Path("/") and not _under(path, kept):
            kept.append(path)
    return kept[1:]


def outside_paths(manifest: BotManifest, argv: list[str], runtimes: list[Path]) -> list[str]:
    """Absolute host paths in a command that the sandbox will not show the bot."""
    visible = [manifest.folder, *runtimes, *(Path(p) for p in VISIBLE)]
    return [arg for arg in argv if arg.startswith("/") and os.path.exists(arg)
            and not _under(Path(arg), visible) and not _under(Path(arg).resolve(), visible)]


def unreadable_by_others(folder: Path) -> str | None:
    """The first of the folder and its direct entries that others cannot read, or None."""
    for path in [folder, *sorted(folder.iterdir())]:
        mode = path.stat().st_mode
        needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        if mode & needed != needed:
            return "the folder itself" if path == folder else path.name
    return None


@functools.cache
def probe() -> str | None:
    """None if bubblewrap works here, else why not (run once per process)."""
    if bwrap_path() is None:
        return "bwrap is not installed (Debian package bubblewrap)"
    try:
        seccomp.bot_filter()
    except seccomp.SeccompUnavailable as error:
        return str(error)
    # Named as a match folder is: if this run is killed now, the next one's sweep removes it.
    folder = Path(tempfile.mkdtemp(prefix=f"arena-match-{owner_tag()}-probe-"))
    folder.chmod(0o755)
    try:
        manifest = BotManifest(folder=folder, name="probe", version="0", language="other",
                               run=("/usr/bin/true",))
        launcher = BubblewrapLauncher(manifest, folder / "logs", "probe", SandboxLimits())
        process = launcher.start(["/usr/bin/true"], {}, None)
        try:
            code = process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            code = -1
        process.kill()
        if code != 0:
            lines = process.stderr_path.read_text(errors="replace").strip().splitlines()
            return f"bubblewrap failed here: {lines[-1] if lines else f'exit code {code}'}"
        return None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class BubblewrapLauncher(SandboxLauncher):
    """Start a bot in a bubblewrap sandbox (see the module documentation)."""

    backend = Backend.BUBBLEWRAP

    def __init__(self, manifest: BotManifest, log_dir: Path, label: str,
                 limits: SandboxLimits) -> None:
        super().__init__(manifest, log_dir, label, limits)
        bwrap = bwrap_path()
        if bwrap is None:
            raise SandboxError("bubblewrap is not installed: apt-get install bubblewrap, or "
                               "choose the fallback sandbox")
        self.bwrap = bwrap
        self.distinct_uid = is_root()
        if self.distinct_uid:
            unreadable = unreadable_by_others(manifest.folder)
            if unreadable:
                raise SandboxError(
                    f"{manifest.home}: {unreadable} cannot be read by other users, and the "
                    "sandboxed bot runs under a uid of its own; make the bot folder readable: "
                    f"chmod -R o+rX {manifest.home}")
        if not self.distinct_uid:
            self.warnings.append("the referee is not root: bots run under the referee's uid "
                                 "(in their own user namespace), RLIMIT_NPROC is not set")
        self.declared = runtimes.declared_folders(manifest, [log_dir])
        self.check_command(resolve_command(manifest))
        try:
            self.filter: bytes | None = seccomp.bot_filter()
        except seccomp.SeccompUnavailable as error:
            self.filter = None
            self.warnings.append(f"no seccomp filter ({error}): only the empty network "
                                 "namespace stops other socket families")

    def check_command(self, argv: list[str]) -> None:
        """SandboxError if the command needs host files the sandbox hides."""
        outside = outside_paths(self.manifest, argv,
                                runtime_paths(self.manifest, argv, self.declared))
        if outside:
            raise SandboxError(
                f"{self.manifest.home / 'bot.toml'}: the command {argv} uses "
                f"{', '.join(outside)}, outside the bot folder; the sandbox shows a bot only "
                "its own folder and the runtimes: copy what it needs into the folder, or "
                "declare the system folder of its runtime in bot.toml (runtimes = [...])")

    def isolation(self) -> dict[str, Any]:
        return {
            **super().isolation(),
            "namespaces": ["user", "pid", "net", "ipc", "uts", "cgroup", "mount"],
            "uid": "one per bot" if self.distinct_uid else "the referee's",
            "filesystem": "read-only /usr, runtimes and bot folder; private tmpfs /tmp",
            "proc": "own processes; what runtimes read as fixed copies; the rest hidden",
            "seccomp": seccomp.describe() if self.filter is not None else None,
        }

    def start(self, argv: list[str], env: dict[str, str], socket_dir: Path | None, *,
              build: bool = False) -> SandboxProcess:
        limits = self.limits.for_build() if build else self.limits
        network = build and limits.build_network
        label = f"{self.label}.build" if build else self.label
        if build:
            self.check_command(argv)
        uid = allocate_uid() if self.distinct_uid else None
        if build and uid is not None:
            hand_over(self.manifest.folder, uid)
        files: list[tuple[str, bytes]] = []
        args, command = self._arguments(argv, env, socket_dir, limits, uid, network, build,
                                        files)
        arguments = _file(files, "bwrap-args", b"".join(
            a.encode("utf-8", "surrogateescape") + b"\0" for a in args))
        if uid is not None:
            outer = [self.bwrap, "--userns", USERNS_PLACEHOLDER, "--uid", str(uid),
                     "--gid", str(uid), "--args", arguments, "--", *command]
        else:
            outer = [self.bwrap, "--unshare-user", "--disable-userns", "--args", arguments,
                     "--", *command]
        group = self.make_cgroups(limits, label)
        plan = HelperPlan(
            argv=outer, cgroups=group, uid=uid, files=files, standby=not build,
            rlimits=rlimits(limits, memory_capped=group is not None and
                            "memory" in group.directories, count_processes=uid is not None),
            userns_placeholder=USERNS_PLACEHOLDER if uid is not None else None)
        process = SandboxProcess(plan, log_dir=self.log_dir, label=label,
                                 off_turn="run" if build else limits.off_turn,
                                 output_cap=limits.output_bytes)
        if network:
            try:
                route = build_network.attach(process.pid, uid,
                                             lambda: process.poll() is None,
                                             limits.egress_hosts(),
                                             build_network.stop_at_refusal(process)
                                             if limits.egress_only else None)
            except build_network.NetworkUnavailable as error:
                process.kill()
                raise SandboxError(
                    f"{self.manifest.home}: the build step may use the network, but its "
                    f"network could not be set up ({error}); install the Debian package "
                    "passt, or build offline (--offline-build, build_network = false)"
                ) from None
            process.on_kill(route.close)
        return process

    def _arguments(self, argv: list[str], env: dict[str, str], socket_dir: Path | None,
                   limits: SandboxLimits, uid: int | None, network: bool, writable: bool,
                   files: list[tuple[str, bytes]]) -> tuple[list[str], list[str]]:
        """bubblewrap's options (passed through a file descriptor) and the command."""
        folder = self.manifest.folder
        args = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--cap-drop", "ALL",
                "--hostname", "arena-bot"]
        args.append("--unshare-net")  # an online build's is served by pasta (network.py)
        args += ["--ro-bind", "/usr", "/usr"]
        for name in TOP_LEVEL:
            path = Path("/") / name
            if path.is_symlink():
                args += ["--symlink", str(path.readlink()), str(path)]
            elif path.is_dir():
                args += ["--ro-bind", str(path), str(path)]
        for name in LOADER_FILES + (NETWORK_FILES if network else ()):
            args += ["--ro-bind-try", name, name]
        bot_uid = uid if uid is not None else os.getuid()
        # Some runtimes look the uid up (the JVM, Python's getpass).
        passwd = (f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
                  f"bot:x:{bot_uid}:{bot_uid}:bot:/tmp:/usr/sbin/nologin\n")
        args += ["--ro-bind-data", _file(files, "passwd", passwd.encode()), "/etc/passwd"]
        # The private /tmp first: runtimes installed under the host's /tmp (a checkout in
        # /tmp, say) are then bound on top of it instead of being hidden by it.
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--perms", "1777", "--size", str(limits.tmpfs_mib * MIB), "--tmpfs", "/tmp"]
        hidden = hidden_proc()
        for entry, is_folder in hidden:  # an empty folder, an empty file
            args += (["--size", "4096", "--tmpfs", entry] if is_folder
                     else ["--ro-bind", "/dev/null", entry])
        for counter, content in neutral_proc(limits.memory_bytes):
            args += ["--ro-bind-data", _file(files, f"proc-{Path(counter).name}", content),
                     counter]
        for entry, is_folder in hidden:
            if is_folder:
                args += ["--remount-ro", entry]
        for path in runtime_paths(self.manifest, argv, self.declared):
            args += ["--ro-bind", str(path), str(path)]
        args += ["--bind" if writable else "--ro-bind", str(folder), BOT_DIR]
        environment = dict(BOT_ENV)
        searched = environment["PATH"].split(":")  # cargo, go... where their toolchain is
        tools = [t for t in runtimes.toolchain(self.manifest, argv).path if t not in searched]
        environment["PATH"] = ":".join([*tools, *searched])
        if any(sys.executable == a for a in argv):
            environment["PATH"] = f"{Path(sys.executable).parent}:{environment['PATH']}"
        environment.update(env)
        if network:  # the only way out (network.py)
            environment.update(build_network.PROXY_ENVIRONMENT)
        if socket_dir is not None:
            args += ["--ro-bind", str(socket_dir), SOCKET_DIR]
            address = environment.get("ARENA_ADDRESS", "")
            if address.startswith("unix:") and Path(address[5:]).parent == socket_dir:
                environment["ARENA_ADDRESS"] = f"unix:{SOCKET_DIR}/{Path(address[5:]).name}"
        if self.filter is not None:
            program = seccomp.build_filter(network) if writable else self.filter
            args += ["--seccomp", _file(files, "seccomp", program)]
        # The root (a tmpfs holding the mount points) is read-only too: the bot writes /tmp.
        args += ["--remount-ro", "/", "--chdir", BOT_DIR, "--clearenv"]
        for name, value in environment.items():
            args += ["--setenv", name, value]
        inside = [BOT_DIR + a[len(str(folder)):] if a == str(folder) or
                  a.startswith(str(folder) + "/") else a for a in argv]
        if network:
            inside = build_network.waiting_for_proxy(inside)
        return args, inside
