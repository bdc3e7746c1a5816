"""A build step allowed online reaches registries, never the host (issue 16, item 6).

The test opens TCP servers on the host's 127.0.0.1 and ::1 and on every other address of
the host; a hostile online build tries each of them (and a netlink socket), then fetches a
package index from the npm registry, which must still work. The build runs under its own
uid, in its own network namespace (served by pasta), with the seccomp filter.
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
import json, socket, urllib.request
results = {}
for address, port in TARGETS:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        socket.create_connection((address, port), timeout=3).close()
        results[address] = "connected"
    except OSError as error:
        results[address] = f"refused: {error}"
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
    (folder / "probe.py").write_text(
        f"TARGETS = {targets!r}\nREGISTRY = {REGISTRY!r}\n" + PROBE)
    (folder / "bot.toml").write_text(
        'name = "online"\nversion = "1"\nlanguage = "other"\n'
        'build = ["/usr/bin/python3", "probe.py"]\nrun = ["true"]\n')
    built = prepare(load_manifest(folder), backend, SandboxLimits(build_network=True),
                    tmp_path / "logs", trusted=True, cache=tmp_path / "cache")
    results = json.loads((built.folder / "results.json").read_text())
    for address, _, server in servers:
        assert results[address].startswith("refused"), (address, results)
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing reached the host's server
    assert results["registry"] == 200
    if backend == "bubblewrap":  # the seccomp filter: AF_UNIX, AF_INET and AF_INET6 only
        assert results["netlink"].startswith("refused"), results


def test_seasons_build_offline_unless_the_file_says_otherwise() -> None:
    assert SandboxSettings().build_network is False
    assert SandboxLimits().build_network is False
