"""The online build's only way out: the egress proxy's policy and its tunnels.

Table-driven: which addresses a name may resolve to, which requests and allowlist entries
are refused; then the proxy itself over real sockets (a tunnel carries bytes both ways, a
refused request gets its reason, a flood of tunnels is capped). The hostile build that
goes through it from inside the sandbox is ``tests/hostile/test_build_network.py``.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.league.season import SeasonError, load_season
from arena.sandbox import SandboxLimits, egress
from arena.sandbox.egress import EgressProxy, EgressRefused, parse_connect, refused_address

OWN = {ipaddress.ip_address("198.51.100.7"), ipaddress.ip_address("2001:db8::7")}

ADDRESSES = [
    # (address, refused because ... or None: allowed for a listed name)
    ("8.8.8.8", None),
    ("2606:4700::1111", None),
    ("10.1.2.3", None),                      # a mirror on a private network
    ("203.0.113.80", None),                  # a sandboxed network's registry gateway
    ("127.0.0.1", "loopback"),
    ("127.8.9.10", "loopback"),
    ("::1", "loopback"),
    ("169.254.169.254", "link-local"),       # cloud metadata
    ("fe80::1", "link-local"),
    ("::ffff:127.0.0.1", "loopback"),        # IPv4-mapped
    ("::ffff:169.254.169.254", "link-local"),
    ("2002:7f00:1::", "loopback"),           # 6to4 around 127.0.0.1
    ("64:ff9b::a9fe:a9fe", "NAT64"),
    ("0.0.0.0", "unicast"),
    ("0.1.2.3", "unicast"),
    ("::", "unicast"),
    ("224.0.0.251", "unicast"),
    ("ff02::1", "unicast"),
    ("240.0.0.1", "unicast"),
    ("255.255.255.255", "unicast"),
    ("198.51.100.7", "this host"),           # the host's own interface addresses
    ("2001:db8::7", "this host"),
    ("::ffff:198.51.100.7", "this host"),
]


@pytest.mark.parametrize(("address", "reason"), ADDRESSES)
def test_which_addresses_a_registry_name_may_resolve_to(address: str, reason: str | None
                                                        ) -> None:
    found = refused_address(ipaddress.ip_address(address), OWN)
    if reason is None:
        assert found is None
    else:
        assert found is not None and reason in found, found


REQUESTS = [
    (b"CONNECT registry.npmjs.org:443 HTTP/1.1\r\n\r\n", ("registry.npmjs.org", 443)),
    (b"CONNECT PyPI.org.:443 HTTP/1.0\r\nHost: x\r\n\r\n", ("pypi.org", 443)),
    (b"CONNECT registry.npmjs.org:22 HTTP/1.1\r\n\r\n", "port 22 refused"),
    (b"CONNECT registry.npmjs.org HTTP/1.1\r\n\r\n", "not host:port"),
    (b"CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n", "not an address"),
    (b"CONNECT [::1]:443 HTTP/1.1\r\n\r\n", "not an address"),
    (b"CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", "not an address"),   # 127.0.0.1
    (b"CONNECT 127.1:443 HTTP/1.1\r\n\r\n", "not an address"),
    (b"CONNECT a_b.example:443 HTTP/1.1\r\n\r\n", "not a host name"),
    (b"CONNECT \xff.example:443 HTTP/1.1\r\n\r\n", "not ASCII"),
    (b"GET http://registry.npmjs.org/left-pad HTTP/1.1\r\n\r\n", "HTTPS only"),
    (b"CONNECT registry.npmjs.org:443\r\n\r\n", "not an HTTP/1.x request"),
    (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x request"),
]


@pytest.mark.parametrize(("header", "expected"), REQUESTS,
                         ids=[ascii(header[:32]) for header, _ in REQUESTS])
def test_the_proxy_reads_connect_to_a_named_host_on_443_only(
        header: bytes, expected: tuple[str, int] | str) -> None:
    if isinstance(expected, tuple):
        assert parse_connect(header) == expected
    else:
        with pytest.raises(EgressRefused, match=expected):
            parse_connect(header)


@pytest.mark.parametrize("entry", ["10.0.0.1", "[::1]", "2130706433", "https://npm.example",
                                   "npm.example:443", "npm example", "*", "*.", "", "a_b.c"])
def test_an_allowlist_entry_is_a_host_name(entry: str) -> None:
    with pytest.raises(ValueError, match="is not a host name"):
        SandboxLimits(build_hosts=(entry,))


def test_allowlist_entries_and_wildcards() -> None:
    limits = SandboxLimits(build_hosts=("NPM.Example.org.", "*.corp.example", "npm.example.org"))
    assert limits.build_hosts == ("npm.example.org", "*.corp.example")
    assert egress.listed("npm.example.org", limits.build_hosts)
    assert egress.listed("a.b.corp.example", limits.build_hosts)
    assert not egress.listed("corp.example", limits.build_hosts)
    assert not egress.listed("evilcorp.example", limits.build_hosts)
    assert not egress.listed("npm.example.org.evil", limits.build_hosts)
    with pytest.raises(ValueError, match="list of host names"):
        SandboxLimits(build_hosts="npm.example.org")  # type: ignore[arg-type]


def test_the_host_addresses_include_loopback() -> None:
    own = egress.host_addresses()
    assert ipaddress.ip_address("127.0.0.1") in own


@pytest.fixture
def echo_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that echoes each connection, upper-cased."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve(connection: socket.socket) -> None:
        with connection:
            while data := connection.recv(4096):
                connection.sendall(data.upper())

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    stop.set()
    server.close()


def ask(port: int, header: bytes) -> tuple[socket.socket, bytes]:
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    client.sendall(header)
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = client.recv(4096)
        if not chunk:
            break
        answer += chunk
    return client, answer


def test_the_proxy_refuses_with_its_reason_and_reaches_nothing(echo_server: int) -> None:
    # "localhost" allowed by the organiser still resolves to a loopback address.
    with EgressProxy(("localhost",)) as proxy:
        for header, status, reason in [
            (b"CONNECT localhost:443 HTTP/1.1\r\n\r\n", b"403", b"a loopback address"),
            (b"CONNECT example.com:443 HTTP/1.1\r\n\r\n", b"403", b"not a registry"),
            (f"CONNECT 127.0.0.1:{echo_server} HTTP/1.1\r\n\r\n".encode(), b"403", b"port"),
            (b"GET http://localhost/ HTTP/1.1\r\n\r\n", b"403", b"HTTPS only"),
            (b"CONNECT " + b"a" * 9000 + b":443 HTTP/1.1\r\n\r\n", b"431", b"over 8192"),
        ]:
            client, answer = ask(proxy.port, header)
            with client:
                answer += client.recv(4096)
            assert answer.startswith(b"HTTP/1.1 " + status), answer
            assert reason in answer, answer
        assert proxy.refused == 4 and len(proxy.recent_refusals) == 4


def test_a_tunnel_carries_bytes_both_ways(echo_server: int,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # The policy opened up for the test's own server on 127.0.0.1: the relay is what runs.
    monkeypatch.setattr(egress, "PORTS", (echo_server,))
    monkeypatch.setattr(egress, "refused_address", lambda address, own: None)
    monkeypatch.setattr(egress, "delivered_here", lambda address: False)
    with EgressProxy(("localhost",)) as proxy:
        client, answer = ask(proxy.port, f"CONNECT localhost:{echo_server} HTTP/1.1\r\n"
                                         f"Host: localhost\r\n\r\n".encode())
        with client:
            assert answer == b"HTTP/1.1 200 Connection established\r\n\r\n"
            payload = bytes(range(97, 123)) * 10_000
            client.sendall(payload)
            received = b""
            while len(received) < len(payload):
                received += client.recv(65536)
            assert received == payload.upper()
            client.shutdown(socket.SHUT_WR)
            assert client.recv(10) == b""  # the far end closed after our EOF


def test_tunnels_at_once_are_capped(echo_server: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(egress, "PORTS", (echo_server,))
    monkeypatch.setattr(egress, "refused_address", lambda address, own: None)
    monkeypatch.setattr(egress, "delivered_here", lambda address: False)
    monkeypatch.setattr(egress, "MOST_TUNNELS", 3)
    header = f"CONNECT localhost:{echo_server} HTTP/1.1\r\n\r\n".encode()
    with EgressProxy(("localhost",)) as proxy:
        opened = [ask(proxy.port, header) for _ in range(3)]
        assert all(answer.startswith(b"HTTP/1.1 200") for _, answer in opened)
        client, answer = ask(proxy.port, header)
        assert answer.startswith(b"HTTP/1.1 503"), answer
        client.close()
        for client, _ in opened:
            client.close()


def test_a_closed_proxy_stops_listening() -> None:
    proxy = EgressProxy()
    proxy.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", proxy.port), timeout=2)


SEASON = """
[season]
name = "s"
entrants = ["{bots}/random", "{bots}/greedy"]
[sandbox]
build_network = true
{hosts}
[output]
folder = "out"
report = "report"
"""
BOTS = Path(__file__).resolve().parents[1] / "sample_bots" / "python"


def test_a_season_file_adds_build_hosts(tmp_path: Path) -> None:
    path = tmp_path / "season.toml"
    hosts = 'build_hosts = ["npm.corp.example", "*.Mirror.example"]'
    path.write_text(SEASON.format(bots=BOTS, hosts=hosts))
    assert load_season(path).sandbox.build_hosts == ("npm.corp.example", "*.mirror.example")
    for bad in ('"npm.corp.example"', '["10.0.0.1"]', "[5]"):
        path.write_text(SEASON.format(bots=BOTS, hosts=f"build_hosts = {bad}"))
        with pytest.raises(SeasonError, match=r"\[sandbox\] build_hosts"):
            load_season(path)


LOCAL_ROUTES = """
set -e
ip link set lo up
ip addr add 10.99.0.1/32 dev lo           # a secondary address
ip route add local 10.98.0.0/16 dev lo    # a whole range delivered here (AnyIP)
ip route add 10.96.0.0/16 dev lo          # routed, but to a neighbour, not here
exec "$@"
"""
CHECK = """
import ipaddress, json
from arena.sandbox.egress import delivered_here
print(json.dumps({a: delivered_here(ipaddress.ip_address(a)) for a in
      ["10.99.0.1", "10.98.7.7", "127.0.0.1", "::1", "10.96.0.5", "10.97.0.1", "8.8.8.8"]}))
"""


def test_an_address_routed_to_this_host_is_refused_whatever_its_interface() -> None:
    """The interfaces' primary addresses are not all the host answers on: a secondary
    address and a range routed ``local`` are delivered here too. In a
    network namespace of its own, so the host's routes are not touched."""
    import json
    import subprocess
    import sys

    result = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--net", "--", "sh", "-c", LOCAL_ROUTES,
         "routes", sys.executable, "-c", CHECK],
        capture_output=True, text=True, timeout=60, check=False,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
             "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "10.99.0.1": True, "10.98.7.7": True, "127.0.0.1": True, "::1": True,
        "10.96.0.5": False, "10.97.0.1": False, "8.8.8.8": False}


def test_refusals_kept_are_few_and_short() -> None:
    """A build refused thousands of times a second, each request quoting 8 KB of its own
    text, would grow the referee by 1 GB in 30 s if every refusal were kept."""
    with EgressProxy() as proxy:
        for _ in range(egress.RECENT_REFUSALS + 10):
            client, answer = ask(proxy.port, b"A" * 8000 + b" / HTTP/1.1\r\n\r\n")
            client.close()
            assert answer.startswith(b"HTTP/1.1 403"), answer
        assert proxy.refused == egress.RECENT_REFUSALS + 10
        assert len(proxy.recent_refusals) == egress.RECENT_REFUSALS
        assert all(len(reason) <= egress.REASON_CHARS for reason in proxy.recent_refusals)


def test_closing_with_tunnels_open_is_quiet_and_leaves_no_thread(
        echo_server: int, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(egress, "PORTS", (echo_server,))
    monkeypatch.setattr(egress, "refused_address", lambda address, own: None)
    monkeypatch.setattr(egress, "delivered_here", lambda address: False)
    before = {thread.ident for thread in threading.enumerate()}
    proxy = EgressProxy(("localhost", "slow.example"))
    header = f"CONNECT localhost:{echo_server} HTTP/1.1\r\n\r\n".encode()
    opened = [ask(proxy.port, header) for _ in range(5)]
    half = socket.create_connection(("127.0.0.1", proxy.port))  # a header never finished
    half.sendall(b"CONNECT local")
    resolving = threading.Event()
    real_getaddrinfo = socket.getaddrinfo

    def slow_getaddrinfo(host: str, *args: object, **kwargs: object) -> object:
        if host == "slow.example":  # a lookup still running when the build ends
            resolving.set()
            time.sleep(1)
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", slow_getaddrinfo)
    slow = socket.create_connection(("127.0.0.1", proxy.port))
    slow.sendall(f"CONNECT slow.example:{echo_server} HTTP/1.1\r\n\r\n".encode())
    assert resolving.wait(10)
    proxy.close()
    slow.close()
    for client, _ in opened:
        assert client.recv(10) == b""  # the tunnel was closed
        client.close()
    half.close()
    assert [t.name for t in threading.enumerate() if t.ident not in before] == []
    assert "Traceback" not in capfd.readouterr().err
    assert [record.getMessage() for record in caplog.records] == []
