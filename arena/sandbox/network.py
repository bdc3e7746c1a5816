"""The network of a build step allowed online (``SandboxLimits.build_network``): HTTPS to
the named registries, through a proxy, and nothing else.

The build runs in a network namespace of its own like any bot: a loopback, and no route
out. Once its sandbox is up, ``pasta`` (Debian package ``passt``) is attached to that
namespace to forward one port of its loopback (``PROXY_PORT``) to the referee's
``EgressProxy`` on the host's 127.0.0.1 (``egress.py``), which tunnels ``CONNECT`` to the
registries it allows and refuses the rest. The build finds the proxy in the usual
variables (``PROXY_ENVIRONMENT``: pip, npm, go, cargo, curl and the JVM's build tools).

pasta does not configure the namespace's interface (no ``--config-net``: no address, no
route, no DNS) and the build has no capability to configure it, so the forwarded port is
the only way out: an address the build names itself (the host's, the LAN's, a metadata
service's) has no route. Its other handlers are off (``--no-udp``, ``--no-icmp``, no DHCP,
NDP or router advertisements), and no port of the host is forwarded into the namespace.

The build command starts only when the forwarded port listens (a small shell loop,
``WAIT_FOR_PROXY``), so its first request does not race the set-up. pasta and the proxy
end with the build (``SandboxProcess.kill``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from arena.sandbox.egress import REGISTRIES, EgressProxy

PROXY_PORT = 3128
"""The proxy's port on the build's own loopback."""
PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
PROXY_ENVIRONMENT = {**{name: PROXY_URL for name in (
    "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")},
    "NO_PROXY": "", "no_proxy": "",
    "JAVA_TOOL_OPTIONS": " ".join(f"-D{scheme}.proxy{part}" for scheme in ("http", "https")
                                  for part in ("Host=127.0.0.1", f"Port={PROXY_PORT}"))}
"""Where a build finds its proxy: the usual variables (pip, npm, go, cargo, curl) and, for
the JVM (Maven, Gradle), its system properties."""
PASTA_OPTIONS = ("--quiet", "-4", "-t", "none", "-u", "none", "-U", "none", "--no-udp",
                 "--no-icmp", "--no-dhcp", "--no-dhcpv6", "--no-ndp", "--no-ra", "--no-map-gw")
"""IPv4 only (``-4``): the namespace's ::1 would lead to the host's [::1] at the proxy's
port, where anything could listen."""
OWN_TUN = ("mount -t tmpfs -o mode=0755,size=4k arena-tun /dev/net && "
           "mknod -m 0666 /dev/net/tun c 10 200 && exec \"$@\"")
"""pasta opens /dev/net/tun after dropping root, and a host may keep it 0600 (Debian's udev
makes it 0666): as root, pasta gets a mount namespace of its own whose /dev/net holds a
tun node it may open (creating a tap needs CAP_NET_ADMIN in the build's namespace anyway,
which only pasta has)."""
WAIT_SECONDS = 10
WAIT_FOR_PROXY = (
    f"i=0; until grep -qs ':{PROXY_PORT:04X} 0*:0000 0A' /proc/net/tcp /proc/net/tcp6; "
    "do i=$((i+1)); "
    f"if [ $i -gt {WAIT_SECONDS * 100} ]; then "
    "echo 'arena: the build network did not come up' >&2; exit 125; fi; "
    "sleep 0.01; done; exec \"$@\"")


class NetworkUnavailable(RuntimeError):
    """pasta is missing or could not attach to the build's namespace."""


def pasta_path() -> str | None:
    return shutil.which("pasta")


def waiting_for_proxy(argv: list[str]) -> list[str]:
    """``argv`` started once the proxy's port listens in the namespace (see the module
    doc)."""
    return ["/bin/sh", "-c", WAIT_FOR_PROXY, "arena-build", *argv]


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


class Stoppable(Protocol):
    stderr_path: Path

    def kill(self) -> None: ...


def stop_at_refusal(process: Stoppable) -> Callable[[str], None]:
    """What a fetch step's proxy does at a refusal: note it in the step's output and stop
    the step (in a thread of its own: stopping it closes the proxy that calls this)."""
    def stop(reason: str) -> None:
        with contextlib.suppress(OSError), open(process.stderr_path, "a") as log:
            log.write(f"\n[arena fetch] stopped: the proxy refused a tunnel: {reason}\n")
        threading.Thread(target=process.kill, name="arena-fetch-stop", daemon=True).start()
    return stop


class BuildRoute:
    """A build's way out: pasta (its pid) and the proxy it leads to; ``close`` ends both."""

    def __init__(self, pasta_pid: int, proxy: EgressProxy) -> None:
        self.pasta_pid = pasta_pid
        self.proxy = proxy

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pasta_pid, signal.SIGKILL)
        self.proxy.close()


def attach(sandbox_pid: int, uid: int | None, alive: Callable[[], bool],
           hosts: tuple[str, ...] = REGISTRIES,
           on_refusal: Callable[[str], None] | None = None) -> BuildRoute:
    """Start a proxy to ``hosts`` (``SandboxLimits.egress_hosts``), and attach pasta to the network
    namespace of the sandbox started as ``sandbox_pid`` (while ``alive()``) to lead its
    ``PROXY_PORT`` there. NetworkUnavailable if it cannot."""
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
    proxy = EgressProxy(hosts, on_refusal)
    folder = Path(tempfile.mkdtemp(prefix="arena-pasta-"))
    try:
        pid_file = folder / "pasta.pid"
        command = [pasta, *PASTA_OPTIONS, "-T", f"{PROXY_PORT}:{proxy.port}",
                   "-P", str(pid_file)]
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
        return BuildRoute(int(pid_file.read_text().split()[0]), proxy)
    except BaseException:
        proxy.close()
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
