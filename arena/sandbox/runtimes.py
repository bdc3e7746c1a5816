"""Which host folders a sandboxed bot sees besides its own: its language's runtime, found on
the referee's machine, and the folders its ``bot.toml`` declares (``runtimes``), checked.

A known language (``manifest.KNOWN_LANGUAGES``) gets its toolchain without asking: Python's
prefixes and the ``arena`` package (also for stdio-json bots, behind the Python bridge), Node's
prefix, Go's GOROOT, the Rust toolchain rustup selected (its sysroot, so cargo and rustc run
without rustup), the JDK and Maven with their configuration under /etc. Their ``bin``
folders go first on the bot's PATH. Any other language declares what it needs:

    runtimes = ["/opt/ruby-3.3", "/etc/ruby"]

A declared folder is an entrant asking to see part of the referee's machine, so it is
checked (``declared_folders``) before the sandbox binds it: it must exist, is taken with its
symlinks resolved, must be a read-only system location (under /usr, /opt or a folder of
/etc that holds no secrets, or under a toolchain home the operator allows), and must not be,
hold or lie inside a bot folder, an arena output folder (match logs, builds, a season
store), the referee's own checkout, or the launcher's output folder. Homes, /tmp, /proc,
/sys, /dev, /run, /var and the like are refused outright, with the reason.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox.environment import ARENA_PACKAGE
from arena.sandbox.fetch import unwrapped
from arena.sandbox.launcher import SandboxError
from arena.sandbox.manifest import BotManifest

OPERATOR_VARIABLE = "ARENA_SANDBOX_RUNTIMES"
"""Colon-separated folders the operator shows every bot (a JDK under /opt, a rustup home);
declared runtimes under them are allowed as they are."""

SYSTEM_ROOTS = (Path("/usr"), Path("/opt"), Path("/etc"))
"""Where a declared runtime may be (under /etc: a folder of it, not /etc itself)."""
REFUSED_ROOTS = {
    "/root": "root's home", "/home": "users' homes", "/tmp": "scratch space shared by every "
    "program (other bots' and the referee's files)", "/var": "the machine's changing data "
    "(spools, caches, databases)", "/run": "sockets and state of running programs",
    "/proc": "the processes of the machine", "/sys": "the kernel's state", "/dev": "devices",
    "/srv": "served data", "/mnt": "mounted file systems", "/media": "removable media",
    "/boot": "the kernel and boot loader",
}
SECRET_ETC = frozenset({
    "ssl", "ssh", "sudoers.d", "security", "pam.d", "polkit-1", "NetworkManager",
    "wpa_supplicant", "letsencrypt", "ipsec.d", "openvpn", "wireguard", "krb5", "cron.d",
    "systemd", "docker", "containers", "libvirt", "credstore", "credstore.encrypted",
})
"""Folders of /etc that may hold keys, passwords or the machine's privileges."""
MARKER_NAMES = frozenset({"bot.toml", ".arena-built", "season.sqlite"})
MARKER_SUFFIXES = (".jsonl.gz", ".stderr.log", ".stdout.log")
"""Files that mark a bot folder or arena output (bot folders, builds, season stores, match
logs, bot output): a declared runtime may neither hold nor lie inside one."""
SCAN_LIMIT = 20_000
"""Entries looked at below a declared folder before giving up (and refusing it)."""


@dataclass(frozen=True)
class Toolchain:
    folders: tuple[Path, ...] = ()
    """Bound read-only at their own paths."""
    path: tuple[str, ...] = ()
    """Put first on the bot's PATH (inside the sandbox)."""

    def __add__(self, other: Toolchain) -> Toolchain:
        return Toolchain(self.folders + tuple(f for f in other.folders if f not in self.folders),
                         self.path + tuple(p for p in other.path if p not in self.path))


def operator_folders() -> list[Path]:
    """The operator's folders for every bot (``ARENA_SANDBOX_RUNTIMES``)."""
    value = os.environ.get(OPERATOR_VARIABLE, "")
    return [Path(part) for part in value.split(":") if part]


def _found(*names: str) -> Path | None:
    """The first of the commands found on the referee's PATH, symlinks resolved."""
    for name in names:
        where = shutil.which(name)
        if where:
            return Path(where).resolve()
    return None


def _etc_targets(home: Path, depth: int = 3) -> list[Path]:
    """The folders of /etc that symlinks inside ``home`` point into (Debian keeps a JDK's
    and Maven's configuration there), as /etc/<name>."""
    found: set[Path] = set()
    for root, directories, files in os.walk(home):
        if len(Path(root).relative_to(home).parts) >= depth:
            directories.clear()
        for name in [*directories, *files]:
            path = Path(root) / name
            if path.is_symlink():
                target = Path(os.path.normpath(path.parent / os.readlink(path)))
                parts = target.parts
                if (len(parts) > 2 and parts[1] == "etc" and parts[2] not in SECRET_ETC
                        and Path("/etc", parts[2]).is_dir()):  # never a file like passwd
                    found.add(Path("/etc", parts[2]))
    return sorted(found)


@functools.cache
def _python() -> Toolchain:
    executable = Path(sys.executable)
    return Toolchain((Path(sys.base_prefix), Path(sys.prefix), ARENA_PACKAGE,
                      executable.resolve().parent.parent))


@functools.cache
def _node() -> Toolchain:
    node = _found("node", "nodejs")
    return Toolchain((node.parent.parent,), (str(node.parent),)) if node else Toolchain()


@functools.cache
def _go() -> Toolchain:
    go = _found("go")  # GOROOT/bin/go
    return Toolchain((go.parent.parent,), (str(go.parent),)) if go else Toolchain()


@functools.cache
def _rust() -> Toolchain:
    """The toolchain's sysroot: with rustup, the one it picks outside any project (the bot
    then runs cargo and rustc from the sysroot directly, without rustup or its home)."""
    rustc = _found("rustc")
    if rustc is None:
        return Toolchain()
    if rustc.name == "rustc":
        sysroot = rustc.parent.parent
    else:  # a rustup proxy
        try:
            result = subprocess.run([str(shutil.which("rustc")), "--print", "sysroot"],
                                    cwd="/", capture_output=True, text=True, timeout=30,
                                    check=True)
        except (OSError, subprocess.SubprocessError):
            return Toolchain()
        sysroot = Path(result.stdout.strip()).resolve()
    return Toolchain((sysroot,), (str(sysroot / "bin"),))


@functools.cache
def _java() -> Toolchain:
    """The JDK that ``java`` runs and Maven's home, with their configuration under /etc."""
    toolchain = Toolchain()
    java = _found("java")
    if java is not None:
        home = java.parent.parent
        toolchain += Toolchain((home, *_etc_targets(home)), (str(java.parent),))
    maven = _found("mvn")
    if maven is not None:
        home = maven.parent.parent
        toolchain += Toolchain((home, *_etc_targets(home, depth=1)))
    return toolchain


LANGUAGE_TOOLCHAINS: dict[str, Callable[[], Toolchain]] = {
    "python": _python, "javascript": _node, "typescript": _node, "go": _go, "rust": _rust,
    "java": _java, "kotlin": _java, "cpp": Toolchain, "c": Toolchain, "other": Toolchain,
    "stdio-json": _python,
}
COMMAND_TOOLCHAINS: dict[str, Callable[[], Toolchain]] = {
    "node": _node, "nodejs": _node, "go": _go, "cargo": _rust, "rustc": _rust, "java": _java,
    "mvn": _java,
}


def toolchain(manifest: BotManifest, argv: Sequence[str]) -> Toolchain:
    """What the bot's language (and the command it runs) needs, found on this machine."""
    found = LANGUAGE_TOOLCHAINS.get(manifest.language, Toolchain)()
    argv = unwrapped(argv)  # the fetch and build steps run under a shell that sets variables
    if manifest.protocol == "stdio-json" or sys.executable in argv:
        found += _python()
    if argv and argv[0] in COMMAND_TOOLCHAINS:
        found += COMMAND_TOOLCHAINS[argv[0]]()
    return found


def trusted_homes() -> list[Path]:
    """Toolchain homes the operator vouches for: their own list, and every toolchain found."""
    homes = [p.resolve() for p in operator_folders() if p.exists()]
    for find in {*LANGUAGE_TOOLCHAINS.values(), *COMMAND_TOOLCHAINS.values()}:
        homes += find().folders
    # A toolchain found at the top (a `go` in /bin makes "/" its home) vouches for nothing.
    return [home for home in homes if len(home.parts) >= 3]


def _under(path: Path, other: Path) -> bool:
    return path == other or other in path.parents


def _overlaps(path: Path, other: Path) -> bool:
    return _under(path, other) or _under(other, path)


def _is_marker(name: str) -> bool:
    return name in MARKER_NAMES or name.endswith(MARKER_SUFFIXES)


@functools.lru_cache(maxsize=256)
def _marker_below(folder: Path) -> str | None:
    """The first marker file found below ``folder`` (or why it could not be checked)."""
    seen = 0
    for root, directories, files in os.walk(folder):
        for name in [*files, *directories]:
            if _is_marker(name):
                return f"it holds {Path(root) / name}"
        seen += len(files) + len(directories)
        if seen > SCAN_LIMIT:
            return (f"it holds over {SCAN_LIMIT:,} entries, too many to check that no bot "
                    "folder or arena output is among them")
    return None


def _marker_above(folder: Path) -> str | None:
    for parent in folder.parents:
        try:
            names = sorted(os.listdir(parent))
        except OSError:
            continue
        marker = next((name for name in names if _is_marker(name)), None)
        if marker is not None:
            return f"it lies inside {parent}, which holds {marker}"
    return None


def refusal(entry: str, protected: Sequence[Path], trusted: Sequence[Path]) -> str | None:
    """Why the declared runtime folder ``entry`` may not be shown to a bot, or None."""
    try:
        path = Path(entry).resolve(strict=True)
    except (OSError, RuntimeError):
        return "no such folder on this machine"
    if not path.is_dir():
        return "not a folder"
    shown = f" (it is {path})" if str(path) != entry else ""
    for other in protected:
        if _overlaps(path, other):
            return f"it overlaps {other}{shown}"
    if any(_under(path, home) for home in trusted):
        return None
    for root, why in REFUSED_ROOTS.items():
        if _under(path, Path(root)):
            return f"{root} holds {why}{shown}"
    if not any(_under(path, root) and path != root for root in SYSTEM_ROOTS):
        return (f"not a system folder{shown}: runtimes may only be under /usr, /opt or a "
                "folder of /etc")
    if _under(path, Path("/usr")):
        return None  # already shown to every bot
    if _under(path, Path("/etc")) and path.parts[2] in SECRET_ETC:
        return f"/etc/{path.parts[2]} may hold secrets{shown}"
    mode = path.stat().st_mode
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        return f"every user may write it{shown}"
    return _marker_above(path) or _marker_below(path)


def declared_folders(manifest: BotManifest, protected: Sequence[Path]) -> list[Path]:
    """The bot's declared runtimes, resolved; SandboxError naming the first one refused.
    ``protected``: folders no bot may see through a declaration (the launcher's output
    folder...); the bot's own folder and the referee's checkout are always among them."""
    guarded = [manifest.folder.resolve(), *(p.resolve() for p in protected)]
    if (ARENA_PACKAGE.parent / "pyproject.toml").exists():  # a checkout, not site-packages
        guarded.append(ARENA_PACKAGE.parent)
    trusted = trusted_homes()
    folders = []
    for entry in manifest.runtimes:
        why = refusal(entry, guarded, trusted)
        if why is not None:
            raise SandboxError(
                f"{manifest.home / 'bot.toml'}: field 'runtimes': {entry} is refused: {why}. "
                "Declare only read-only system folders your language needs (under /usr, /opt "
                f"or /etc/<name>); an operator can allow others with {OPERATOR_VARIABLE}")
        folders.append(Path(entry).resolve())
    return folders
