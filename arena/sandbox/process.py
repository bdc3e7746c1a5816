"""Sandboxed bot processes as the referee sees them, started by the launcher process.

``Launcher`` is the client of ``spawn.py``, the small single-threaded process (one per
referee process, started on first use) that forks and prepares every sandboxed bot; see
that module for what a child does before it becomes the sandbox.

``SandboxProcess.kill()`` ends the whole tree: SIGKILL to the sandbox's process group, then
to anything left in the bot's cgroups or running under the bot's uid, then the cgroups are
removed. With bubblewrap the tree is also inside a pid namespace whose init dies with it, so
a detached child (``setsid``, SIGTERM ignored) goes too.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.sandbox.cgroups import BotCgroups, CgroupHost
from arena.sandbox.limits import SandboxLimits
from arena.sandbox.plain import copy_capped
from arena.sandbox.polling import backoff
from arena.sandbox.trees import remove_tree
from arena.text import file_label

SPAWN = Path(__file__).with_name("spawn.py")
FIRST_FILE = 3
"""The plan's files are at fds 3, 4, ... in the sandbox command (see ``spawn.py``)."""


class LauncherGone(RuntimeError):
    """The launcher process died; the next start makes a new one."""


@dataclass
class HelperPlan:
    """What the launcher's child does before it executes ``argv`` (see ``spawn.py``)."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cgroups: BotCgroups | None = None
    rlimits: list[tuple[int, int, int]] = field(default_factory=list)
    uid: int | None = None
    userns_placeholder: str | None = None
    chdir: str | None = None
    files: list[tuple[str, bytes]] = field(default_factory=list)
    """(name, content) of anonymous files the command finds at fds 3, 4, ..."""
    masks: list[tuple[str, str]] = field(default_factory=list)
    """(folder, tmpfs options): an empty tmpfs over each, in a mount namespace of the
    child's own (``spawn.private_mounts``); ``reveals`` are bound back at their places."""
    reveals: list[str] = field(default_factory=list)
    standby: bool = False
    """Once started, have a standby ready in cgroups like these for the next start (see
    ``Launcher.bot_cgroups``): for bots, which start match after match, not build steps."""

    def encode(self) -> bytes:
        fields: list[str] = []
        if self.cgroups is not None:
            for procs in self.cgroups.procs_files():
                fields += ["cgroup", procs]
        for number, soft, hard in self.rlimits:
            fields += ["rlimit", str(number), str(soft), str(hard)]
        if self.uid is not None:
            fields += ["uid", str(self.uid)]
        if self.userns_placeholder is not None:
            fields += ["userns", self.userns_placeholder]
        for folder, options in self.masks:
            fields += ["mask", folder, options]
        for path in self.reveals:
            fields += ["reveal", path]
        for name, value in self.env.items():
            fields += ["env", name, value]
        if self.chdir is not None:
            fields += ["chdir", self.chdir]
        fields += ["argv", str(len(self.argv)), *self.argv]
        return "".join(f"{value}\0" for value in fields).encode("utf-8", "surrogateescape")


def memfd(name: str, data: bytes) -> int:
    """An anonymous file holding ``data``, positioned at its start, to hand to a child."""
    descriptor = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(descriptor, data)
    os.lseek(descriptor, 0, os.SEEK_SET)
    return descriptor


@dataclass
class Standby:
    """A launcher child already in a bot's fresh cgroups, waiting for the plan that makes it
    that bot (``spawn.py``)."""

    cgroups: BotCgroups
    pid: int


STANDBYS_PER_KIND = 16
"""At most this many standbys wait for the cgroups of one kind (a 10-player table takes 10)."""


class Launcher:
    """The client side of the launcher process: start a plan, learn when it exits.

    Moving a process into a cgroup waits for an RCU grace period (5-20 ms here, measured)
    whenever the kernel's lock for it has been idle a moment, as it has between matches. So
    each start leaves a standby for the next one, in cgroups of the same kind: a child
    that joins them while the match plays, off the bots' start-up path."""

    _instance: Launcher | None = None
    _lock = threading.Lock()

    @classmethod
    def get(cls) -> Launcher:
        """This process's launcher, started (again) if needed."""
        with cls._lock:
            instance = cls._instance
            if instance is None or instance.gone or instance.owner != os.getpid():
                instance = cls._instance = cls()
            return instance

    def __init__(self) -> None:
        self.owner = os.getpid()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(SPAWN), str(theirs.fileno())], env={},
                stdin=subprocess.DEVNULL, pass_fds=(theirs.fileno(),),
                start_new_session=True)
        self.socket = ours
        self.gone = False
        self.replies: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        self.exits: dict[int, int] = {}
        self.changed = threading.Condition()
        self.send_lock = threading.Lock()
        self.standbys: dict[tuple[object, ...], list[Standby]] = {}
        self.handed_out: dict[str, int] = {}
        """A standby's cgroups given to a bot (by their first cgroup.procs file) -> its pid."""
        threading.Thread(target=self._read, name="arena-launcher", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                message = self.socket.recv(256)
            except OSError:
                message = b""
            if not message:
                with self.changed:
                    self.gone = True
                    self.changed.notify_all()
                self.replies.put(None)
                with self.send_lock:  # the launcher removed what it could: the rest
                    waiting = [s for pool in self.standbys.values() for s in pool]
                    self.standbys.clear()
                for standby in waiting:
                    standby.cgroups.remove()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=5)
                return
            kind, *numbers = message.split()
            if kind == b"P":
                pid = int(numbers[0])
                with self.changed:
                    # Pids are reused once reaped (32,768 of them go by in a long season):
                    # an exit recorded under this one was an earlier process's, not this.
                    self.exits.pop(pid, None)
                self.replies.put(pid)
            elif kind == b"X":
                with self.changed:
                    self.exits[int(numbers[0])] = int(numbers[1])
                    self.changed.notify_all()

    def _request(self, message: bytes, descriptors: Sequence[int]) -> int:
        with self.send_lock:
            if self.gone:
                raise LauncherGone("the sandbox launcher process has exited")
            socket.send_fds(self.socket, [message], list(descriptors))
            pid = self.replies.get(timeout=30)
        if pid is None:
            raise LauncherGone("the sandbox launcher process has exited")
        return pid

    def bot_cgroups(self, host: CgroupHost, limits: SandboxLimits, label: str) -> BotCgroups:
        """Fresh cgroups for a bot: a standby's, which its process has already joined, when
        one of that kind is waiting; else new ones (OSError if the kernel refuses)."""
        kind = BotCgroups(host, limits).kind
        dead = []
        chosen = None
        with self.send_lock:
            waiting = self.standbys.get(kind, [])
            while waiting and chosen is None:
                standby = waiting.pop()
                if standby.pid in self.exits:  # it died waiting
                    dead.append(standby)
                else:
                    chosen = standby
                    self.handed_out[standby.cgroups.procs_files()[0]] = standby.pid
        for standby in dead:
            standby.cgroups.remove()
        return chosen.cgroups if chosen else BotCgroups.create(host, label, limits)

    def start(self, plan: HelperPlan, descriptors: Sequence[int]) -> int:
        """Start ``plan`` with ``descriptors`` (stdout, stderr, files); the child's pid."""
        message = plan.encode()
        standby = None
        if plan.cgroups is not None and plan.cgroups.directories:
            standby = self.handed_out.pop(plan.cgroups.procs_files()[0], None)
        if standby is not None:
            message = f"use\0{standby}\0".encode() + message
        pid = self._request(message, descriptors)
        if plan.standby and plan.cgroups is not None:
            # Off the start path: the next seat of this match starts right after this one.
            threading.Thread(target=self.prepare_standby, args=(plan.cgroups,),
                             name="arena-standby", daemon=True).start()
        return pid

    def prepare_standby(self, like: BotCgroups) -> None:
        """Have a standby wait in new cgroups of the same kind as ``like``; nothing if the
        kernel refuses them or enough are waiting already."""
        if len(self.standbys.get(like.kind, [])) >= STANDBYS_PER_KIND:
            return
        try:
            cgroups = BotCgroups.create(like.host, "standby", like.limits)
        except OSError:
            return
        fields = "".join(f"cgroup\0{procs}\0" for procs in cgroups.procs_files())
        try:
            pid = self._request(b"standby\0" + fields.encode(), [])
        except LauncherGone:
            cgroups.remove()
            return
        with self.send_lock:
            self.standbys.setdefault(like.kind, []).append(Standby(cgroups, pid))

    def returncode(self, pid: int) -> int | None:
        with self.changed:
            if pid not in self.exits and self.gone:
                return -signal.SIGKILL  # its launcher died, and took it along
            return self.exits.get(pid)

    def wait(self, pid: int, timeout: float | None) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.exits or self.gone, timeout)
        return self.returncode(pid)


def processes_of_uid(uid: int) -> list[int]:
    """Pids of every live process whose real uid is ``uid`` (read from /proc). Zombies are
    left out: they run nothing, and reaping orphans is the host's init's job."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            status = Path(entry.path, "status").read_text()
            state = status.split("\nState:", 1)[1].split()[0]
            real_uid = int(status.split("\nUid:", 1)[1].split()[0])
            if real_uid == uid and state not in ("Z", "X"):
                found.append(int(entry.name))
    return found


class SandboxProcess:
    """A started bot: ``poll()`` and ``kill()`` for the referee, plus what the sandbox saw."""

    def __init__(self, plan: HelperPlan, *, log_dir: Path, label: str, output_cap: int,
                 cleanup: Sequence[Path] = (), uid: int | None = None,
                 off_turn: str = "run") -> None:
        """``uid``: the bot's own uid when the sandbox command switches to it itself (the
        fallback's setpriv) rather than the launcher (``plan.uid``)."""
        log_dir.mkdir(parents=True, exist_ok=True)
        self.label = label
        self.cgroups = plan.cgroups
        self.uid = plan.uid if plan.uid is not None else uid
        label = file_label(label)  # it may hold the bot's name
        self.stdout_path = log_dir / f"{label}.stdout.log"
        self.stderr_path = log_dir / f"{label}.stderr.log"
        self.memory_kills = 0
        self._cleanup = list(cleanup)
        self._on_kill: list[Callable[[], None]] = []
        self._killed = False
        self.off_turn = off_turn if plan.cgroups is not None and (
            plan.cgroups.can_freeze() if off_turn == "freeze" else
            plan.cgroups.can_throttle()) else "run"
        stdout_read, stdout_write = os.pipe()
        stderr_read, stderr_write = os.pipe()
        sent = [stdout_write, stderr_write]
        try:
            sent += [memfd(f"arena-{name}", content) for name, content in plan.files]
            self.launcher = Launcher.get()
            self.pid = self.launcher.start(plan, sent)
        except BaseException:
            for descriptor in (stdout_read, stderr_read):
                os.close(descriptor)
            self._release()
            raise
        finally:
            for descriptor in sent:
                os.close(descriptor)
        self._threads = [
            threading.Thread(target=copy_capped, daemon=True,
                             args=(open(descriptor, "rb", buffering=0),  # noqa: SIM115
                                   path, output_cap))
            for descriptor, path in ((stdout_read, self.stdout_path),
                                     (stderr_read, self.stderr_path))
        ]
        for thread in self._threads:
            thread.start()

    def poll(self) -> int | None:
        return self.launcher.returncode(self.pid)

    def pause(self) -> None:
        """Off turn (the referee's match loop calls this): throttle or freeze the bot, as
        ``SandboxLimits.off_turn`` says (nothing without the cgroup for it)."""
        if self.off_turn != "run" and not self._killed and self.cgroups is not None:
            with contextlib.suppress(OSError):
                if self.off_turn == "freeze":
                    self.cgroups.freeze()
                else:
                    self.cgroups.throttle()

    def resume(self) -> None:
        """On turn (and at the match's end): let the bot run at full speed again."""
        if self.off_turn != "run" and not self._killed and self.cgroups is not None:
            with contextlib.suppress(OSError):
                self.cgroups.thaw()
                self.cgroups.unthrottle()

    def on_kill(self, action: Callable[[], None]) -> None:
        """Have ``kill()`` do ``action`` once the sandbox's processes are gone (e.g. end a
        helper that serves it from outside, such as the build's network)."""
        self._on_kill.append(action)

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the sandbox to exit (TimeoutExpired after ``timeout`` seconds)."""
        code = self.launcher.wait(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.label, timeout or 0.0)
        return code

    def exit_note(self) -> str:
        """Why the sandbox ended, when the sandbox knows better than an exit code (for a
        fault's reason): e.g. the memory cap killed it."""
        live = self.cgroups.oom_kills() if self.cgroups is not None else 0
        kills = max(live, self.memory_kills)  # the cgroup is gone after kill()
        return f"the memory cap killed {kills} of its processes" if kills else ""

    def cgroups_hold_every_process(self) -> bool:
        """Whether the bot's cgroups count each of its processes: with the pids (or memory)
        controller, nothing the bot starts can leave them (it would need to write another
        cgroup's root-owned files, which the sandbox hides)."""
        return self.cgroups is not None and bool(
            {"pids", "memory"} & set(self.cgroups.directories))

    def leftover_pids(self) -> set[int]:
        """Processes of this bot still alive: in its cgroups or under its own uid."""
        pids = self.cgroups.pids() if self.cgroups is not None else set()
        if self.uid is not None:
            pids.update(processes_of_uid(self.uid))
        if self.poll() is None:
            pids.add(self.pid)
        return pids

    def kill(self) -> None:
        """Kill the bot and everything it started, remove its cgroups. Safe to call twice."""
        if self._killed:
            return
        self._killed = True
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        if self.cgroups is not None:
            # Every process of the bot is in its cgroups (the helper joined them before it
            # started anything): this reaches those in sessions of their own too, such as
            # bubblewrap's inner processes, without scanning /proc.
            self.cgroups.kill()
        self.launcher.wait(self.pid, 5)
        if self.cgroups is not None:
            self.memory_kills = self.cgroups.oom_kills()
        if self.uid is not None and not self.cgroups_hold_every_process():
            # The uid is this bot's alone: nothing else can own it.
            for pause in backoff(limit=1.0):
                pids = processes_of_uid(self.uid)
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(pause)
        for action in self._on_kill:
            action()
        for thread in self._threads:
            thread.join(timeout=2)
        self._release()
        if self.memory_kills:
            with contextlib.suppress(OSError), open(self.stderr_path, "a") as log:
                log.write(f"\n[arena sandbox] the memory cap killed {self.memory_kills} "
                          "process(es) of this bot\n")

    def _release(self) -> None:
        if self.cgroups is not None:
            self.cgroups.remove()
        for path in self._cleanup:
            with contextlib.suppress(OSError):
                if path.is_dir():
                    remove_tree(path)
                else:
                    path.unlink()
