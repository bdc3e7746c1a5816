"""The fallback backend, for hosts where bubblewrap is missing or unusable: weaker isolation.

What it does: the resource limits (cgroup caps where a cgroup can be made, rlimits), new
network, pid, IPC and UTS namespaces and a private /proc (``unshare``, util-linux) when the
kernel allows them, no capabilities and no-new-privileges (``setpriv``). What it does not:
the bot runs under the referee's uid and sees the host's whole filesystem, so it can read
whatever the referee can read (other bots' folders, the match logs) and write wherever the
referee can write. Every match log records that warning (see ``describe()``); the table in
``arena/sandbox/README.md`` lists what each backend contains.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from arena.sandbox.environment import BOT_ENV
from arena.sandbox.launcher import Backend, SandboxLauncher, is_root, rlimits
from arena.sandbox.process import HelperPlan, SandboxProcess

WARNING = ("FALLBACK SANDBOX: bubblewrap is not in use; the bot runs under the referee's uid "
           "and can read and write the host's files (other bots' folders, logs); only its "
           "network, processes and resources are contained")

NAMESPACE_VARIANTS = (
    ("--net", "--ipc", "--uts", "--pid", "--fork", "--kill-child", "--mount-proc"),
    ("--user", "--map-root-user", "--net", "--ipc", "--uts", "--pid", "--fork",
     "--kill-child", "--mount-proc"),
    ("--net",),
    ("--user", "--map-root-user", "--net"),
)
"""Tried in order; the first the kernel accepts is used (root needs no user namespace)."""

DROP_PRIVILEGES = ("--no-new-privs", "--inh-caps=-all", "--bounding-set=-all")


@functools.cache
def namespace_options() -> tuple[str, ...] | None:
    """The ``unshare`` options that work here, or None when no namespace can be made."""
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if unshare is None or setpriv is None:
        return None
    for options in NAMESPACE_VARIANTS:
        if options[0] == "--user" and is_root():
            continue
        try:
            result = subprocess.run([unshare, *options, "--", setpriv, *DROP_PRIVILEGES,
                                     "--", "true"], capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if result.returncode == 0:
            return options
    return None


class FallbackLauncher(SandboxLauncher):
    """Start a bot with rlimits, cgroups and ``unshare`` namespaces only."""

    backend = Backend.FALLBACK

    def __init__(self, *args: Any, reason: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.options = namespace_options()
        self.warnings.insert(0, WARNING)
        if reason:
            self.warnings.insert(1, f"bubblewrap was not used: {reason}")
        if self.options is None:
            self.warnings.append("unshare is unavailable: the bot shares the host's network "
                                 "and sees its processes")
        elif "--pid" not in self.options:
            self.warnings.append("no pid namespace: the bot sees the host's processes")
        # RLIMIT_NPROC counts every process of a uid (and none of root's): with the bot under
        # the referee's uid it would cap the referee, so only the pids cgroup counts.
        if self.cgroup_host is None or "pids" not in self.cgroup_host.parents:
            self.warnings.append("no pids cgroup: the bot's processes are not capped")

    def isolation(self) -> dict[str, Any]:
        namespaces = [] if self.options is None else [
            name for flag, name in (("--net", "net"), ("--pid", "pid"), ("--ipc", "ipc"),
                                    ("--uts", "uts"), ("--user", "user"),
                                    ("--mount-proc", "mount"))
            if flag in self.options]
        return {**super().isolation(), "namespaces": namespaces, "uid": "the referee's",
                "filesystem": "the host's, unrestricted", "seccomp": None}

    def start(self, argv: list[str], env: dict[str, str], socket_dir: Path | None, *,
              build: bool = False) -> SandboxProcess:
        limits = self.limits.for_build() if build else self.limits
        label = f"{self.label}.build" if build else self.label
        group = self.make_cgroups(limits, label)
        # A private HOME and TMPDIR: a courtesy (nothing stops the bot writing elsewhere).
        home = Path(tempfile.mkdtemp(prefix="arena-fallback-home-"))
        environment = {**BOT_ENV, "HOME": str(home), "TMPDIR": str(home), **env}
        environment["PATH"] = os.environ.get("PATH", environment["PATH"])
        command = list(argv)
        if command and not os.path.isabs(command[0]):
            found = shutil.which(command[0], path=environment["PATH"])
            if found is None and (self.manifest.folder / command[0]).exists():
                found = str(self.manifest.folder / command[0])
            command[0] = found or command[0]
        if self.options is not None and not (build and limits.build_network):
            unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
            assert unshare is not None and setpriv is not None
            command = [unshare, *self.options, "--", setpriv, *DROP_PRIVILEGES, "--", *command]
        plan = HelperPlan(
            argv=command, env=environment, cgroups=group, chdir=str(self.manifest.folder),
            standby=not build,
            rlimits=rlimits(limits, memory_capped=group is not None and
                            "memory" in group.directories, count_processes=False))
        return SandboxProcess(plan, log_dir=self.log_dir, label=label,
                              output_cap=limits.output_bytes, cleanup=[home])
