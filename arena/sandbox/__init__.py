"""Starting bot processes: bot manifests and launcher backends behind one interface.

``make_launcher(backend, manifest, limits, log_dir, label)`` gives the referee a seat
launcher; ``prepare(manifest, backend, limits, log_dir)`` runs a bot's build step once
before it plays. Backends (``docs/sandbox.md`` compares what each contains):

* ``bubblewrap`` (default): namespaces, read-only runtimes, private tmpfs, seccomp, cgroups,
  a uid per bot. Where it cannot run, ``make_launcher`` falls back loudly to ``fallback``.
* ``fallback``: a uid per bot, resource limits, namespaces and private temporary folders, but
  the host's files as an unprivileged user sees them: for trusted bots only (``trusted``).
* ``docker``: a container per bot, for hosts with a Docker engine.
* ``plain``: no isolation at all (development only).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from arena.sandbox import bubblewrap
from arena.sandbox.bubblewrap import BubblewrapLauncher
from arena.sandbox.build import BuildError
from arena.sandbox.docker import DockerLauncher
from arena.sandbox.environment import compile_sdk
from arena.sandbox.fallback import TRUST_HINT, FallbackLauncher
from arena.sandbox.fetch import STANDARD_REGISTRIES
from arena.sandbox.launcher import Backend, SandboxError, SandboxLauncher, StartedProcess
from arena.sandbox.limits import DEFAULT_LIMITS, OFF_TURN, SandboxLimits
from arena.sandbox.manifest import BotManifest, ManifestError, load_manifest
from arena.sandbox.pipeline import make_ready
from arena.sandbox.plain import PlainLauncher, PlainProcess, resolve_command

Launcher = SandboxLauncher | PlainLauncher
BACKENDS = tuple(str(b) for b in Backend)

_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        print(f"\n*** WARNING: {message} ***\n", file=sys.stderr, flush=True)


def untrusted_refused(manifest: BotManifest | None, reason: str | None) -> SandboxError:
    why = f"bubblewrap cannot run here ({reason}), and " if reason else ""
    who = f"bot {manifest.label} ({manifest.home}): " if manifest is not None else ""
    what = "it" if manifest is not None else "them"
    return SandboxError(
        f"{who}{why}the fallback sandbox cannot contain an untrusted bot (it sees the host's "
        f"files as an unprivileged user, and every socket family); refusing to run {what}: "
        f"{TRUST_HINT}")


def require_containment(backend: str | Backend, trusted: bool) -> None:
    """SandboxError (saying why) when ``backend`` would run bots in the fallback sandbox
    and they are not ``trusted``: checked once before a season plays, so the organiser
    hears it at once rather than as every match failing."""
    if trusted or backend not in (Backend.FALLBACK, Backend.BUBBLEWRAP):
        return
    reason = None if backend == Backend.FALLBACK else bubblewrap.probe()
    if backend == Backend.FALLBACK or reason is not None:
        raise untrusted_refused(None, reason)


def make_launcher(backend: str | Backend, manifest: BotManifest,
                  limits: SandboxLimits = DEFAULT_LIMITS, log_dir: Path = Path("runs"),
                  label: str = "bot", *, trusted: bool = False) -> Launcher:
    """The seat launcher for ``manifest`` under ``backend``; its output goes to
    ``log_dir/label.{stdout,stderr}.log``. ``describe()`` gives the log header record.

    ``bubblewrap`` falls back to ``fallback`` (with a warning on stderr and in
    ``describe()``) when bubblewrap cannot run here. The fallback runs only ``trusted``
    bots (the organiser's own: ``--trust-bots``, ``trusted_bots = true``); SandboxError
    otherwise, and when the backend cannot be used at all (docker without an engine, a bot
    folder the bot's uid cannot read)."""
    try:
        chosen = Backend(backend)
    except ValueError:
        raise SandboxError(f"unknown sandbox backend {backend!r}; choose one of "
                           f"{', '.join(BACKENDS)}") from None
    if chosen is Backend.DOCKER:  # the image has its own Python
        return DockerLauncher(manifest, log_dir, label, limits)
    if sys.executable in resolve_command(manifest):
        compile_sdk()
    if chosen is Backend.PLAIN:
        return PlainLauncher(manifest, log_dir, label)
    if chosen is Backend.FALLBACK:
        if not trusted:
            raise untrusted_refused(manifest, None)
        _warn_once("the FALLBACK sandbox does not hide the host's files (bots see what "
                   "others may read): trusted bots only")
        return FallbackLauncher(manifest, log_dir, label, limits)
    reason = bubblewrap.probe()
    if reason is None:
        return BubblewrapLauncher(manifest, log_dir, label, limits)
    if not trusted:
        raise untrusted_refused(manifest, reason)
    _warn_once(f"bubblewrap cannot run here ({reason}); the trusted bots run in the FALLBACK "
               "sandbox, which does not hide the host's files")
    return FallbackLauncher(manifest, log_dir, label, limits, reason=reason)


def describe(launcher: object) -> dict[str, Any]:
    """A launcher's record for ``MatchSpec.sandbox`` (empty for a seat with no launcher)."""
    method = getattr(launcher, "describe", None)
    return dict(method()) if callable(method) else {}


def sandbox_record(launchers: Sequence[object]) -> dict[str, Any]:
    """One ``MatchSpec.sandbox`` record for the seats of a match: the first launcher's
    description, with every seat's warnings."""
    records = [describe(launcher) for launcher in launchers]
    records = [r for r in records if r]
    if not records:
        return {}
    warnings: list[str] = []
    for record in records:
        warnings += [w for w in record.get("warnings", []) if w not in warnings]
    return {**records[0], "warnings": warnings}


def prepare(manifest: BotManifest, backend: str | Backend = Backend.BUBBLEWRAP,
            limits: SandboxLimits = DEFAULT_LIMITS, log_dir: Path = Path("runs"), *,
            trusted: bool = False, cache: Path | None = None, owner: str | None = None
            ) -> BotManifest:
    """Make the bot ready to play, once, in the backend's sandbox: its dependencies
    fetched from its lockfile (unless ``limits.fetch`` is off), then its build step (if
    its bot.toml has one) run offline (``arena.sandbox.pipeline``); return the manifest to
    play with (its folder in the build cache, ``cache`` or ``ARENA_BUILD_CACHE``, reused
    while the bot, its dependencies and the toolchain are unchanged). ``owner`` names whose
    compiler caches the build may use (the server's authors). The output of each step goes
    to ``log_dir/builds/``. BuildError if a step fails; SandboxError if the backend refuses
    the bot (see ``make_launcher``)."""
    builds = log_dir / "builds"

    def start(built: BotManifest, label: str, argv: list[str],
              hosts: tuple[str, ...] | None) -> StartedProcess:
        used = limits if hosts is None else dataclasses.replace(
            limits, build_network=True, build_hosts=hosts, egress_only=True)
        launcher = make_launcher(backend, built, used, builds, label, trusted=trusted)
        if isinstance(launcher, PlainLauncher):
            env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(built.folder),
                   "LANG": "C.UTF-8"}
            return PlainProcess(argv, built.folder, env, builds, label, used.output_bytes)
        return launcher.start(argv, {}, None, build=True)

    # A sandboxed build has no network unless the season allows it (a plain one has the
    # host's).
    offline = not limits.build_network and Backend(backend) is not Backend.PLAIN
    registries = limits.registries if limits.fetch else tuple(
        (name, "") for name in STANDARD_REGISTRIES)
    return make_ready(manifest, start, limits.build_seconds, cache, offline,
                      registries=registries, owner=owner)


class SandboxSettingsLike(Protocol):
    """What a season file says about the sandbox (``arena.league.season.SandboxSettings``)."""

    @property
    def backend(self) -> str: ...

    @property
    def memory_mb(self) -> int: ...

    @property
    def processes(self) -> int: ...

    @property
    def cpu_seconds(self) -> int: ...

    @property
    def trusted_bots(self) -> bool: ...


def limits_from(settings: SandboxSettingsLike) -> SandboxLimits:
    return SandboxLimits(memory_mib=settings.memory_mb, processes=settings.processes,
                         cpu_seconds=settings.cpu_seconds,
                         build_network=getattr(settings, "build_network", False),
                         build_hosts=getattr(settings, "build_hosts", ()),
                         build_seconds=getattr(settings, "build_seconds", 600),
                         fetch=getattr(settings, "fetch", True),
                         registries=getattr(settings, "registries", ()),
                         off_turn=getattr(settings, "off_turn", "throttle"))


def season_launcher(settings: SandboxSettingsLike, bot: BotManifest, log_dir: Path,
                    label: str) -> tuple[Launcher, dict[str, Any]]:
    """The launcher for one seat under a season's sandbox settings, and its description."""
    launcher = make_launcher(settings.backend, bot, limits_from(settings), log_dir, label,
                             trusted=settings.trusted_bots)
    return launcher, describe(launcher)


__all__ = [
    "BACKENDS", "DEFAULT_LIMITS", "OFF_TURN", "Backend", "BotManifest", "BubblewrapLauncher",
    "BuildError",
    "DockerLauncher", "FallbackLauncher", "Launcher", "ManifestError", "PlainLauncher",
    "PlainProcess", "SandboxError", "SandboxLauncher", "SandboxLimits", "StartedProcess",
    "describe", "limits_from", "load_manifest", "make_launcher", "prepare",
    "require_containment", "sandbox_record", "season_launcher",
]
