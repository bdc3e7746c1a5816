"""The launcher process: a small single-threaded process that starts every sandboxed bot.

The referee is a threaded gRPC server, where ``preexec_fn`` is unsafe and forking is not
done. So each referee process starts this script once (``python -I -S spawn.py FD``,
standard library only) and asks it, over the Unix socket FD (SOCK_SEQPACKET), to start
bots. For each request (a plan, and file descriptors passed along with it) the launcher
forks a child that prepares itself, then becomes the sandbox:

1. its own session; stdin /dev/null, stdout and stderr the referee's log pipes, the plan's
   files (bubblewrap's arguments, the seccomp program, ...) at fds 3, 4, ...; nothing else;
2. joins the bot's cgroups, before it starts anything, so every process of the bot counts;
3. sets the resource limits (inherited by everything it starts);
4. for bubblewrap with a distinct uid: creates a user namespace owned by that uid in which
   the host's root and the bot's uid are mapped (root must be mapped so bubblewrap, which
   has every capability inside, may bind folders under the mode-700 /root), and hands its
   file descriptor to ``bwrap --userns``;
5. drops to the bot's uid and gid (no supplementary groups);
6. executes the sandbox command (bwrap, or unshare for the fallback) with exactly the
   environment of the plan.

The launcher answers ``P PID`` to each request and reports ``X PID EXITCODE`` when a child
ends (a negative code: killed by that signal). When the referee goes away (end of file on
the socket) it kills every bot it started and exits; bubblewrap's --die-with-parent ties
the bots to it in turn.

Moving a process into a cgroup waits for an RCU grace period (the kernel's threadgroup
lock: 5-20 ms here, each time the lock has been idle), so bots can start from *standbys*:
``standby`` followed by a plan's cgroup fields forks a child that joins those cgroups at
once and then waits; ``use PID`` followed by a whole plan hands the plan (and the
descriptors) to standby PID, which becomes the sandbox without joining again. If that
standby is gone, the plan starts a fresh child as usual. Either way the answer is ``P PID``.

A plan is a list of NUL-terminated fields: ``cgroup PROCS_FILE``, ``rlimit NUMBER SOFT
HARD``, ``uid UID``, ``userns PLACEHOLDER`` (an argument to replace with the namespace's fd
number), ``mask DIR OPTIONS`` and ``reveal PATH`` (the fallback's private mount namespace,
see ``private_mounts``), ``env NAME VALUE``, ``chdir DIR``, then ``argv COUNT ARG...``.
The descriptors sent with it are the bot's stdout and stderr, then the plan's files.
"""

import os
import resource
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # the typing module is not imported at run time: start-up time matters
    from collections.abc import Callable
    from typing import NoReturn

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
EXIT_SETUP_FAILED = 125
FIRST_FILE = 3


class Plan:
    def __init__(self) -> None:
        self.cgroups: list[str] = []
        self.rlimits: list[tuple[int, int, int]] = []
        self.uid: int | None = None
        self.userns: str | None = None
        self.argv: list[str] = []
        self.env: dict[str, str] = {}
        self.chdir: str | None = None
        self.masks: list[tuple[str, str]] = []
        self.reveals: list[str] = []


def fail(what: str, error: object) -> "NoReturn":
    sys.stderr.write(f"arena sandbox launcher: {what}: {error}\n")
    sys.stderr.flush()
    os._exit(EXIT_SETUP_FAILED)


def parse(data: bytes, command: bool = True) -> Plan:
    fields = data.decode("utf-8", "surrogateescape").split("\0")
    plan = Plan()
    index = 0
    while index < len(fields) and fields[index]:
        key = fields[index]
        if key == "cgroup":
            plan.cgroups.append(fields[index + 1])
            index += 2
        elif key == "rlimit":
            number, soft, hard = (int(v) for v in fields[index + 1:index + 4])
            plan.rlimits.append((number, soft, hard))
            index += 4
        elif key == "uid":
            plan.uid = int(fields[index + 1])
            index += 2
        elif key == "userns":
            plan.userns = fields[index + 1]
            index += 2
        elif key == "env":
            plan.env[fields[index + 1]] = fields[index + 2]
            index += 3
        elif key == "chdir":
            plan.chdir = fields[index + 1]
            index += 2
        elif key == "mask":
            plan.masks.append((fields[index + 1], fields[index + 2]))
            index += 3
        elif key == "reveal":
            plan.reveals.append(fields[index + 1])
            index += 2
        elif key == "argv":
            count = int(fields[index + 1])
            plan.argv = fields[index + 2:index + 2 + count]
            index += 2 + count
        else:
            raise ValueError(f"unknown field {key!r}")
    if command and not plan.argv:
        raise ValueError("no command")
    return plan


def user_namespace(uid: int, unshare: "Callable[[int], int]") -> int:
    """A user namespace owned by ``uid`` with root and ``uid`` mapped; its fd."""
    ready_read, ready_write = os.pipe()
    done_read, done_write = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(ready_read)
            os.close(done_write)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            if unshare(CLONE_NEWUSER) != 0:
                os.write(ready_write, b"e")
                os._exit(1)
            os.write(ready_write, b"k")
            os.read(done_read, 1)
        finally:
            os._exit(0)
    os.close(ready_write)
    os.close(done_read)
    try:
        if os.read(ready_read, 1) != b"k":
            fail("creating the user namespace", "unshare(CLONE_NEWUSER) was refused")
        mapping = f"0 0 1\n{uid} {uid} 1\n"
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{child}/{name}", "w") as file:
                file.write(mapping)
        descriptor = os.open(f"/proc/{child}/ns/user", os.O_RDONLY)
        os.set_inheritable(descriptor, True)
        return descriptor
    finally:
        os.close(done_write)
        os.waitpid(child, 0)
        os.close(ready_read)


def private_mounts(masks: "list[tuple[str, str]]", reveals: list[str]) -> None:
    """In a mount namespace of its own: an empty tmpfs (mount ``OPTIONS``) over each masked
    folder, then each revealed path bound back at its own place. The paths are opened
    before anything is masked, and bound from those descriptors, so no path is looked up
    again once the masks are on."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def mount(source: "str | None", target: str, kind: "str | None", flags: int,
              data: "str | None") -> None:
        if libc.mount(None if source is None else source.encode(), target.encode(),
                      None if kind is None else kind.encode(), ctypes.c_ulong(flags),
                      None if data is None else data.encode()) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"mount {source} on {target}: {os.strerror(error)}")

    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS) was refused")
    mount(None, "/", None, MS_REC | MS_PRIVATE, None)  # nothing leaks back to the host
    opened = [(path, os.open(path, os.O_PATH | os.O_CLOEXEC)) for path in reveals]
    for folder, options in masks:
        mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, options)
    for path, descriptor in opened:
        if not os.path.isdir(f"/proc/self/fd/{descriptor}"):
            raise OSError(f"{path} is not a folder")
        folder = "/"
        for part in path.strip("/").split("/"):  # traversable, not listable
            folder = os.path.join(folder, part)
            if not os.path.isdir(folder):
                os.mkdir(folder, 0o711)
        mount(f"/proc/self/fd/{descriptor}", path, None, MS_BIND | MS_REC, None)
        os.close(descriptor)


def join(cgroups: list[str]) -> None:
    pid = str(os.getpid())
    for procs in cgroups:
        try:
            with open(procs, "w") as file:
                file.write(pid)
        except OSError as error:
            fail(f"joining the cgroup {procs}", error)


def park(channel: int, data: bytes, unshare: "Callable[[int], int]") -> "NoReturn":
    """In a standby child: join the plan's cgroups now, then wait on ``channel`` for the
    plan that makes it a sandbox (end of file: the launcher is gone, and so is it)."""
    import socket

    os.dup2(channel, FIRST_FILE)
    os.closerange(FIRST_FILE + 1, 1 << 16)  # the other standbys' channels among them
    try:
        join(parse(data, command=False).cgroups)
    except (ValueError, IndexError) as error:
        fail("reading the standby's cgroups", error)
    with socket.socket(fileno=FIRST_FILE) as launcher:
        try:
            plan, fds, _, _ = socket.recv_fds(launcher, 1 << 20, 64)
        except OSError:
            plan, fds = b"", []
    if not plan:
        os._exit(0)
    become(plan, fds, unshare, joined=True)


def become(data: bytes, fds: list[int], unshare: "Callable[[int], int]",
           joined: bool = False) -> "NoReturn":
    """In the forked child: set up as the plan says, then execute its command. ``joined``:
    a standby, already in the plan's cgroups."""
    import contextlib
    import signal

    signal.set_wakeup_fd(-1)
    # A bot gets the default of every signal, whatever the referee inherited or set:
    # Python ignores SIGPIPE and SIGXFSZ, the launcher SIGINT, and a referee started by
    # nohup or in a shell's background ignores SIGHUP, SIGINT and SIGQUIT (an ignored
    # signal stays ignored across exec).
    for kind in signal.valid_signals():
        if kind not in (signal.SIGKILL, signal.SIGSTOP):
            with contextlib.suppress(OSError, ValueError):  # the C library's own
                signal.signal(kind, signal.SIG_DFL)
    os.setsid()
    # The received descriptors out of the way first (the launcher's own are few and low),
    # then into place: stdout, stderr, then the plan's files at 3, 4, ...
    moved = [os.dup2(fd, 1000 + index) for index, fd in enumerate(fds)]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for target, fd in enumerate(moved[:2], start=1):
        os.dup2(fd, target)
    files = moved[2:]
    for offset, fd in enumerate(files):
        os.dup2(fd, FIRST_FILE + offset)
    os.closerange(FIRST_FILE + len(files), 1 << 16)
    try:
        plan = parse(data)
    except (ValueError, IndexError) as error:
        fail("reading the plan", error)
    if not joined:
        join(plan.cgroups)
    for number, soft, hard in plan.rlimits:
        try:
            resource.setrlimit(number, (soft, hard))
        except (OSError, ValueError) as error:
            fail(f"setting resource limit {number} to {soft}/{hard}", error)
    if plan.masks:
        try:
            private_mounts(plan.masks, plan.reveals)
        except OSError as error:
            fail("setting up the private mounts", error)
    argv = list(plan.argv)
    uid = plan.uid
    try:
        if plan.userns is not None and uid is not None:
            descriptor = str(user_namespace(uid, unshare))
            argv = [descriptor if arg == plan.userns else arg for arg in argv]
        if uid is not None:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
    except OSError as error:
        fail(f"switching to uid {uid}", error)
    try:
        if plan.chdir is not None:
            os.chdir(plan.chdir)
        os.execve(argv[0], argv, plan.env)
    except OSError as error:
        fail(f"executing {argv[0]}", error)


def serve(control_fd: int) -> None:
    import contextlib
    import ctypes
    import select
    import signal
    import socket
    import time

    unshare = ctypes.CDLL(None, use_errno=True).unshare
    control = socket.socket(fileno=control_fd)
    wakeup_read, wakeup_write = os.pipe()
    os.set_blocking(wakeup_read, False)
    os.set_blocking(wakeup_write, False)
    signal.set_wakeup_fd(wakeup_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the referee decides; EOF ends us
    children: dict[int, list[str]] = {}
    """Live children, with their cgroup folders (removed here if the referee dies)."""
    standbys: dict[int, socket.socket] = {}
    """Standbys waiting for a plan, with the channel to send it on."""

    def spawn(body: "Callable[..., NoReturn]", *args: object) -> int:
        pid = os.fork()
        if pid == 0:
            try:
                control.close()
                os.close(wakeup_read)
                os.close(wakeup_write)
                body(*args)
            finally:
                os._exit(EXIT_SETUP_FAILED)
        return pid

    def reap() -> None:
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            children.pop(pid, None)
            channel = standbys.pop(pid, None)
            if channel is not None:
                channel.close()
            with contextlib.suppress(OSError):
                control.send(f"X {pid} {os.waitstatus_to_exitcode(status)}".encode())

    while True:
        ready, _, _ = select.select([control.fileno(), wakeup_read], [], [])
        if wakeup_read in ready:
            while True:
                try:
                    if not os.read(wakeup_read, 512):
                        break
                except BlockingIOError:
                    break
            reap()
        if control.fileno() not in ready:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(control, 1 << 20, 64)
        except OSError:
            data, fds = b"", []
        if not data:  # the referee is gone: so are its bots, and their cgroups
            for folders in children.values():
                for folder in folders:  # a frozen process (cgroup v1) would not die
                    for name, value in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
                        with contextlib.suppress(OSError), \
                                open(os.path.join(folder, name), "w") as state:
                            state.write(value)
            for pid in children:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):  # a standby has no group of its own
                    os.kill(pid, signal.SIGKILL)
            for pid, folders in children.items():
                with contextlib.suppress(OSError):
                    os.waitpid(pid, 0)
                for folder in folders:
                    for _ in range(100):
                        try:
                            os.rmdir(folder)
                            break
                        except FileNotFoundError:
                            break
                        except OSError:  # the last processes are still being reaped
                            time.sleep(0.02)
            return
        command = True
        started: int | None = None
        if data.startswith(b"standby\0"):
            data, command = data[len(b"standby\0"):], False
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            started = spawn(park, theirs.fileno(), data, unshare)
            theirs.close()
            standbys[started] = ours
        elif data.startswith(b"use\0"):
            _, number, data = data.split(b"\0", 2)
            channel = standbys.pop(int(number), None)
            if channel is not None:
                with channel, contextlib.suppress(OSError):  # gone: start afresh below
                    socket.send_fds(channel, [data], fds)
                    started = int(number)
        pid = spawn(become, data, fds, unshare) if started is None else started
        for fd in fds:
            os.close(fd)
        if pid not in children:
            try:
                folders = [os.path.dirname(p) for p in parse(data, command).cgroups]
            except (ValueError, IndexError):  # the child reports it and exits
                folders = []
            children[pid] = folders
        # A referee that died meanwhile (Ctrl-C at start-up) breaks the pipe: the next
        # read finds it gone and cleans up, as for any end of file.
        with contextlib.suppress(OSError):
            control.send(f"P {pid}".encode())


if __name__ == "__main__":
    serve(int(sys.argv[1]))
