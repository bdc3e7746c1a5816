"""The fetch step: a bot's dependencies, from its lockfile, before its build runs offline.

A bot folder that holds an ecosystem's lockfile (``ECOSYSTEMS``: ``package-lock.json``,
``go.sum``, ``Cargo.lock``, ``pom.xml``, a ``requirements.txt`` with hashes) has its
dependencies fetched by the referee with a fixed command per ecosystem that the author
does not choose, in the sandbox, online through the egress proxy to that ecosystem's
registry alone (``registries``). The author's build then runs offline on a copy of the
result. The threat model of the caches
is in ``docs/sandbox.md``; in short:

* A fetched tree is kept in the build cache under the hash of exactly what the fetch saw
  (its inputs, command, registry and toolchain: ``fetch_key``), written once by the
  referee from the fetch's packed output, and checked against its digest on every use. A
  build never sees the cache: it gets a private copy, handed to its own uid.
* Where the fetch runs no code of the author's (npm with ``--ignore-scripts``, ``go mod
  download``, ``cargo fetch``, pip with wheels only: every archive checked against the
  lockfile's hashes), the tree is shared by every bot with the same lockfile. Maven runs
  the project's plugins to find what it needs, so its trees are kept per owner
  (``shared``).
* Compiler caches (Go's build cache, cargo's ``target/``) are kept per owner and toolchain
  (``kept``): a build may leave anything there, and only its owner's later builds read it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import subprocess
import sys
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox.manifest import BotManifest, file_chunks, source_entries

PIPELINE = ".arena"
"""The folder of a build's workspace that the fetch step owns (Go's module and build
caches): whatever an upload put there is replaced."""


@dataclass(frozen=True)
class Ecosystem:
    """How the referee fetches one ecosystem's dependencies and hands them to a build."""

    name: str
    lockfile: str
    inputs: tuple[str, ...]
    """The files the fetch sees (the lockfile among them), relative to the bot folder; a
    name ending in ``/`` is a folder, taken whole. Empty: the whole source tree."""
    keyed: tuple[str, ...]
    """What the fetch key hashes (the same as ``inputs`` unless the fetch sees the whole
    tree: Maven's result depends on its pom and ``.mvn/``, not on the sources)."""
    registry: str
    """The standard registry's address (``registries`` may name a mirror)."""
    extra_hosts: tuple[str, ...]
    """Hosts the standard registry also serves from (downloads, checksums)."""
    output: str
    """Where the fetch leaves its result, relative to its workspace; the build finds it at
    the same place in its own."""
    fetch_environment: tuple[tuple[str, str], ...]
    build_environment: tuple[tuple[str, str], ...]
    """Variables set for the fetch and for the build; ``$PWD`` is the bot folder."""
    runtime: bool
    """Whether the bot needs the result to run (``node_modules``): kept in the built bot."""
    vendored: tuple[str, ...]
    """What ``arena vendor`` puts in a folder and ``arena submit`` leaves out."""
    kept: tuple[str, ...] = ()
    """Build trees kept between one owner's builds (compiler caches)."""
    kept_in_output: bool = False
    """Whether ``kept`` is also part of the built bot (cargo's ``target/``)."""
    shared: bool = True
    """Whether one fetched tree serves every owner (no code of the author's runs)."""

    def command(self, registry: str) -> list[str]:
        """The fixed fetch command, for ``registry`` (the standard one or a mirror)."""
        if self.name == "npm":
            return ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund",
                    "--no-update-notifier", f"--registry={registry}"]
        if self.name == "go":
            return ["go", "mod", "download"]
        if self.name == "cargo":
            argv = ["cargo", "fetch", "--locked", "--target", host_triple()]
            if registry != self.registry:
                argv += ["--config", f'source.arena-mirror.registry="sparse+{registry}"',
                         "--config", 'source.crates-io.replace-with="arena-mirror"']
            return argv
        if self.name == "pip":
            return [sys.executable, "-m", "pip", "install", "--require-hashes",
                    "--only-binary=:all:", "--no-compile", "--no-input",
                    f"--index-url={registry}", "--requirement", "requirements.txt"]
        return ["mvn", "--batch-mode", "--quiet", "-DskipTests",
                *([] if registry == self.registry else ["--settings", MAVEN_SETTINGS]),
                "package"]

    def environment(self, registry: str) -> dict[str, str]:
        environment = dict(self.fetch_environment)
        if self.name == "go":
            environment["GOPROXY"] = registry
            if registry != self.registry:
                environment["GOSUMDB"] = f"sum.golang.org {registry}/sumdb/sum.golang.org"
        return environment

    def hosts(self, registry: str) -> tuple[str, ...]:
        """What the fetch may reach: the registry's host, and where it also serves from."""
        host = urllib.parse.urlsplit(registry).hostname or ""
        return (host, *(self.extra_hosts if registry == self.registry else ()))


WRAPPER_NAME = "arena-step"
PYTHON_PACKAGES = "python-packages"
"""Where a Python bot's fetched packages go; on its import path (``environment.BOT_ENV``)."""
MAVEN_SETTINGS = f"{PIPELINE}/maven-settings.xml"
GO_MODULES = f"{PIPELINE}/go/mod"

ECOSYSTEMS = (
    Ecosystem(
        name="npm", lockfile="package-lock.json",
        inputs=("package.json", "package-lock.json"),
        keyed=("package.json", "package-lock.json"),
        registry="https://registry.npmjs.org/", extra_hosts=(), output="node_modules",
        fetch_environment=(("npm_config_cache", f"$PWD/{PIPELINE}/npm-cache"),
                           ("npm_config_logs_dir", f"$PWD/{PIPELINE}/npm-logs")),
        build_environment=(("npm_config_offline", "true"),),
        runtime=True, vendored=("node_modules",)),
    Ecosystem(
        name="go", lockfile="go.sum", inputs=("go.mod", "go.sum"), keyed=("go.mod", "go.sum"),
        registry="https://proxy.golang.org", extra_hosts=("sum.golang.org",),
        output=GO_MODULES,
        fetch_environment=(("GOMODCACHE", f"$PWD/{GO_MODULES}"), ("GOTOOLCHAIN", "local"),
                           ("GOFLAGS", "-mod=mod"),
                           ("GOCACHE", f"$PWD/{PIPELINE}/go/fetch-cache")),
        build_environment=(("GOMODCACHE", f"$PWD/{GO_MODULES}"), ("GOPROXY", "off"),
                           ("GOSUMDB", "off"), ("GOTOOLCHAIN", "local"), ("GOFLAGS", "-mod=mod"),
                           ("GOCACHE", f"$PWD/{PIPELINE}/go/cache")),
        runtime=False, vendored=("vendor",), kept=(f"{PIPELINE}/go/cache",)),
    Ecosystem(
        name="cargo", lockfile="Cargo.lock", inputs=("Cargo.toml", "Cargo.lock"),
        keyed=("Cargo.toml", "Cargo.lock"),
        registry="https://index.crates.io/", extra_hosts=("static.crates.io",),
        output=".cargo-home",
        fetch_environment=(("CARGO_HOME", "$PWD/.cargo-home"),),
        build_environment=(("CARGO_HOME", "$PWD/.cargo-home"), ("CARGO_NET_OFFLINE", "true")),
        runtime=False, vendored=(".cargo-home", "vendor"), kept=("target",),
        kept_in_output=True),
    Ecosystem(
        name="maven", lockfile="pom.xml", inputs=(), keyed=("pom.xml", ".mvn/"),
        registry="https://repo.maven.apache.org/maven2", extra_hosts=(),
        output=".m2/repository",
        fetch_environment=(("MAVEN_OPTS", "-Dmaven.repo.local=$PWD/.m2/repository"),),
        build_environment=(("MAVEN_OPTS", "-Dmaven.repo.local=$PWD/.m2/repository"),),
        runtime=False, vendored=(".m2",), shared=False),
    Ecosystem(
        name="pip", lockfile="requirements.txt", inputs=("requirements.txt",),
        keyed=("requirements.txt",),
        registry="https://pypi.org/simple/", extra_hosts=("files.pythonhosted.org",),
        output=PYTHON_PACKAGES,
        fetch_environment=(("PIP_TARGET", f"$PWD/{PYTHON_PACKAGES}"), ("PIP_NO_CACHE_DIR", "1"),
                           ("PIP_DISABLE_PIP_VERSION_CHECK", "1")),
        build_environment=(), runtime=True, vendored=(PYTHON_PACKAGES,)),
)
BY_NAME = {ecosystem.name: ecosystem for ecosystem in ECOSYSTEMS}
STANDARD_REGISTRIES = {ecosystem.name: ecosystem.registry for ecosystem in ECOSYSTEMS}


def registry_address(name: str, text: str) -> str:
    """``text`` as the registry of ecosystem ``name``: an https address, or "" (off)."""
    if name not in BY_NAME:
        raise ValueError(f"registries: no ecosystem {name!r} (known: "
                         f"{', '.join(BY_NAME)})")
    if text == "":
        return ""
    parts = urllib.parse.urlsplit(text)
    if parts.scheme != "https" or not parts.hostname or parts.username or parts.port not in (
            None, 443):
        raise ValueError(f"registries.{name} must be an https:// address on port 443 (or "
                         f'"" to fetch nothing for {name}), not {text!r}')
    return text


def ecosystems_of(manifest: BotManifest) -> list[Ecosystem]:
    """The ecosystems whose lockfile is in the bot's sources, in ``ECOSYSTEMS`` order."""
    present = {entry.relative for entry in source_entries(manifest.folder)}
    return [ecosystem for ecosystem in ECOSYSTEMS if ecosystem.lockfile in present]


def _selected(relative: str, names: tuple[str, ...]) -> bool:
    return not names or any(relative == n or (n.endswith("/") and relative.startswith(n))
                            for n in names)


def fetch_key(ecosystem: Ecosystem, manifest: BotManifest, registry: str, toolchain: str,
              owner: str) -> str:
    """The fetched tree's content address: exactly what the fetch depends on (and its
    owner's name where the tree is not ``shared``)."""
    digest = hashlib.sha256()
    for entry in source_entries(manifest.folder, modes=True):
        if entry.kind in ("file", "exec") and _selected(entry.relative, ecosystem.keyed):
            digest.update(f"{entry.relative}\0{entry.kind}\0".encode("utf-8", "surrogateescape"))
            for chunk in file_chunks(manifest.folder, entry):
                digest.update(chunk)
            digest.update(b"\0")
    described = json.dumps({
        "ecosystem": ecosystem.name, "inputs": digest.hexdigest(),
        "command": ecosystem.command(registry), "registry": registry,
        "environment": ecosystem.environment(registry), "toolchain": toolchain,
        "owner": None if ecosystem.shared else owner}, sort_keys=True)
    return hashlib.sha256(described.encode()).hexdigest()


def fetch_inputs(ecosystem: Ecosystem, manifest: BotManifest) -> set[str]:
    """The source paths a fetch workspace holds (every source, for Maven)."""
    return {entry.relative for entry in source_entries(manifest.folder)
            if _selected(entry.relative, ecosystem.inputs)}


def prepare_workspace(ecosystem: Ecosystem, workspace: Path, registry: str) -> None:
    """What a fetch needs beside the author's files: an empty crate root for cargo (which
    reads its manifest's targets, not their code), a mirror for Maven."""
    if ecosystem.name == "cargo":
        for stub in ("src/main.rs", "src/lib.rs"):
            path = workspace / stub
            if not path.exists():
                path.parent.mkdir(mode=0o755, exist_ok=True)
                path.write_text("")
    if ecosystem.name == "maven" and registry != ecosystem.registry:
        settings = workspace / MAVEN_SETTINGS
        settings.parent.mkdir(mode=0o755, exist_ok=True)
        settings.write_text(
            "<settings><mirrors><mirror><id>arena-mirror</id><mirrorOf>*</mirrorOf>"
            f"<url>{registry}</url></mirror></mirrors></settings>\n")


def prune(ecosystem: Ecosystem, output: Path) -> None:
    """Leave out of a fetched tree what the build makes again (cargo's unpacked sources)."""
    if ecosystem.name == "cargo":
        shutil.rmtree(output / "registry" / "src", ignore_errors=True)


def with_environment(argv: list[str], environment: dict[str, str]) -> list[str]:
    """``argv`` run with ``environment`` set, each ``$PWD`` read as the folder it runs in
    (a sandbox's /bot, or the folder itself for the plain backend)."""
    if not environment:
        return argv
    exports = " ".join(f'export {name}="{value}";' for name, value in environment.items())
    return ["/bin/sh", "-c", f'{exports} exec "$@"', WRAPPER_NAME, *argv]


def unwrapped(argv: Sequence[str]) -> list[str]:
    """The command ``with_environment`` wrapped (``argv`` itself if it is not wrapped)."""
    if len(argv) > 4 and argv[0] == "/bin/sh" and argv[3] == WRAPPER_NAME:
        return list(argv[4:])
    return list(argv)


@functools.cache
def host_triple() -> str:
    """The Rust target of this machine (cargo fetches only what it needs)."""
    try:
        described = subprocess.run(["rustc", "-vV"], capture_output=True, text=True,
                                   timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return "x86_64-unknown-linux-gnu"
    return next((line.split(":", 1)[1].strip() for line in described.splitlines()
                 if line.startswith("host:")), "x86_64-unknown-linux-gnu")


@dataclass(frozen=True)
class Fetched:
    """A fetched tree in the cache, for one ecosystem of one bot."""

    ecosystem: Ecosystem
    folder: Path
    key: str


def registry_of(ecosystem: Ecosystem, registries: tuple[tuple[str, str], ...]) -> str:
    return dict(registries).get(ecosystem.name, ecosystem.registry)



def owner_state(manifest: BotManifest) -> bool:
    """Whether the bot's build reads what its owner's earlier builds left (compiler caches,
    a Maven repository): then its result is its owner's alone."""
    return any(e.kept or not e.shared for e in ecosystems_of(manifest))


def fetched_ecosystems(fetch: bool, registries: tuple[tuple[str, str], ...]) -> list[str]:
    """The ecosystems a configuration fetches dependencies for."""
    chosen = dict(registries)
    return [e.name for e in ECOSYSTEMS if fetch and chosen.get(e.name, e.registry)]


def left_out(manifest: BotManifest, fetched: list[str]) -> list[tuple[str, str, int]]:
    """What an upload leaves out because the server fetches it: (folder, lockfile, bytes)
    for each vendored folder of an ecosystem in ``fetched`` whose lockfile the bot has."""
    sizes: dict[str, int] = {}
    owners: dict[str, str] = {}
    for ecosystem in ecosystems_of(manifest):
        if ecosystem.name in fetched:
            for vendored in ecosystem.vendored:
                owners.setdefault(vendored, ecosystem.lockfile)
    for entry in source_entries(manifest.folder):
        top = entry.relative.split("/", 1)[0]
        if top in owners and entry.kind != "dir":
            sizes[top] = sizes.get(top, 0) + (manifest.folder / entry.relative).lstat().st_size
        elif top in owners:
            sizes.setdefault(top, 0)
    return [(name, owners[name], sizes[name]) for name in sorted(sizes)]
