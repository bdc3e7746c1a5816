"""One hostile bot, many attacks: ``python hostile.py`` with ``attack.json`` beside it.

``attack.json`` names the attack (``mode``) and what the test set up on the host (a file
path to try to write, the other bot's folder, the match log, a TCP port listening on the
host's 127.0.0.1, a marker for processes the attack leaves behind). The bot plays legally
(first legal action) apart from its attack, and reports what each attempt gave as lines
``REPORT {json}`` on its stdout, which the test reads from the bot's output log.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
from rawbot import RawBot

from arena.protocol import pb, pb_grpc

CONFIG = json.loads((Path(__file__).parent / "attack.json").read_text())
MODE = CONFIG["mode"]


def report(**values: object) -> None:
    print("REPORT " + json.dumps(values), flush=True)


def attempt(what: str, action) -> None:  # type: ignore[no-untyped-def]
    """Run one attack step and report whether it worked or the error it met."""
    try:
        result = action()
    except BaseException as error:
        report(what=what, ok=False, error=f"{type(error).__name__}: {error}",
               errno=getattr(error, "errno", None))
    else:
        report(what=what, ok=True, result=result)


# -- attacks before the bot says hello ---------------------------------------------------

def before_hello() -> None:
    if MODE == "crash-at-start":
        raise SystemExit(3)
    if MODE == "garbage-bytes":
        path = os.environ["ARENA_ADDRESS"].removeprefix("unix:")
        with socket.socket(socket.AF_UNIX) as raw:
            raw.connect(path)
            raw.sendall(b"\x00\xffGARBAGE" * 1000)
            time.sleep(1)
        raise SystemExit(0)
    if MODE == "tcp-localhost":
        attempt("tcp 127.0.0.1", lambda: socket.create_connection(
            ("127.0.0.1", CONFIG["port"]), timeout=2).close())
    if MODE == "tcp-outside":
        attempt("tcp 1.1.1.1:53", lambda: socket.create_connection(
            ("1.1.1.1", 53), timeout=2).close())
        attempt("udp 8.8.8.8:53", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                .sendto(b"\0" * 12, ("8.8.8.8", 53)))
        attempt("raw netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW).close())
    if MODE == "resolve-hostname":
        attempt("resolve example.com", lambda: socket.getaddrinfo("example.com", 443))
        attempt("resolve localhost", lambda: socket.getaddrinfo("localhost", 80))
    if MODE == "write-outside-tmp":
        targets = [CONFIG["host_file"], str(Path(__file__).parent / "pwned"),
                   str(shared_socket().parent / "pwned"), "/usr/pwned", "/etc/pwned",
                   "/pwned", "/root/pwned"]
        for target in targets:
            attempt(f"write {target}", lambda t=target: Path(t).write_text("pwned"))
        attempt("write /tmp/mine", lambda: Path("/tmp/mine").write_text("fine"))
    if MODE == "read-other-bot":
        other = Path(CONFIG["other_bot"])
        attempt("list other bot", lambda: sorted(os.listdir(other)))
        attempt("read other secret", lambda: (other / "secret.txt").read_text())
        attempt("read other bot.py", lambda: len((other / "bot.py").read_bytes()))
    if MODE == "read-referee-files":
        attempt("read match log", read_match_log)
        attempt("list socket dir", lambda: sorted(os.listdir(
            Path(os.environ["ARENA_ADDRESS"][5:]).parent)))
        attempt("list logs dir", lambda: sorted(os.listdir(Path(CONFIG["log_path"]).parent)))
        attempt("see the referee process", see_referee)
        attempt("read /root", lambda: sorted(os.listdir("/root")))
        attempt("read the checkout", lambda: sorted(os.listdir(CONFIG["checkout"])))
    if MODE == "read-kernel-counters":
        read_kernel_counters()
    if MODE == "lock-shared-files":
        lock_shared_files()
    if MODE in ("spinner", "thinker"):
        pin = CONFIG.get("core")
        if pin is not None:
            os.sched_setaffinity(0, {pin})
        if MODE == "spinner":
            SPINNERS.append(start_spinner())
    if MODE == "take-socket":
        take_socket()
    if MODE == "leave-cgroup":
        leave_cgroup()
    if MODE == "read-secrets":
        attempt("read /etc/shadow", lambda: len(Path("/etc/shadow").read_bytes()))
        attempt("read a root-only file", lambda: Path(CONFIG["secret_file"]).read_text())
        attempt("list /root", lambda: sorted(os.listdir("/root")))
    if MODE == "impersonate-token":
        own = os.environ["ARENA_TOKEN"]
        report(what="tokens seen in /proc", ok=True, result=foreign_tokens(own))
        for label, token in (("forged", secrets.token_hex(16)),
                             ("flipped", own[:-1] + ("0" if own[-1] != "0" else "1"))):
            attempt(f"hello with a {label} token", lambda t=token: hello_only(t))
    if MODE == "fork-bomb":
        fork_bomb()
    if MODE == "fill-tmp":
        fill_tmp()
    if MODE == "detached-child":
        leave_detached_child()
    if MODE == "print-gigabytes":
        threading.Thread(target=print_forever, daemon=True).start()


def read_match_log() -> int:
    """The log being written (the referee moves it into place at the end)."""
    log = Path(CONFIG["log_path"])
    files = sorted(log.parent.glob(log.name + "*"))
    if not files:
        raise FileNotFoundError(errno.ENOENT, f"no {log.name}* in {log.parent}")
    return sum(len(path.read_bytes()) for path in files)


COUNTERS = ("/proc/meminfo", "/proc/stat", "/proc/loadavg", "/proc/uptime", "/proc/vmstat",
            "/proc/pressure/cpu")


def proc_files() -> dict[str, str]:
    """Every file of /proc this bot can read that is not its own processes' (its top level,
    and the folders below it: /proc/sys, /proc/pressure...), as read now."""
    seen: dict[str, str] = {}
    for root, folders, files in os.walk("/proc"):
        if root == "/proc":
            folders[:] = [f for f in folders if not f.isdigit()
                          and f not in ("self", "thread-self", "net")]
        for name in files:
            path = os.path.join(root, name)
            if len(seen) < 5000 and name not in ("kmsg", "kcore", "uuid", "boot_id"):
                with contextlib.suppress(OSError), open(path, "rb") as file:
                    seen[path] = file.read(65536).decode(errors="replace")
    return seen


def move_counters() -> None:
    """What another bot might do to signal: hold terminals, files, locks; use the CPU."""
    held = []
    for _ in range(20):
        with contextlib.suppress(OSError):
            held.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
    for index in range(50):
        with contextlib.suppress(OSError):
            held.append(os.open(f"/tmp/counter-{index}", os.O_CREAT | os.O_RDWR))
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:
        pass
    for fd in held:
        os.close(fd)


def read_kernel_counters() -> None:
    """Host-wide counters another bot could move (a channel) or that show its work: every
    readable file of /proc, read twice, with what would move them in between."""
    first = {path: Path(path).read_text() for path in COUNTERS if os.path.exists(path)}
    everything = proc_files()
    move_counters()
    second = {path: Path(path).read_text() for path in first}
    again = proc_files()
    report(what="kernel counters", ok=True, result={
        "changed": sorted(p for p in first if first[p] != second[p]),
        "moved": sorted(p for p in everything if everything[p] != again.get(p)),
        "read": len(everything),
        "loadavg": first.get("/proc/loadavg", ""), "uptime": first.get("/proc/uptime", ""),
        "memtotal": next((line for line in first.get("/proc/meminfo", "").splitlines()
                          if line.startswith("MemTotal")), "")})


def lock_shared_files() -> None:
    """Locks on files another bot also reads (a channel between them, frozen or not)."""
    import fcntl

    for path in (__file__, "/usr/lib/os-release", "/etc/ld.so.cache"):
        if not os.path.exists(path):
            continue
        with open(path, "rb") as file:
            attempt(f"flock {path}", lambda f=file: fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB))
            attempt(f"fcntl read lock {path}", lambda f=file: fcntl.lockf(
                f, fcntl.LOCK_SH | fcntl.LOCK_NB))


SPINNERS: list[int] = []


def start_spinner() -> int:
    """A child process in a busy loop (a process, not a thread: the bot's own answers do
    not wait for the interpreter lock); its pid."""
    pid = os.fork()
    if pid == 0:
        while True:
            pass
    return pid


def cpu_seconds() -> float:
    """CPU time of this bot: its own and its spinner's."""
    total = time.process_time()
    for pid in SPINNERS:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def burn(seconds: float) -> None:
    """Use ``seconds`` of CPU (not of wall time: a bot that shares its core needs longer)."""
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass


def shared_socket() -> Path:
    """The referee's socket as the referee made it (a seat may get a link in a folder of
    its own, ``seat-*``, beside it)."""
    mine = Path(os.environ["ARENA_ADDRESS"][5:])
    folder = mine.parent.parent if mine.parent.name.startswith("seat-") else mine.parent
    return folder / "referee.sock"


def take_socket() -> None:
    """Move the referee's socket aside (the next seat would then connect to whatever the
    bot binds in its place), see the other seats' folders; put back what moved."""
    shared = shared_socket()
    aside = shared.with_name("stolen.sock")

    def move() -> str:
        os.rename(shared, aside)
        os.rename(aside, shared)  # back at once: the test asserts the attempt, not a MITM
        return "moved"

    attempt("move the referee's socket", move)
    attempt("plant a socket beside it", lambda: plant(shared.with_name("planted.sock")))
    attempt("list the socket folders", lambda: sorted(os.listdir(shared.parent)))


def plant(path: Path) -> str:
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
    path.unlink()
    return "bound"


def leave_cgroup() -> None:
    """Move itself into its cgroup's parent (out of its caps), and raise its own caps."""
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    report(what="cgroups", ok=True, result=lines)
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            if controller not in ("pids", "memory"):
                continue
            own = Path("/sys/fs/cgroup") / controller / path.lstrip("/")
            attempt(f"leave the {controller} cgroup",
                    lambda o=own: (o.parent / "cgroup.procs").write_text(str(os.getpid())))
            limit = "pids.max" if controller == "pids" else "memory.limit_in_bytes"
            attempt(f"raise {limit}", lambda o=own, n=limit: (o / n).write_text("max"
                    if n == "pids.max" else str(1 << 40)))
    attempt("any cgroup file writable", writable_cgroup_files)


def writable_cgroup_files() -> list[str]:
    found = []
    for root, _, files in os.walk("/sys/fs/cgroup"):
        found += [os.path.join(root, f) for f in files
                  if os.access(os.path.join(root, f), os.W_OK)]
        if len(found) > 5:
            break
    if not found:
        raise PermissionError(errno.EACCES, "no cgroup file is writable")
    return found[:5]


def see_referee() -> list[str]:
    """Command lines of processes outside the sandbox (pytest runs the referee)."""
    seen = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                line = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
                if b"pytest" in line:
                    seen.append(line.decode(errors="replace")[:80])
    if not seen:
        raise FileNotFoundError("no referee process visible")
    return seen


def foreign_tokens(own: str) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                for item in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                    if item.startswith(b"ARENA_TOKEN=") and item[12:].decode() != own:
                        found.append(item[12:].decode())
    return sorted(set(found))


def hello_only(token: str) -> str:
    """Say hello with ``token`` on a new stream; the referee's answer."""
    channel = grpc.insecure_channel(os.environ["ARENA_ADDRESS"])
    try:
        request = pb.PlayRequest(hello=pb.Hello(token=token, bot_name="impostor",
                                                bot_version="0", protocol_version=1))
        stream = pb_grpc.RefereeServiceStub(channel).Play(iter([request]), timeout=5)
        for response in stream:
            return f"accepted: {response.WhichOneof('message')}"
        return "stream ended"
    finally:
        channel.close()


def fork_bomb() -> None:
    """Every process forks as fast as it can for two seconds; the first one counts the
    processes it sees meanwhile (its own pid namespace, if any) and reports the peak."""
    read_end, write_end = os.pipe()
    if os.fork() == 0:
        os.close(read_end)
        first = os.getpid()
        deadline = time.monotonic() + 2
        peak, error, next_count = 0, "", 0.0
        while time.monotonic() < deadline:
            try:
                os.fork()
            except OSError as exc:
                error = errno.errorcode.get(exc.errno or 0, str(exc))
                time.sleep(0.005)
            if os.getpid() == first and time.monotonic() > next_count:
                next_count = time.monotonic() + 0.1
                peak = max(peak, sum(e.isdigit() for e in os.listdir("/proc")))
        if os.getpid() == first:
            os.write(write_end, f"{peak} {error}\n".encode())
        os._exit(0)
    os.close(write_end)
    line = os.read(read_end, 100).decode().split()
    report(what="fork bomb", ok=True, result={"peak": int(line[0]) if line else -1,
                                               "error": line[1] if len(line) > 1 else ""})


def fill_tmp() -> None:
    """Write 16 MiB files into $TMPDIR (or /tmp) until refused, at most 256 MiB."""
    folder = Path(os.environ.get("TMPDIR", "/tmp"))
    chunk = b"\1" * (1 << 20)
    written = 0
    error = ""
    try:
        for index in range(16):
            with open(folder / f"fill-{index}", "wb") as file:
                for _ in range(16):
                    file.write(chunk)
                    written += len(chunk)
    except OSError as exc:
        error = errno.errorcode.get(exc.errno or 0, str(exc))
    report(what="fill tmp", ok=not error, result={"written": written, "error": error})
    for path in folder.glob("fill-*"):  # make room again, and keep playing
        path.unlink()


def leave_detached_child() -> None:
    """A grandchild in its own session that ignores SIGTERM, named by the test's marker."""
    script = "trap '' TERM HUP INT; while :; do sleep 1; done"
    subprocess.Popen(["/bin/sh", "-c", script, CONFIG["marker"]], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    report(what="detached child", ok=True, result="started")


def print_forever() -> None:
    line = b"spam " * 200000 + b"\n"
    while True:
        sys.stdout.buffer.write(line)


# -- attacks while playing -----------------------------------------------------------------

def at_decision(bot: RawBot, request_id: int) -> bool:
    """The attack at the third decision; True if the bot answered the request itself."""
    if MODE == "crash-mid-match":
        os._exit(1)
    if MODE == "hang-forever":
        while True:
            time.sleep(60)
    if MODE == "busy-loop":
        while True:
            pass
    if MODE == "allocate-2gib":
        hoard = b"\1" * (2 << 30)  # written, so every page is really used
        report(what="allocate 2 GiB", ok=True, result=len(hoard))
    if MODE == "oversize-message":
        bot.send(pb.PlayRequest(hello=pb.Hello(token=bot.token, bot_name="x" * (1 << 20))))
        return False
    if MODE == "out-of-turn":
        bot.answer(request_id)
        bot.answer(request_id + 1000)
        return True
    if MODE == "illegal-action":
        bot.answer(request_id, index=999)
        return True
    if MODE == "reuse-token":
        attempt("hello again with my token", lambda: hello_only(bot.token))
    return False


def every_decision() -> None:
    if MODE == "thinker":
        burn(CONFIG.get("think_seconds", 0.01))


def disconnect_and_reconnect(bot: RawBot) -> None:
    """Say hello, hang up before the match starts, and try to come back with the token
    (while the referee still waits for the other bot's hello)."""
    time.sleep(0.1)  # the referee has accepted the hello
    bot.close()
    attempt("reconnect with my token", lambda: hello_only(bot.token))
    attempt("reconnect and play on", lambda: replay_stream(bot.token))
    time.sleep(60)


def replay_stream(token: str) -> str:
    again = RawBot(token)
    again.hello()
    try:
        for response in again.responses():
            return f"accepted: {response.WhichOneof('message')}"
        return "stream ended"
    finally:
        again.close()


def main() -> None:
    before_hello()
    bot = RawBot()
    bot.hello()
    decisions = 0
    started_cpu = cpu_seconds()
    responses = bot.responses()
    if MODE == "disconnect-reconnect":
        disconnect_and_reconnect(bot)
    for response in responses:
        kind = response.WhichOneof("message")
        if kind == "match_start":
            started_cpu = cpu_seconds()
        if kind == "match_end":  # before hanging up: the referee then ends the sandbox
            report(what="cpu seconds in play", ok=True, result=cpu_seconds() - started_cpu)
            break
        if kind != "decision_request":
            continue
        request_id = response.decision_request.request_id
        decisions += 1
        every_decision()
        if decisions == 3 and at_decision(bot, request_id):
            continue
        bot.answer(request_id)
    bot.close()
    report(what="match end", ok=True, result=decisions)


main()
