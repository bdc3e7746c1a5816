"""Which process owns a leftover (a bot's cgroup, a match's temp folder, a season's lock).

A leftover is named or labelled with its owner's tag, ``PID.START``: the pid and the
process's start time (in clock ticks since boot, from ``/proc/PID/stat``). Pids are reused,
so a live process with the owner's pid is the owner only if it started at that moment too;
a start-up sweep removes what belongs to no live process (``arena.sandbox.sweep``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

TAG = re.compile(r"(\d+)\.(\d+)")


def start_ticks(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot); None if it is gone or a
    zombie (it runs nothing: as good as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its end.
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


_own_tags: dict[int, str] = {}


def owner_tag(pid: int | None = None) -> str:
    """``PID.START`` of process ``pid`` (default: this one)."""
    if pid is None:
        pid = os.getpid()  # a forked child has a pid of its own, hence a tag of its own
        if pid not in _own_tags:
            _own_tags[pid] = f"{pid}.{start_ticks(pid) or 0}"
        return _own_tags[pid]
    return f"{pid}.{start_ticks(pid) or 0}"


def is_alive(pid: int, ticks: int) -> bool:
    """Whether the process that had ``pid`` and started at ``ticks`` still runs."""
    return start_ticks(pid) == ticks


def tag_is_alive(tag: str) -> bool:
    """Whether the owner named by a ``PID.START`` tag still runs."""
    match = TAG.fullmatch(tag)
    return match is not None and is_alive(int(match[1]), int(match[2]))


def raise_descriptor_limit() -> None:
    """The soft limit of open files (often 1,024) raised to the hard one. Every connection
    holds a descriptor until it ends: a referee whose soft limit a bot's connections reach
    refuses the other bots' (a bot holding a thousand connections to its own socket would
    have its slower opponent disqualified for no hello), and the league server
    keeps idle connections until they close."""
    import contextlib
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
