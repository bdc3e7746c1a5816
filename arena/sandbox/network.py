"""The network of a build step allowed online (``SandboxLimits.build_network``): outbound
only, never the host.

The build runs in a network namespace of its own like any bot. Once its sandbox is up,
``pasta`` (Debian package ``passt``) is attached to that namespace: it gives it an
interface with the host's address and routes, and carries the build's outbound TCP and UDP
through ordinary sockets of its own, running as the build's uid. What would reach the host
is turned off:

* ``-T none -U none``: no port of the namespace's loopback is forwarded to the host's (by
  default pasta forwards every port bound on the host), so the build's 127.0.0.1 is its
  own;
* ``--no-map-gw``: the gateway's address is the real gateway, not the host;
* the host's own address is the namespace's own address too (pasta copies it), so a
  connection to it stays in the namespace.

The build command starts only when the namespace has its default route (a small shell
loop, ``WAIT_FOR_ROUTE``), so its first request does not race the set-up. pasta ends with
the build (``SandboxProcess.kill``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PASTA_OPTIONS = ("--config-net", "--quiet", "-T", "none", "-U", "none", "--no-map-gw")
OWN_TUN = ("mount -t tmpfs -o mode=0755,size=4k arena-tun /dev/net && "
           "mknod -m 0666 /dev/net/tun c 10 200 && exec \"$@\"")
"""pasta opens /dev/net/tun after dropping root, and a host may keep it 0600 (Debian's udev
makes it 0666): as root, pasta gets a mount namespace of its own whose /dev/net holds a
tun node it may open (creating a tap needs CAP_NET_ADMIN in the build's namespace anyway,
which only pasta has)."""
WAIT_SECONDS = 10
WAIT_FOR_ROUTE = (
    "i=0; until grep -qs '^[^\t]*\t00000000' /proc/net/route || "
    "grep -qs '^0\\{32\\} 00 ' /proc/net/ipv6_route; do i=$((i+1)); "
    f"if [ $i -gt {WAIT_SECONDS * 100} ]; then "
    "echo 'arena: the build network did not come up' >&2; exit 125; fi; "
    "sleep 0.01; done; exec \"$@\"")


class NetworkUnavailable(RuntimeError):
    """pasta is missing or could not attach to the build's namespace."""


def pasta_path() -> str | None:
    return shutil.which("pasta")


def waiting_for_route(argv: list[str]) -> list[str]:
    """``argv`` started once the namespace has a default route (see the module doc)."""
    return ["/bin/sh", "-c", WAIT_FOR_ROUTE, "arena-build", *argv]


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(entry.path, "stat").read_text()
                parent = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    return children


def namespaced_descendant(pid: int) -> int | None:
    """A descendant of ``pid`` in another network namespace than ours, or None."""
    own = os.readlink("/proc/self/ns/net")
    children = _children()
    waiting = list(children.get(pid, []))
    while waiting:
        candidate = waiting.pop(0)
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{candidate}/ns/net") != own:
                return candidate
        waiting += children.get(candidate, [])
    return None


def attach(sandbox_pid: int, uid: int | None, alive: Callable[[], bool]) -> int:
    """Attach pasta to the network namespace of the sandbox started as ``sandbox_pid``
    (while ``alive()``); pasta's pid. NetworkUnavailable if it cannot."""
    pasta = pasta_path()
    if pasta is None:
        raise NetworkUnavailable("pasta is not installed (Debian package passt)")
    deadline = time.monotonic() + WAIT_SECONDS
    target = namespaced_descendant(sandbox_pid)
    while target is None and time.monotonic() < deadline and alive():
        time.sleep(0.005)
        target = namespaced_descendant(sandbox_pid)
    if target is None:
        raise NetworkUnavailable("the build's sandbox has no network namespace to attach to")
    folder = Path(tempfile.mkdtemp(prefix="arena-pasta-"))
    try:
        pid_file = folder / "pasta.pid"
        command = [pasta, *PASTA_OPTIONS, "-P", str(pid_file)]
        if uid is not None:  # it joins the build's user namespace, owned by that uid
            os.chown(folder, uid, uid)
            command += ["--runas", f"{uid}:{uid}"]
        if os.geteuid() == 0:
            unshare = shutil.which("unshare")
            if unshare is None:
                raise NetworkUnavailable("unshare (util-linux) is not installed")
            command = [unshare, "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
                       OWN_TUN, "arena-pasta", *command]
        result = subprocess.run([*command, str(target)], capture_output=True, text=True,
                                timeout=WAIT_SECONDS, check=False, stdin=subprocess.DEVNULL)
        lines = [line for line in result.stderr.splitlines() if "syslog" not in line]
        if result.returncode != 0 or not pid_file.exists():
            raise NetworkUnavailable(f"pasta failed: {lines[-1] if lines else result.returncode}")
        return int(pid_file.read_text().split()[0])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def detach(pasta_pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pasta_pid, signal.SIGKILL)
