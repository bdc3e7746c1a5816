"""The bubblewrap backend process by process: what a sandboxed command sees and may do."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.grpc_env import GRPC_ENVIRONMENT
from arena.sandbox import (
    BotManifest,
    BubblewrapLauncher,
    SandboxError,
    SandboxLimits,
    cgroups,
    make_launcher,
)
from arena.sandbox.cgroups import BotCgroups
from arena.sandbox.process import Launcher, SandboxProcess, Standby


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    bot = tmp_path / "bot"
    bot.mkdir()
    bot.chmod(0o755)
    (bot / "data.txt").write_text("mine\n")
    return bot


def launcher(folder: Path, tmp_path: Path, limits: SandboxLimits | None = None,
             run: tuple[str, ...] = ("true",)) -> BubblewrapLauncher:
    manifest = BotManifest(folder=folder, name="probe", version="1", language="python",
                           run=run)
    made = make_launcher("bubblewrap", manifest, limits or SandboxLimits(), tmp_path / "logs",
                         "probe")
    assert isinstance(made, BubblewrapLauncher)
    return made


def run(made: BubblewrapLauncher, argv: list[str], env: dict[str, str] | None = None,
        socket_dir: Path | None = None, timeout: float = 30) -> tuple[int, str, str]:
    process = made.start(argv, env or {}, socket_dir)
    try:
        code = process.wait(timeout)
    finally:
        process.kill()
    return (code, process.stdout_path.read_text(), process.stderr_path.read_text())


def test_environment_is_the_protocol_and_a_few_basics(folder: Path, tmp_path: Path) -> None:
    code, out, err = run(launcher(folder, tmp_path),
                         [sys.executable, "-c", "import json, os; print(json.dumps(dict("
                                                "os.environ)))"],
                         {"ARENA_TOKEN": "t", "ARENA_SEAT": "0"})
    assert code == 0, err
    env = json.loads(out)
    assert set(env) - {"PWD"} == {"PATH", "HOME", "LANG", "PYTHONDONTWRITEBYTECODE",
                                  "GRPC_EXPERIMENTS", "PYTHONPATH", "ARENA_TOKEN", "ARENA_SEAT"}
    assert env["HOME"] == "/tmp" and env["ARENA_TOKEN"] == "t"
    assert env["GRPC_EXPERIMENTS"] == GRPC_ENVIRONMENT["GRPC_EXPERIMENTS"]


def test_python_bots_load_the_sdk_from_bytecode(folder: Path, tmp_path: Path) -> None:
    """They cannot write bytecode themselves: the referee writes it for them, once."""
    import importlib.util

    import arena.bots.sdk
    from arena.sandbox.environment import compile_sdk

    cached = Path(importlib.util.cache_from_source(arena.bots.sdk.__file__))
    cached.unlink(missing_ok=True)
    compile_sdk.cache_clear()
    made = launcher(folder, tmp_path, run=("python3", "bot.py"))
    code, _, err = run(made, [sys.executable, "-v", "-c", "import arena.bots.sdk"])
    assert code == 0, err
    assert f"code object from '{cached}'" in err, "the SDK was compiled from source"


def test_socket_folder_is_bound_and_the_address_rewritten(folder: Path, tmp_path: Path
                                                          ) -> None:
    sockets = tmp_path / "sockets"
    sockets.mkdir()
    sockets.chmod(0o755)
    (sockets / "referee.sock").write_text("")
    code, out, _ = run(launcher(folder, tmp_path),
                       ["/bin/sh", "-c", 'echo "$ARENA_ADDRESS"; ls /run/arena; pwd; ls'],
                       {"ARENA_ADDRESS": f"unix:{sockets}/referee.sock"}, sockets)
    assert code == 0
    assert out.split() == ["unix:/run/arena/referee.sock", "referee.sock", "/bot", "data.txt"]


def test_each_start_has_its_own_unprivileged_uid(folder: Path, tmp_path: Path) -> None:
    made = launcher(folder, tmp_path)
    uids = {run(made, ["/usr/bin/id", "-u"])[1].strip() for _ in range(3)}
    assert len(uids) == 3 and "0" not in uids


def test_no_capabilities_no_new_privileges_default_signals(folder: Path, tmp_path: Path
                                                           ) -> None:
    # A referee started by nohup or in a shell's background ignores SIGHUP and SIGQUIT
    # (and SIGINT): what its launcher inherits, a bot must not.
    ignored = {kind: signal.signal(kind, signal.SIG_IGN)
               for kind in (signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)}
    try:
        made = launcher(folder, tmp_path)
    finally:
        for kind, before in ignored.items():
            signal.signal(kind, before)
    _, out, _ = run(made, ["/bin/cat", "/proc/self/status"])
    status = dict(line.split(":\t", 1) for line in out.splitlines() if ":\t" in line)
    assert status["CapEff"].strip() == status["CapBnd"].strip() == "0000000000000000"
    assert status["NoNewPrivs"].strip() == "1"
    assert status["Seccomp"].strip() == "2"
    assert status["SigIgn"].strip() == "0000000000000000", "a bot gets default signals"


def test_sockets_other_than_unix_are_refused(folder: Path, tmp_path: Path) -> None:
    script = ("import socket\n"
              "a, b = socket.socketpair(); a.send(b'x'); print(b.recv(1))\n"
              "for family in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, "
              "socket.AF_PACKET):\n"
              "    try: socket.socket(family, socket.SOCK_DGRAM)\n"
              "    except OSError as error: print(error.errno)\n")
    code, out, err = run(launcher(folder, tmp_path), [sys.executable, "-c", script])
    assert code == 0, err
    assert out.split() == ["b'x'", "97", "97", "97", "97"]  # EAFNOSUPPORT


def test_cpu_seconds_stop_a_spinning_process(folder: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    code, _, _ = run(launcher(folder, tmp_path, SandboxLimits(cpu_seconds=1)),
                     ["/bin/sh", "-c", "while :; do :; done"], timeout=20)
    assert code != 0
    assert time.monotonic() - started < 10


def test_a_file_beyond_the_size_limit_is_refused(folder: Path, tmp_path: Path) -> None:
    code, _, err = run(launcher(folder, tmp_path, SandboxLimits(file_size_mib=1)),
                       [sys.executable, "-c", "open('/tmp/big', 'wb').write(b'x' * (2 << 20))"])
    assert code != 0 and "File too large" in err


def test_cgroups_are_removed_when_the_bot_is_killed(folder: Path, tmp_path: Path) -> None:
    made = launcher(folder, tmp_path)
    process = made.start(["/bin/sleep", "60"], {}, None)
    assert isinstance(process, SandboxProcess)
    assert process.cgroups is not None
    folders = list(process.cgroups.directories.values())
    assert all(f.is_dir() for f in folders)
    assert process.poll() is None
    process.kill()
    assert process.poll() is not None
    assert not any(f.exists() for f in folders)
    assert process.leftover_pids() == set()


def wait_until(condition: Callable[[], object], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def standbys_like(process: SandboxProcess, count: int = 1) -> list[Standby]:
    """The standbys of the process's kind, once ``count`` are ready (they are prepared
    in the background after each start)."""
    assert process.cgroups is not None
    kind = process.cgroups.kind
    wait_until(lambda: len(Launcher.get().standbys.get(kind, [])) >= count)
    return Launcher.get().standbys.get(kind, [])


def test_a_bot_starts_from_a_standby_already_in_its_cgroups(folder: Path, tmp_path: Path
                                                           ) -> None:
    made = launcher(folder, tmp_path, SandboxLimits(memory_mib=301))  # a kind of its own
    first = made.start(["/bin/sleep", "60"], {}, None)
    assert isinstance(first, SandboxProcess)
    [standby] = standbys_like(first)
    wait_until(lambda: standby.pid in standby.cgroups.pids())  # joined while it waits
    second = made.start(["/bin/sleep", "60"], {}, None)
    assert isinstance(second, SandboxProcess)
    try:
        assert (second.pid, second.cgroups) == (standby.pid, standby.cgroups)
        # bwrap, its pid namespace's init and the bot: every one counted
        wait_until(lambda: len(second.leftover_pids()) == 3)
        [following] = standbys_like(second)
        third = made.start(["/bin/echo", "started"], {}, None)
        assert third.pid == following.pid
        assert third.wait(10) == 0
        third.kill()
        assert third.stdout_path.read_text() == "started\n"
    finally:
        first.kill()
        second.kill()
    # Gone once the kernel has reaped them (a loaded machine takes a moment).
    wait_until(lambda: second.leftover_pids() == set())
    assert not any(folder.exists() for folder in standby.cgroups.directories.values())


def test_a_standby_that_died_is_not_used(folder: Path, tmp_path: Path) -> None:
    made = launcher(folder, tmp_path, SandboxLimits(memory_mib=302))
    first = made.start(["/usr/bin/true"], {}, None)
    first.kill()
    [dead] = standbys_like(first)
    os.kill(dead.pid, signal.SIGKILL)
    wait_until(lambda: dead.pid in Launcher.get().exits)
    code, out, _ = run(made, ["/bin/echo", "fresh"])
    assert (code, out) == (0, "fresh\n")
    assert not any(folder.exists() for folder in dead.cgroups.directories.values())


def test_a_standby_gone_when_its_plan_arrives_is_replaced_by_a_fresh_start(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = launcher(folder, tmp_path, SandboxLimits(memory_mib=303))
    first = made.start(["/usr/bin/true"], {}, None)
    first.kill()
    standbys_like(first)  # one is ready
    handed_out = Launcher.bot_cgroups

    def dies_on_the_way(self: Launcher, *args: Any) -> BotCgroups:
        cgroups = handed_out(self, *args)
        pid = self.handed_out[cgroups.procs_files()[0]]
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: pid in self.exits)
        return cgroups

    monkeypatch.setattr(Launcher, "bot_cgroups", dies_on_the_way)
    code, out, _ = run(made, ["/bin/echo", "fresh"])
    assert (code, out) == (0, "fresh\n")


def test_a_reused_pid_does_not_inherit_an_earlier_processs_exit() -> None:
    """Pids come round again once reaped (pid_max is 32,768 here): a bot started under the
    pid of a process that exited earlier in the season is running, not exited, so it is
    not taken for a bot that died before its hello. The launcher's reports are fed by
    hand: the earlier process's exit, then the new start under the same pid."""
    client = Launcher.__new__(Launcher)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)

    class Ended:
        def wait(self, timeout: float) -> int:
            return 0

    client.socket, client.process, client.gone = ours, Ended(), False
    client.replies, client.exits = queue.SimpleQueue(), {}
    client.changed, client.send_lock = threading.Condition(), threading.Lock()
    client.standbys, client.handed_out = {}, {}
    reader = threading.Thread(target=client._read, daemon=True)
    reader.start()
    theirs.send(b"X 4242 0")
    wait_until(lambda: client.returncode(4242) == 0)
    theirs.send(b"P 4242")
    assert client.replies.get(timeout=5) == 4242
    assert client.returncode(4242) is None, "the new process under pid 4242 runs"
    theirs.send(b"X 4242 -9")
    assert client.wait(4242, 5) == -9
    theirs.close()
    reader.join(5)
    assert client.gone


def test_standbys_end_with_their_referee(tmp_path: Path) -> None:
    host = cgroups.detect()
    assert host is not None
    referee = Launcher()  # a referee's own launcher process
    referee.prepare_standby(BotCgroups(host, SandboxLimits(memory_mib=304)))
    [standby] = [s for pool in referee.standbys.values() for s in pool]
    wait_until(lambda: standby.pid in standby.cgroups.pids())
    referee.socket.shutdown(socket.SHUT_RDWR)  # the referee is gone
    assert referee.process.wait(10) == 0
    wait_until(lambda: not standby.cgroups.pids())
    assert not any(folder.exists() for folder in standby.cgroups.directories.values())


def test_an_unreadable_bot_folder_is_a_clear_error(folder: Path, tmp_path: Path) -> None:
    folder.chmod(0o700)
    with pytest.raises(SandboxError, match="chmod -R o\\+rX"):
        launcher(folder, tmp_path)


def test_a_command_outside_the_bot_folder_is_a_clear_error(folder: Path, tmp_path: Path
                                                           ) -> None:
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text("print(1)\n")
    with pytest.raises(SandboxError, match="outside the bot folder"):
        launcher(folder, tmp_path, run=("python3", str(elsewhere)))


def test_a_dead_launcher_process_is_replaced(folder: Path, tmp_path: Path) -> None:
    made = launcher(folder, tmp_path)
    assert run(made, ["/usr/bin/true"])[0] == 0
    old = Launcher.get()
    os.kill(old.process.pid, signal.SIGKILL)
    old.process.wait(5)
    deadline = time.monotonic() + 5
    while not old.gone and time.monotonic() < deadline:
        time.sleep(0.01)
    assert run(made, ["/usr/bin/true"])[0] == 0
    assert Launcher.get() is not old
