"""Resource limits for a sandboxed bot, with the defaults a season uses unless it says otherwise.

The referee's own clock (decision deadline, time bank, hello timeout) is in
``arena.referee.match.Limits``; these are the operating-system limits around the process.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from arena.sandbox.egress import REGISTRIES, host_pattern
from arena.sandbox.fetch import registry_address

MIB = 1024 * 1024

MEMORY_MIB = 768
"""Enough for a Python, Node or JVM bot; a cgroup cap, so it counts every process of the bot
and its tmpfs (RLIMIT_AS, the fallback, counts address space: Node fails below ~1 GiB)."""
PROCESSES = 64
"""Processes and threads together (a gRPC Python bot uses ~10 threads, a JVM ~30)."""
CPU_SECONDS = 600
"""Per process; the referee's wall clock is the real time limit, this stops a spinning
child the referee cannot see."""
CPU_CORES = 1.0
"""CPU bandwidth for the whole bot (cgroup quota): a busy loop or fork bomb cannot starve
the referee and the other bots."""
OPEN_FILES = 512
FILE_SIZE_MIB = 64
"""Largest file a bot may write (its tmpfs and its output logs are capped separately)."""
TMPFS_MIB = 64
"""The private writable /tmp (also HOME) of a bot."""
OUTPUT_BYTES = 1024 * 1024
"""Each of stdout and stderr is kept up to this size in the bot's log files."""
REFEREE_MEMORY_MIB = 1024
"""The cap on a process that referees matches (a season's worker, ``arena play``): ~10x
what a referee of ten seats uses, so that only a referee bug or an attack it failed to
bound can reach it, and then that process dies (its match fails and is played again at the
next run), not the host (``arena.sandbox.cgroups.cap_referee``)."""
OFF_TURN = ("throttle", "freeze", "run")
BUILD_SECONDS = 600
"""Wall-clock limit of a bot's build step."""


MOST = {"memory_mib": 1 << 20, "processes": 1 << 16, "cpu_seconds": 31_536_000,
        "cpu_cores": 1024, "open_files": 1 << 20, "file_size_mib": 1 << 20,
        "tmpfs_mib": 1 << 20, "output_bytes": 1 << 40, "build_seconds": 31_536_000}
"""The most each limit may be (a TiB, a year...): past that a value is a mistake, and past
what the kernel's limits hold it would stop every bot from starting."""


@dataclass(frozen=True)
class SandboxLimits:
    """What one bot process tree may use. Recorded in every match log header."""

    memory_mib: int = MEMORY_MIB
    processes: int = PROCESSES
    cpu_seconds: int = CPU_SECONDS
    cpu_cores: float = CPU_CORES
    open_files: int = OPEN_FILES
    file_size_mib: int = FILE_SIZE_MIB
    tmpfs_mib: int = TMPFS_MIB
    output_bytes: int = OUTPUT_BYTES
    build_seconds: int = BUILD_SECONDS
    build_network: bool = False
    """Let the build step reach the network (``npm ci`` needs the registry), through a
    network namespace of its own that does not reach the host (``network.py``); the bot
    itself never can. Off by default, in ``arena check``, ``arena play`` and seasons alike:
    a build then needs its dependencies in the bot folder (``arena vendor`` fetches them).
    Online, it reaches the package registries over HTTPS and nothing else (``egress.py``)."""
    build_hosts: tuple[str, ...] = ()
    """Hosts an online build may reach beyond the package registries (``egress.REGISTRIES``):
    a mirror, a private registry; a name or ``*.domain``, never an address."""
    fetch: bool = True
    """Fetch the dependencies of a bot with a lockfile (``package-lock.json``, ``go.sum``,
    ``Cargo.lock``, ``pom.xml``) before its build, from its ecosystem's registry alone
    (``arena.sandbox.fetch``); off: the build uses what ``arena vendor`` put in the folder."""
    registries: tuple[tuple[str, str], ...] = ()
    """(ecosystem, registry address) pairs that replace the standard registries of the fetch
    step (``fetch.STANDARD_REGISTRIES``); an empty address fetches nothing for it."""
    egress_only: bool = False
    """An online step that reaches ``build_hosts`` alone, not every registry (the fetch
    step reaches only its ecosystem's)."""
    off_turn: str = "throttle"
    """What a bot may do while it is not its turn (``OFF_TURN``): ``throttle`` (its cgroup's
    CPU quota drops to 1% until its turn: it cannot take CPU from the seat thinking; one
    write each way, nothing woken), ``freeze`` (the cgroup freezer: it gets no CPU at all
    and cannot watch the other think, but every thread of it is woken twice a turn, ~30%
    per decision here) or ``run``."""

    def __post_init__(self) -> None:
        if self.off_turn not in OFF_TURN:
            raise ValueError(f"sandbox limit off_turn must be one of {', '.join(OFF_TURN)}, "
                             f"not {self.off_turn!r}")
        try:
            if isinstance(self.build_hosts, str):
                raise TypeError
            hosts = tuple(dict.fromkeys(host_pattern(h) for h in self.build_hosts))
        except (TypeError, AttributeError):
            raise ValueError("sandbox limit build_hosts must be a list of host names") from None
        object.__setattr__(self, "build_hosts", hosts)
        try:
            registries = tuple((str(name), registry_address(str(name), str(address)))
                               for name, address in self.registries)
        except (TypeError, ValueError) as error:
            raise ValueError(f"sandbox limit {error}" if isinstance(error, ValueError) else
                             "sandbox limit registries must be (ecosystem, address) pairs"
                             ) from None
        object.__setattr__(self, "registries", registries)
        for field in dataclasses.fields(self):
            if field.name in ("off_turn", "build_hosts", "registries"):
                continue
            value = getattr(self, field.name)
            if isinstance(value, bool):
                continue
            if not 0 < value <= MOST[field.name]:  # NaN fails both
                raise ValueError(f"sandbox limit {field.name} must be positive and at most "
                                 f"{MOST[field.name]:,}, not {value!r}")

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MIB

    def egress_hosts(self) -> tuple[str, ...]:
        """What an online build's proxy lets it reach (``egress.py``)."""
        return self.build_hosts if self.egress_only else (*REGISTRIES, *self.build_hosts)

    def for_build(self) -> SandboxLimits:
        """Limits for the build step: compilers need more memory, processes and disk than a
        running bot; the build's own wall-clock limit is ``build_seconds``."""
        return dataclasses.replace(
            self, memory_mib=max(self.memory_mib, 2048), processes=max(self.processes, 256),
            cpu_seconds=max(self.cpu_seconds, self.build_seconds * 2),
            cpu_cores=max(self.cpu_cores, 2.0), open_files=max(self.open_files, 4096),
            file_size_mib=max(self.file_size_mib, 1024), tmpfs_mib=max(self.tmpfs_mib, 512))

    def to_record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


DEFAULT_LIMITS = SandboxLimits()
