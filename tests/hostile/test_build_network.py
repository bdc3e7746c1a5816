"""A build step allowed online reaches registries, never the host.

The test opens TCP servers on the host's 127.0.0.1 and ::1 and on every other address of
the host; a hostile online build tries each of them directly, the registry's own address
directly (there is no route: the proxy is the only way out), then each through the build's
proxy (by address, and by "localhost", which the organiser listed and which still resolves
to loopback), a name the league does not list, and a netlink socket; then it fetches a
package index from the npm registry, which must still work. The build runs under its own
uid, in its own network namespace (served by pasta and the egress proxy), with the seccomp
filter.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import socket
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.league.season import SandboxSettings
from arena.sandbox import SandboxLimits, load_manifest, prepare

BACKENDS = ["bubblewrap", "fallback"]
REGISTRY = "https://registry.npmjs.org/left-pad"
SIOCGIFADDR = 0x8915


def host_addresses() -> list[str]:
    """Every address of this host but IPv6 link-local ones (they need a scope)."""
    found = ["127.0.0.1", "::1"]
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with probe:
        for _, name in socket.if_nameindex():
            with contextlib.suppress(OSError):
                request = struct.pack("256s", name.encode()[:15])
                address = socket.inet_ntoa(fcntl.ioctl(probe.fileno(), SIOCGIFADDR,
                                                       request)[20:24])
                if address not in found:
                    found.append(address)
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            raw = line.split()[0]
            address = socket.inet_ntop(socket.AF_INET6, bytes.fromhex(raw))
            if not address.startswith("fe80") and address not in found:
                found.append(address)
    return found


@pytest.fixture
def servers() -> Iterator[list[tuple[str, int, socket.socket]]]:
    opened = []
    for address in host_addresses():
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        server = socket.socket(family, socket.SOCK_STREAM)
        server.bind((address, 0))
        server.listen(8)
        server.setblocking(False)
        opened.append((address, server.getsockname()[1], server))
    yield opened
    for _, _, server in opened:
        server.close()


PROBE = """
import json, os, socket, urllib.request
results = {}
def direct(address, port):
    try:
        socket.create_connection((address, port), timeout=3).close()
        return "connected"
    except OSError as error:
        return f"refused: {error}"
def proxied(target):
    proxy = os.environ["HTTPS_PROXY"].rsplit(":", 1)
    with socket.create_connection((proxy[0][len("http://"):], int(proxy[1])), timeout=30) as s:
        s.sendall(f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n".encode())
        return s.recv(4096).decode("ascii", "replace")
for address, port in TARGETS:
    results[address] = direct(address, port)
    name = f"[{address}]" if ":" in address else address
    results["proxied " + address] = proxied(f"{name}:{port}")
    results["proxied 443 " + address] = proxied(f"{name}:443")
results["registry address"] = direct(REGISTRY_ADDRESS, 443)
results["proxy over ipv6"] = direct("::1", 3128)  # would lead to the host's [::1]
results["localhost"] = proxied("localhost:443")
results["unlisted"] = proxied("example.com:443")
try:
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW).close()
    results["netlink"] = "opened"
except OSError as error:
    results["netlink"] = f"refused: {error}"
results["registry"] = urllib.request.urlopen(REGISTRY, timeout=30).status
open("results.json", "w").write(json.dumps(results))
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_online_build_reaches_the_registry_but_not_the_host(
        tmp_path: Path, servers: list[tuple[str, int, socket.socket]], backend: str) -> None:
    folder = Path(tempfile.mkdtemp(prefix="arena-online-build-", dir=tmp_path))
    folder.chmod(0o755)
    targets = [(address, port) for address, port, _ in servers]
    registry_address = socket.getaddrinfo("registry.npmjs.org", 443)[0][4][0]
    (folder / "probe.py").write_text(
        f"TARGETS = {targets!r}\nREGISTRY = {REGISTRY!r}\n"
        f"REGISTRY_ADDRESS = {registry_address!r}\n" + PROBE)
    (folder / "bot.toml").write_text(
        'name = "online"\nversion = "1"\nlanguage = "other"\n'
        'build = ["/usr/bin/python3", "probe.py"]\nrun = ["true"]\n')
    limits = SandboxLimits(build_network=True, build_hosts=("localhost",))
    built = prepare(load_manifest(folder), backend, limits,
                    tmp_path / "logs", trusted=True, cache=tmp_path / "cache")
    results = json.loads((built.folder / "results.json").read_text())
    for address, _, server in servers:
        assert results[address].startswith("refused"), (address, results)
        assert results["proxied " + address].startswith("HTTP/1.1 403"), results
        assert "arena build proxy: port" in results["proxied " + address], results
        assert "not an address" in results["proxied 443 " + address], results
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing reached the host's server
    assert "Network is unreachable" in results["registry address"], results
    assert results["proxy over ipv6"].startswith("refused"), results
    assert results["localhost"].startswith("HTTP/1.1 403"), results
    assert "a loopback address" in results["localhost"], results
    assert results["unlisted"].startswith("HTTP/1.1 403"), results
    assert "not a registry this step may reach" in results["unlisted"], results
    assert results["registry"] == 200
    if backend == "bubblewrap":  # the seccomp filter: AF_UNIX, AF_INET and AF_INET6 only
        assert results["netlink"].startswith("refused"), results


def test_seasons_build_offline_unless_the_file_says_otherwise() -> None:
    assert SandboxSettings().build_network is False
    assert SandboxLimits().build_network is False
