"""The hostile-bot suite: every attack of issues 4 and 16, under bubblewrap and under the
fallback (with the organiser's opt-in: the fallback refuses untrusted bots).

Each case plays a real match (to 100) between a hostile bot and the greedy sample bot, both
sandboxed by the backend under test, and asserts:

* the match completes, with the hostile bot's fault recorded (in the outcome and the log);
* the attack is contained: what the hostile bot reports it achieved, and what the test sees
  on the host (no file created outside, no TCP connection on the host's 127.0.0.1);
* the other bot is untouched: it played the whole match without a fault, its folder is
  unchanged;
* no process is left: not the sandboxes, not anything under the bots' uids or in their
  cgroups, not a detached child carrying the test's marker.

Where the fallback cannot contain an attack (it shows the host's files as an unprivileged
user sees them), the case asserts what really happens, so the table in
``docs/sandbox.md`` stays true.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.referee.faults import FaultKind
from arena.referee.log import read_log
from arena.sandbox.bubblewrap import runtime_paths
from arena.sandbox.manifest import BotManifest
from arena.sandbox.process import SandboxProcess

from .conftest import LIMITS, ROOT, SYSTEM_TARGETS, HostileArena

MIB = 1024 * 1024
Check = Callable[[HostileArena], None]


@dataclass(frozen=True)
class Attack:
    mode: str
    fault: FaultKind | None
    """The hostile seat's first fault (None: it plays on without one)."""
    disqualified: bool | None
    """None: the check decides (the backends differ)."""
    check: Check | None = None
    before: frozenset[FaultKind] = frozenset()
    """Faults a loaded machine may record before ``fault`` (a bot slowed down by its own
    attack may time out first); what must hold is that ``fault`` comes."""


def refused(report: dict[str, object], *codes: int) -> None:
    assert report["ok"] is False, report
    if codes:
        assert report["errno"] in codes, report


# -- the checks, one per attack that needs more than the fault ---------------------------

def memory_cap_killed(arena: HostileArena) -> None:
    process = arena.hostile_process
    assert isinstance(process, SandboxProcess) and process.memory_kills >= 1
    assert process.exit_note().startswith("the memory cap killed")
    assert "allocate 2 GiB" not in arena.reports(), "the allocation succeeded"
    assert "memory cap killed" in arena.output("stderr")


def fork_bomb_capped(arena: HostileArena) -> None:
    bomb = arena.reports()["fork bomb"]["result"]
    assert bomb["error"] == "EAGAIN", bomb
    assert 0 < bomb["peak"] <= LIMITS.processes, bomb
    hostile = arena.outcome.seats[0] if arena.outcome else None
    assert hostile is not None
    # The bomb hurts only its own bot: until the orphans' zombies are reaped (by
    # bubblewrap's init, or never when the bot is init of its pid namespace) they hold
    # its pids cap, so on a loaded machine the bot may fail to start the threads its
    # hello needs. Either way the match completes and the host is untouched.
    assert [f.kind for f in hostile.faults] in ([], [FaultKind.NO_HELLO])


def no_tcp_to_localhost(arena: HostileArena) -> None:
    report = arena.reports()["tcp 127.0.0.1"]
    if arena.backend == "bubblewrap":
        refused(report, errno.EAFNOSUPPORT)  # the seccomp filter
    else:
        refused(report, errno.ENETUNREACH, errno.ECONNREFUSED)  # an empty network namespace
    assert arena.accepted == [], "the host's 127.0.0.1 saw a connection"


def no_tcp_outside(arena: HostileArena) -> None:
    reports = arena.reports()
    for what in ("tcp 1.1.1.1:53", "udp 8.8.8.8:53"):
        if arena.backend == "bubblewrap":
            refused(reports[what], errno.EAFNOSUPPORT)
        else:
            refused(reports[what], errno.ENETUNREACH)
    if arena.backend == "bubblewrap":
        refused(reports["raw netlink"], errno.EAFNOSUPPORT)
    else:  # allowed, but only sees the empty namespace
        assert reports["raw netlink"]["ok"] is True


def no_name_resolution(arena: HostileArena) -> None:
    refused(arena.reports()["resolve example.com"])


def nothing_written_outside(arena: HostileArena) -> None:
    reports = arena.reports()
    for what, report in reports.items():
        if what.startswith("write ") and what != "write /tmp/mine":
            refused(report)
    assert reports["write /tmp/mine"]["ok"] is True  # its private /tmp
    assert not arena.host_file.exists(), "a world-writable host folder was written"
    assert not (arena.hostile_folder / "pwned").exists()
    for path in SYSTEM_TARGETS:
        assert not Path(path).exists(), path
    if arena.backend == "fallback":  # its own folder is there, but not its to write
        refused(reports[f"write {arena.hostile_folder / 'pwned'}"], errno.EACCES)


def other_bot_unreadable(arena: HostileArena) -> None:
    reports = arena.reports()
    for what in ("list other bot", "read other secret", "read other bot.py"):
        # Not mounted (bubblewrap); masked with the closed folder of entrants (fallback).
        refused(reports[what], errno.ENOENT)


def runtime_folders_in(folder: Path) -> list[str]:
    """The entries of ``folder`` a Python bot's bubblewrap sandbox binds (its runtimes)."""
    bot = BotManifest(folder=Path("/nonexistent"), name="probe", version="0",
                      language="python", run=("python3", "bot.py"))
    found = {path.relative_to(folder).parts[0]
             for path in runtime_paths(bot, [sys.executable, "bot.py"])
             if folder.resolve() in path.parents}
    return sorted(found)


def referee_files_hidden(arena: HostileArena) -> None:
    reports = arena.reports()
    assert reports["list socket dir"]["result"] == ["referee.sock"]
    refused(reports["see the referee process"])  # a private /proc in both backends
    refused(reports["read match log"], errno.ENOENT)
    refused(reports["list logs dir"], errno.ENOENT)
    # /root and the checkout show only the runtime folders bound in (wherever this
    # interpreter lives: a pyenv or a virtualenv under /root, or elsewhere).
    in_root = runtime_folders_in(Path("/root"))
    if in_root:
        assert reports["read /root"]["ok"] is False or \
            reports["read /root"]["result"] == in_root
    else:
        assert reports["read /root"]["ok"] is False
    if arena.backend == "bubblewrap":
        assert reports["read the checkout"]["result"] == runtime_folders_in(ROOT)
    elif any(ROOT.resolve().is_relative_to(private)
             for private in ("/tmp", "/var/tmp", "/dev/shm")):
        # A checkout (a CI clone) under a folder the fallback masks for each bot (its
        # own private copy, or the match's folder of mode 0700 above it).
        refused(reports["read the checkout"], errno.ENOENT, errno.EACCES)
    else:  # what others may read on the host, the fallback shows: documented
        assert reports["read the checkout"]["ok"] is True
        assert len(reports["read the checkout"]["result"]) > 1


def socket_kept(arena: HostileArena) -> None:
    reports = arena.reports()
    refused(reports["move the referee's socket"])
    refused(reports["plant a socket beside it"])
    if arena.backend == "fallback":  # its own folder in the match's: the others are hidden
        refused(reports["list the socket folders"], errno.EACCES)


def cgroup_kept(arena: HostileArena) -> None:
    reports = arena.reports()
    attempts = [what for what in reports if what.startswith(("leave the", "raise "))]
    if arena.backend == "fallback":  # bubblewrap: a cgroup namespace, no /sys at all
        assert len(attempts) >= 2, reports["cgroups"]
    for what in attempts:
        refused(reports[what])
    refused(reports["any cgroup file writable"])


def secrets_unreadable(arena: HostileArena) -> None:
    reports = arena.reports()
    refused(reports["read /etc/shadow"])
    refused(reports["read a root-only file"])
    assert reports["list /root"]["ok"] is False or reports["list /root"]["result"] == [
        ".pyenv"], reports["list /root"]


def counters_neutral(arena: HostileArena) -> None:
    counters = arena.reports()["kernel counters"]["result"]
    if arena.backend == "bubblewrap":  # fixed copies: nothing moves, nothing of the host
        assert counters["changed"] == [], counters
        # Nor anything else of /proc (/proc/sys/kernel/pty/nr could carry a hidden hand
        # between two bots): what is shown is fixed, the rest hidden.
        assert counters["moved"] == [] and counters["read"] > 10, counters
        assert counters["loadavg"] == "0.00 0.00 0.00 1/1 1\n"
        assert counters["uptime"] == "0.00 0.00\n"
        assert counters["memtotal"].split()[1] == str(LIMITS.memory_bytes // 1024)
    else:  # the fallback shows the host's: documented
        assert counters["uptime"] != "0.00 0.00\n"
        assert counters["changed"], counters


def shared_locks_refused(arena: HostileArena) -> None:
    locks = {what: r for what, r in arena.reports().items() if "lock" in what}
    assert len(locks) >= 4, locks
    for report in locks.values():
        if arena.backend == "bubblewrap":
            refused(report, errno.ENOLCK)  # the seccomp filter
        else:  # no seccomp filter in the fallback: documented
            assert report["ok"] is True, report


def impostor_refused(arena: HostileArena) -> None:
    reports = arena.reports()
    assert reports["tokens seen in /proc"]["result"] == []
    for label in ("forged", "flipped"):
        report = reports[f"hello with a {label} token"]
        refused(report)
        assert "PERMISSION_DENIED" in str(report["error"]) or "unknown or used token" in \
            str(report["error"]), report


def second_hello_refused(arena: HostileArena) -> None:
    report = arena.reports()["hello again with my token"]
    refused(report)
    assert "unknown or used token" in str(report["error"])


def reconnect_refused(arena: HostileArena) -> None:
    reports = arena.reports()
    for what in ("reconnect with my token", "reconnect and play on"):
        refused(reports[what])


def detached_child_started(arena: HostileArena) -> None:
    assert arena.reports()["detached child"]["ok"] is True  # and assert_none_left sees it gone


def tmp_capped(arena: HostileArena) -> None:
    fill = arena.reports()["fill tmp"]["result"]
    assert fill["error"] == "ENOSPC", fill  # a private tmpfs in both backends
    assert fill["written"] <= LIMITS.tmpfs_mib * MIB


def output_capped(arena: HostileArena) -> None:
    size = (arena.logs / "hostile.stdout.log").stat().st_size
    assert LIMITS.output_bytes <= size <= LIMITS.output_bytes + 100
    assert arena.output().rstrip().endswith("[output truncated by the referee]")


ATTACKS = [
    Attack("crash-at-start", FaultKind.NO_HELLO, True),
    Attack("crash-mid-match", FaultKind.DISCONNECTED, True),
    Attack("hang-forever", FaultKind.TIMEOUT, True),
    Attack("busy-loop", FaultKind.TIMEOUT, True),
    Attack("allocate-2gib", FaultKind.DISCONNECTED, True, memory_cap_killed,
           frozenset({FaultKind.TIMEOUT})),
    Attack("fork-bomb", None, None, fork_bomb_capped),
    Attack("tcp-localhost", None, False, no_tcp_to_localhost),
    Attack("tcp-outside", None, False, no_tcp_outside),
    Attack("resolve-hostname", None, False, no_name_resolution),
    Attack("write-outside-tmp", None, False, nothing_written_outside),
    Attack("read-other-bot", None, False, other_bot_unreadable),
    Attack("read-referee-files", None, False, referee_files_hidden),
    Attack("garbage-bytes", FaultKind.NO_HELLO, True),
    Attack("oversize-message", FaultKind.DISCONNECTED, True),
    Attack("read-kernel-counters", None, False, counters_neutral),
    Attack("lock-shared-files", None, False, shared_locks_refused),
    Attack("take-socket", None, False, socket_kept),
    Attack("leave-cgroup", None, False, cgroup_kept),
    Attack("read-secrets", None, False, secrets_unreadable),
    Attack("impersonate-token", None, False, impostor_refused),
    Attack("reuse-token", None, False, second_hello_refused),
    Attack("out-of-turn", FaultKind.OUT_OF_TURN, False),
    Attack("illegal-action", FaultKind.ILLEGAL_ACTION, False),
    Attack("disconnect-reconnect", FaultKind.DISCONNECTED, True, reconnect_refused),
    Attack("detached-child", None, False, detached_child_started),
    Attack("fill-tmp", None, False, tmp_capped),
    Attack("print-gigabytes", None, False, output_capped),
]


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.mode for a in ATTACKS])
def test_attack_is_contained(arena: HostileArena, attack: Attack) -> None:
    outcome = arena.play(attack.mode)
    hostile = outcome.seats[0]
    kinds = [fault.kind for fault in hostile.faults]
    if attack.disqualified is not None:
        if attack.fault is None:
            assert kinds == [], hostile.faults
        else:
            assert [k for k in kinds if k not in attack.before][:1] == [attack.fault], (
                hostile.faults)
        assert hostile.disqualified is attack.disqualified
    if hostile.disqualified:
        assert outcome.places == (2, 1), "a disqualified bot is ranked last (§20)"
    arena.assert_match_completed()
    logged = [r for r in read_log(arena.log_path) if r["type"] == "fault"]
    assert [r["kind"] for r in logged] == [k.name.lower() for k in kinds]
    header = arena.sandbox_header()
    assert header["backend"] == arena.backend
    if arena.backend == "fallback":
        assert any("FALLBACK" in warning for warning in header["warnings"])
    if attack.check is not None:
        attack.check(arena)
    arena.assert_none_left()
