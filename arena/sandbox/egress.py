"""The only way out of an online build: an HTTPS proxy that reaches named registries.

A build allowed on the network (``SandboxLimits.build_network``) gets no route of its own:
its network namespace holds a loopback and one forwarded port (``network.py``), which leads
here. The proxy takes ``CONNECT host:443`` and nothing else, and only for a host named in
its allowlist: the package registries (``REGISTRIES``) and what the organiser adds
(``build_hosts``). It resolves the name itself and connects to the address it resolved, so
a build cannot name an address (an IP literal is refused) and DNS cannot hand it one of the
host's own: loopback, link-local (a cloud's metadata service), multicast, unspecified and
every address of this host's interfaces are refused whatever name resolved to them.
Private ranges are allowed for a listed name, since an organiser's mirror or a sandboxed
network's registry gateway often sits on one.

Why not an address filter alone (public addresses only): it would refuse the registries of
networks that reach them through a private gateway (as the machines this project is tested
on do), and it would still let a build reach every public service on the internet.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import ipaddress
import re
import socket
import struct
import threading
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

REGISTRIES = (
    "registry.npmjs.org", "registry.yarnpkg.com",                      # npm, yarn
    "pypi.org", "files.pythonhosted.org",                               # pip
    "proxy.golang.org", "sum.golang.org",                               # go
    "index.crates.io", "static.crates.io", "crates.io",                 # cargo
    "repo.maven.apache.org", "repo1.maven.org",                         # maven
    "rubygems.org", "index.rubygems.org",                               # gems
)
"""Hosts every online build may reach (HTTPS); ``build_hosts`` adds to them."""

PORTS = (443,)
HEADER_BYTES = 8192
HEADER_SECONDS = 10.0
CONNECT_SECONDS = 15.0
IDLE_SECONDS = 120.0
"""A tunnel with no byte either way for this long is closed."""
MOST_TUNNELS = 64
"""Open tunnels at once, per build (npm opens ~16)."""
CHUNK = 65536
RECENT_REFUSALS = 20
REASON_CHARS = 300
"""A refusal quotes what the build sent: only the last few are kept, each cut short (a
build refused 4,000 times a second would otherwise fill the referee's memory)."""

_HOST_NAME = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)"
                        r"(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*")
_SIOCGIFADDR = 0x8915
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class EgressRefused(ValueError):
    """A tunnel the policy does not allow; the message says why."""


def host_pattern(text: str) -> str:
    """``text`` as an allowlist entry (a host name, or ``*.`` and a domain for its
    subdomains), lower-cased; ValueError if it is not one (an address, a port, a URL)."""
    entry = text.strip().lower().rstrip(".")
    name = entry[2:] if entry.startswith("*.") else entry
    if not _HOST_NAME.fullmatch(name) or _is_address(name):
        raise ValueError(f"build host {text!r} is not a host name (or *.domain): name the "
                         "registry, not its address, port or URL")
    return entry


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return all(part.isdigit() for part in text.split("."))  # 2130706433, 127.1
    return True


def listed(host: str, allowed: Iterable[str]) -> bool:
    for entry in allowed:
        if entry.startswith("*."):
            if host.endswith(entry[1:]):
                return True
        elif host == entry:
            return True
    return False


def host_addresses() -> set[Address]:
    """Every address of this host's interfaces (a build may not reach the host by any)."""
    found: set[Address] = set()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            with contextlib.suppress(OSError):
                request = struct.pack("256s", name.encode()[:15])
                raw = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, request)[20:24]
                found.add(ipaddress.IPv4Address(raw))
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            found.add(ipaddress.IPv6Address(bytes.fromhex(line.split()[0])))
    return found


def refused_address(address: Address, own: set[Address]) -> str | None:
    """Why a build may not connect to ``address`` (whatever name it came from), or None."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour or (
            address.teredo[1] if address.teredo else None)
        if embedded is not None:
            return refused_address(embedded, own) or None
        if address in ipaddress.IPv6Network("64:ff9b::/96"):  # NAT64: any IPv4 behind it
            return "a NAT64 address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (a cloud's metadata service lives there)"
    if (address.is_multicast or address.is_unspecified or address.is_reserved
            or address in ipaddress.IPv4Network("0.0.0.0/8")):
        return "not a unicast address"
    if address == ipaddress.IPv4Address("255.255.255.255"):
        return "a broadcast address"
    if address in own:
        return "an address of this host"
    return None


def delivered_here(address: Address) -> bool:
    """Whether the kernel would deliver a packet for ``address`` to this host: a route of
    type local (an interface's address, secondary or not, or a whole range routed
    ``local``) makes the host's own address the source of a socket connected there,
    which a remote address never is; and such an address can be bound to. Costs two
    system calls and sends nothing."""
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect((str(address), 443))
        except OSError:
            return False  # no route: not here (and not reachable either)
        if ipaddress.ip_address(probe.getsockname()[0].split("%")[0]) == address:
            return True
    if _nonlocal_bind(address.version):
        return False  # binding proves nothing where any address may be bound
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        try:
            probe.bind((str(address), 0))
        except OSError:
            return False
        return True


def _nonlocal_bind(version: int) -> bool:
    name = "ipv6/ip_nonlocal_bind" if version == 6 else "ipv4/ip_nonlocal_bind"
    try:
        return Path("/proc/sys/net", name).read_text().strip() != "0"
    except OSError:
        return True


def parse_connect(header: bytes) -> tuple[str, int]:
    """The host and port of a ``CONNECT`` request's header; EgressRefused otherwise."""
    try:
        line = header.split(b"\r\n", 1)[0].decode("ascii")
    except UnicodeDecodeError:
        raise EgressRefused("the request line is not ASCII") from None
    parts = line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise EgressRefused("not an HTTP/1.x request")
    method, target, _ = parts
    if method != "CONNECT":
        raise EgressRefused(f"{method} refused: an online build reaches the network through "
                            "HTTPS only (the proxy takes CONNECT)")
    host, separator, port_text = target.rpartition(":")
    if not separator or not port_text.isdigit() or not host:
        raise EgressRefused(f"CONNECT {target!r}: not host:port")
    port = int(port_text)
    if port not in PORTS:
        raise EgressRefused(f"port {port} refused: builds reach registries over HTTPS "
                            f"(port {', '.join(map(str, PORTS))})")
    host = host.lower().rstrip(".")
    if _is_address(host):
        raise EgressRefused(f"{host} refused: a build names the registry, not an address")
    if not _HOST_NAME.fullmatch(host):
        raise EgressRefused(f"{host!r} is not a host name")
    return host, port


class EgressProxy:
    """One build's proxy: listens on the host's 127.0.0.1 (``port``), in a thread of its
    own, until ``close()``. ``allowed`` are allowlist entries (``host_pattern``)."""

    def __init__(self, allowed: Iterable[str] = REGISTRIES,
                 on_refusal: Callable[[str], None] | None = None) -> None:
        self.allowed = tuple(host_pattern(entry) for entry in allowed)
        self.on_refusal = on_refusal
        """Told each refusal's reason, from the proxy's thread (the fetch step stops at
        its first: a lockfile that names another host cannot succeed)."""
        self.own = host_addresses()
        self.refused = 0
        self.recent_refusals: deque[str] = deque(maxlen=RECENT_REFUSALS)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(128)
        self.port: int = listener.getsockname()[1]
        self._loop = asyncio.new_event_loop()
        self._tunnels = 0
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(listener,), daemon=True,
                                        name=f"arena-egress-{self.port}")
        self._thread.start()
        self._started.wait()

    def _run(self, listener: socket.socket) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, sock=listener, limit=HEADER_BYTES))
        self._started.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            tasks = asyncio.all_tasks(self._loop)
            for task in tasks:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self._loop.run_until_complete(self._loop.shutdown_default_executor())
            self._loop.close()

    def close(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    def __enter__(self) -> EgressProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if self._tunnels >= MOST_TUNNELS:
                await self._answer(writer, 503, f"more than {MOST_TUNNELS} tunnels at once")
                return
            self._tunnels += 1
            try:
                await self._tunnel(reader, writer)
            finally:
                self._tunnels -= 1
        except (OSError, asyncio.CancelledError):
            pass  # the build ended: its proxy is closing
        finally:
            writer.close()

    async def _tunnel(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEADER_SECONDS)
        except (asyncio.LimitOverrunError, ValueError):
            await self._answer(writer, 431, f"a request header over {HEADER_BYTES} bytes")
            return
        except (TimeoutError, asyncio.IncompleteReadError):
            return
        host = "the registry"
        try:
            host, port = parse_connect(header)
            if not listed(host, self.allowed):
                shown = ", ".join(self.allowed[:4]) + (", ..." if len(self.allowed) > 4 else "")
                raise EgressRefused(f"{host} is not a registry this step may reach (it may reach "
                                    f"{shown}: the registries, and [sandbox] build_hosts or "
                                    "registries)")
            upstream = await self._connect(host, port)
        except EgressRefused as refusal:
            self.refused += 1
            self.recent_refusals.append(str(refusal)[:REASON_CHARS])
            await self._answer(writer, 403, str(refusal))
            if self.on_refusal is not None:
                self.on_refusal(str(refusal)[:REASON_CHARS])
            return
        except (TimeoutError, OSError, UnicodeError) as error:
            await self._answer(writer, 502, f"could not reach {host}: {error or 'timed out'}")
            return
        up_reader, up_writer = upstream
        try:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))
        finally:
            up_writer.close()

    async def _connect(self, host: str, port: int
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        found = await asyncio.wait_for(
            self._loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), CONNECT_SECONDS)
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found]
        for address in addresses:  # one bad answer refuses the name: no rebinding games
            reason = refused_address(address, self.own) or (
                "an address of this host (routed here)" if delivered_here(address) else None)
            if reason is not None:
                raise EgressRefused(f"{host} resolves to {address}, {reason}")
        error: OSError = OSError(f"{host} has no address")
        for address in addresses:
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(str(address), port, limit=CHUNK), CONNECT_SECONDS)
            except (TimeoutError, OSError) as failure:
                error = OSError(str(failure) or "timed out")
        raise error

    @staticmethod
    async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            while chunk := await asyncio.wait_for(source.read(CHUNK), IDLE_SECONDS):
                sink.write(chunk)
                await sink.drain()
        with contextlib.suppress(OSError):
            if sink.can_write_eof():
                sink.write_eof()

    @staticmethod
    async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
        body = f"arena build proxy: {reason}\n".encode()
        phrase = {403: "Forbidden", 405: "Method Not Allowed", 431: "Header Too Large",
                  502: "Bad Gateway", 503: "Service Unavailable"}.get(status, "Refused")
        writer.write(f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                     + body)
        with contextlib.suppress(OSError):
            await writer.drain()
