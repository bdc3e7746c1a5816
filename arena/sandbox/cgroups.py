"""Control groups for one bot: the memory cap that kills reliably, the process cap, CPU quota.

Each bot gets its own child cgroup under the referee's own cgroup (so a season run inside a
container or a systemd slice stays inside its limits). cgroup v2 is used where the referee's
cgroup hands the memory controller to its children; on hybrid hosts (v2 mounted without
controllers, as on our machines) the v1 ``memory``, ``pids`` and ``cpu`` hierarchies are used.
Where neither works the launcher falls back to RLIMIT_AS and records a warning.

The referee moves the bot's launcher helper into the cgroups before the helper starts
anything, so every process of the bot is counted from the first fork. Off turn, the match
loop throttles a bot (its CPU quota drops to 1%) or, with ``off_turn = "freeze"``, freezes
it (the v1 freezer, joined only then; v2's ``cgroup.freeze``).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.processes import owner_tag
from arena.sandbox.limits import SandboxLimits
from arena.sandbox.polling import backoff

CONTROLLERS = ("memory", "pids", "cpu", "freezer")
"""``freezer`` (v1; v2 has ``cgroup.freeze`` in every cgroup): only the seat on turn runs."""
CPU_PERIOD_US = 100_000
OFF_TURN_QUOTA_US = 1000
"""A throttled bot (off turn) may use 1 ms of CPU per 100 ms period."""
_counter = itertools.count(1)


@dataclass(frozen=True)
class CgroupHost:
    """Where this process may create child cgroups, per controller."""

    version: int
    parents: dict[str, Path]
    """controller -> the directory (the referee's own cgroup) to create children in."""

    def describe(self) -> str:
        return f"cgroup v{self.version} ({', '.join(sorted(self.parents))})"


def _own_paths() -> dict[str, str]:
    """controller (or "" for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(fstype, mount root, mount point, super options) of every cgroup mount."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
                continue
            point = fields[4].replace("\\040", " ")
            found.append((tail[0], fields[3], point, set(tail[2].split(","))))
    return found


def _inside(mount_point: str, mount_root: str, path: str) -> Path:
    """The directory of cgroup ``path`` under a mount of the hierarchy at ``mount_root``."""
    if mount_root != "/" and (path == mount_root or path.startswith(mount_root + "/")):
        path = path[len(mount_root):]
    elif mount_root != "/":
        path = "/"
    return Path(mount_point) / path.lstrip("/")


def _writable(directory: Path) -> bool:
    return directory.is_dir() and os.access(directory, os.W_OK | os.X_OK)


@functools.cache
def detect() -> CgroupHost | None:
    """The cgroup controllers this process can delegate to its bots, or None."""
    own = _own_paths()
    mounts = _mounts()
    v1: dict[str, Path] = {}
    for fstype, root, point, options in mounts:
        if fstype != "cgroup":
            continue
        for controller in CONTROLLERS:
            if controller in options and controller in own:
                directory = _inside(point, root, own[controller])
                if _writable(directory):
                    v1[controller] = directory
    if "memory" in v1:
        return CgroupHost(1, v1)
    for fstype, root, point, _ in mounts:
        if fstype != "cgroup2" or "" not in own:
            continue
        directory = _inside(point, root, own[""])
        if not _writable(directory):
            continue
        with contextlib.suppress(OSError):
            available = set((directory / "cgroup.controllers").read_text().split())
            enabled = set((directory / "cgroup.subtree_control").read_text().split())
            wanted = [c for c in CONTROLLERS
                      if c in available and c not in enabled and c != "freezer"]
            if wanted:
                # Fails (EBUSY) when this cgroup holds processes: v2's "no internal processes"
                # rule. Run the referee in a delegated cgroup (systemd Delegate=yes) then.
                with contextlib.suppress(OSError):
                    (directory / "cgroup.subtree_control").write_text(
                        " ".join(f"+{c}" for c in wanted))
                enabled = set((directory / "cgroup.subtree_control").read_text().split())
            if "memory" in enabled:
                parents = {c: directory for c in CONTROLLERS if c in enabled}
                parents["freezer"] = directory  # cgroup.freeze: every v2 cgroup has it
                return CgroupHost(2, parents)
    return None


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", label)[:40]


@dataclass
class BotCgroups:
    """The cgroups of one bot process tree."""

    host: CgroupHost
    limits: SandboxLimits
    directories: dict[str, Path] = field(default_factory=dict)
    _freezer: int | None = field(default=None, repr=False)
    """An open descriptor on the freeze file (opened once: a freeze costs one write)."""
    _quota: int | None = field(default=None, repr=False)
    """Likewise on the CPU quota file."""
    frozen: bool = False
    throttled: bool = False

    @classmethod
    def create(cls, host: CgroupHost, label: str, limits: SandboxLimits) -> BotCgroups:
        """Make the bot's cgroups and set its limits; OSError if the kernel refuses."""
        # Named after its owner (pid and start time): a start-up sweep removes it, once
        # empty, if this process dies without doing so (``arena.sandbox.sweep``).
        name = f"arena-{_safe(label)}-{owner_tag()}-{next(_counter)}"
        cgroups = cls(host, limits)
        try:
            for controller, parent in host.parents.items():
                if controller == "freezer" and limits.off_turn != "freeze":
                    continue  # one hierarchy fewer to join at every start
                directory = parent / name
                if directory not in cgroups.directories.values():
                    directory.mkdir()
                cgroups.directories[controller] = directory
            cgroups._set_limits(limits)
        except OSError:
            cgroups.remove()
            raise
        return cgroups

    def _set_limits(self, limits: SandboxLimits) -> None:
        quota = max(1000, int(limits.cpu_cores * CPU_PERIOD_US))
        memory = self.directories.get("memory")
        pids = self.directories.get("pids")
        cpu = self.directories.get("cpu")
        if self.host.version == 1:
            if memory:
                (memory / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
                swap = memory / "memory.memsw.limit_in_bytes"
                if swap.exists():  # no swap beyond the cap either
                    swap.write_text(str(limits.memory_bytes))
            if pids:
                (pids / "pids.max").write_text(str(limits.processes))
            if cpu:
                (cpu / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
                (cpu / "cpu.cfs_quota_us").write_text(str(quota))
        else:
            if memory:
                (memory / "memory.max").write_text(str(limits.memory_bytes))
                with contextlib.suppress(OSError):
                    (memory / "memory.swap.max").write_text("0")
            if pids:
                (pids / "pids.max").write_text(str(limits.processes))
            if cpu:
                (cpu / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")

    @property
    def kind(self) -> tuple[object, ...]:
        """Cgroups of the same kind are interchangeable: the same places, the same caps."""
        return (tuple(sorted((c, str(p)) for c, p in self.host.parents.items())),
                self.limits.memory_bytes, self.limits.processes, self.limits.cpu_cores,
                self.limits.off_turn == "freeze")

    def procs_files(self) -> list[str]:
        unique = dict.fromkeys(self.directories.values())
        return [str(directory / "cgroup.procs") for directory in unique]

    def attach(self, pid: int) -> None:
        """Move process ``pid`` (the launcher helper, before it starts anything) in."""
        for procs in self.procs_files():
            with open(procs, "w") as file:
                file.write(str(pid))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for directory in dict.fromkeys(self.directories.values()):
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (directory / "cgroup.procs").read_text().split())
        return found

    def can_freeze(self) -> bool:
        return "freezer" in self.directories

    def _freeze_file(self) -> int:
        if self._freezer is None:
            directory = self.directories["freezer"]
            name = "freezer.state" if self.host.version == 1 else "cgroup.freeze"
            self._freezer = os.open(directory / name, os.O_WRONLY | os.O_CLOEXEC)
        return self._freezer

    def freeze(self) -> None:
        """Stop every process of the bot where it stands (it gets no CPU until ``thaw``); the
        kernel completes it asynchronously, in microseconds for a bot's few threads."""
        if not self.frozen and self.can_freeze():
            os.pwrite(self._freeze_file(), b"FROZEN" if self.host.version == 1 else b"1", 0)
            self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            os.pwrite(self._freeze_file(), b"THAWED" if self.host.version == 1 else b"0", 0)
            self.frozen = False

    def can_throttle(self) -> bool:
        return "cpu" in self.directories

    def _quota_file(self) -> int:
        if self._quota is None:
            name = "cpu.cfs_quota_us" if self.host.version == 1 else "cpu.max"
            self._quota = os.open(self.directories["cpu"] / name, os.O_WRONLY | os.O_CLOEXEC)
        return self._quota

    def _write_quota(self, quota: int) -> None:
        value = str(quota) if self.host.version == 1 else f"{quota} {CPU_PERIOD_US}"
        os.pwrite(self._quota_file(), value.encode(), 0)

    def throttle(self) -> None:
        """Cut the bot's CPU quota to ``OFF_TURN_QUOTA_US`` a period: it runs on, slowly (no
        process is woken, unlike a freeze)."""
        if not self.throttled and self.can_throttle():
            self._write_quota(OFF_TURN_QUOTA_US)
            self.throttled = True

    def unthrottle(self) -> None:
        if self.throttled:
            self._write_quota(max(1000, int(self.limits.cpu_cores * CPU_PERIOD_US)))
            self.throttled = False

    def oom_kills(self) -> int:
        """How many processes the memory cap has killed."""
        memory = self.directories.get("memory")
        if memory is None:
            return 0
        name = "memory.oom_control" if self.host.version == 1 else "memory.events"
        with contextlib.suppress(OSError):
            for line in (memory / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def kill(self, timeout: float = 3.0) -> bool:
        """SIGKILL every process left in the cgroups; True when none is left."""
        with contextlib.suppress(OSError):  # a frozen process (v1) would not die
            self.thaw()
        for pause in backoff(timeout):
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(pause)
        return not self.pids()

    def remove(self) -> None:
        """Remove the (empty) cgroups; kills what is left first."""
        self.kill()
        for descriptor in (self._freezer, self._quota):
            if descriptor is not None:
                os.close(descriptor)
        self._freezer = self._quota = None
        for directory in dict.fromkeys(self.directories.values()):
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # EBUSY while the last process is being reaped
                    time.sleep(0.02)
        self.directories.clear()


_referee_cgroup: dict[int, Path | None] = {}


def cap_referee(memory_bytes: int) -> Path | None:
    """Move this process (a referee) into a memory-capped cgroup of its own, a sibling of
    the cgroups its bots get (whose memory must not count against it); once per process.
    The cgroup, or None where this process cannot create one (the cap is then missing:
    ``referee_cap_warning`` says so)."""
    pid = os.getpid()
    if pid in _referee_cgroup:
        return _referee_cgroup[pid]
    host = detect()  # cached before the move: bots keep the original parent
    directory: Path | None = None
    if host is not None and "memory" in host.parents:
        # Named like a bot's: the start-up sweep removes it, once empty, after this
        # process is gone (``arena.sandbox.sweep``).
        candidate = host.parents["memory"] / f"arena-referee-{owner_tag()}-0"
        try:
            candidate.mkdir(exist_ok=True)
            if host.version == 1:
                (candidate / "memory.limit_in_bytes").write_text(str(memory_bytes))
                swap = candidate / "memory.memsw.limit_in_bytes"
                if swap.exists():
                    swap.write_text(str(memory_bytes))
            else:
                (candidate / "memory.max").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):
                    (candidate / "memory.swap.max").write_text("0")
            (candidate / "cgroup.procs").write_text(str(pid))
            directory = candidate
        except OSError:
            with contextlib.suppress(OSError):
                candidate.rmdir()
    _referee_cgroup[pid] = directory
    return directory


def release_referees(pids: list[int]) -> None:
    """Remove the referee cgroups of processes ``pids``, once they are gone (their owner
    runs this: the start-up sweep is for a run that could not)."""
    host = detect()
    if host is None or "memory" not in host.parents or not pids:
        return
    prefixes = tuple(f"arena-referee-{pid}." for pid in pids)
    with contextlib.suppress(OSError):
        for entry in os.scandir(host.parents["memory"]):
            if entry.name.startswith(prefixes):
                for pause in backoff(1.0):
                    try:
                        os.rmdir(entry.path)
                        break
                    except FileNotFoundError:
                        break
                    except OSError:  # EBUSY while the exiting worker is being reaped
                        time.sleep(pause)


def referee_cap() -> bool | None:
    """Whether ``cap_referee`` capped this process: None if it was never asked to."""
    if os.getpid() not in _referee_cgroup:
        return None
    return _referee_cgroup[os.getpid()] is not None


def referee_cap_warning() -> str:
    """What a match log header says when ``cap_referee`` could not cap this process."""
    return ("REFEREE MEMORY NOT CAPPED: this host gives the referee no cgroup it may create "
            "(run it with a delegated cgroup, systemd Delegate=yes); a referee bug could use "
            "the host's memory")

