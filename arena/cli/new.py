"""``arena new`` (write a starter bot) and ``arena vendor`` (fetch a bot's dependencies into
its folder, so that its sandboxed build needs no network)."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from arena import kits
from arena.sandbox import ManifestError, load_manifest

VENDOR_SECONDS = 900


def _fail(command: str, message: str) -> int:
    print(f"arena {command}: {message}", file=sys.stderr)
    return 2


def _make_readable(folder: Path) -> None:
    """Others may read the folder: the sandboxed bot runs under a uid of its own, and the
    dependencies just fetched were written with the author's umask."""
    for root, directories, files in os.walk(folder):
        for name in [*directories, *files]:
            path = Path(root) / name
            with contextlib.suppress(OSError):
                mode = path.lstat().st_mode
                if stat.S_ISLNK(mode):
                    continue
                wanted = stat.S_IROTH | stat.S_IRGRP
                if stat.S_ISDIR(mode) or mode & stat.S_IXUSR:
                    wanted |= stat.S_IXOTH | stat.S_IXGRP
                path.chmod(stat.S_IMODE(mode) | wanted)
    folder.chmod(stat.S_IMODE(folder.stat().st_mode) | 0o055)


def run_vendor(folder: Path, command: tuple[str, ...]) -> int:
    """Run a bot's vendor command in its folder, as the user, with the network; its output
    goes to the terminal. The exit code (124 after ``VENDOR_SECONDS``)."""
    print(f"fetching dependencies: {' '.join(command)}", file=sys.stderr, flush=True)
    try:
        code = subprocess.run(command, cwd=folder, stdin=subprocess.DEVNULL,
                              timeout=VENDOR_SECONDS, check=False).returncode
    except FileNotFoundError:
        print(f"{command[0]}: not found on PATH", file=sys.stderr)
        return 127
    except subprocess.TimeoutExpired:
        print(f"stopped after {VENDOR_SECONDS} s", file=sys.stderr)
        return 124
    if code == 0:
        _make_readable(folder)
    return code


def _new(args: argparse.Namespace) -> int:
    """Write a minimal bot that passes `arena check`, with its bot.toml, build and README, and
    fetch its dependencies into the folder (so that its sandboxed build runs offline)."""
    kit = kits.KITS[args.lang]
    target = Path(args.folder)
    name = args.name or target.resolve().name
    try:
        kits.check_name(name)
    except kits.KitError as error:
        return _fail("new", f"{error} (the name comes from the folder unless --name gives it)")
    if target.exists() and not (target.is_dir() and not any(target.iterdir())):
        return _fail("new", f"{target} already exists and is not an empty folder; choose "
                            "another folder (nothing was written)")
    if not target.resolve().parent.is_dir():
        return _fail("new", f"{target.resolve().parent}: no such folder (nothing was written)")
    missing = kits.missing_tools(kit) if not args.no_vendor else []
    if missing:
        return _fail("new", f"the {kit.language} kit needs "
                            + "; ".join(f"{t.command} ({t.source})" for t in missing)
                            + " on PATH (nothing was written; --no-vendor writes the kit "
                            "without fetching its dependencies)")
    # Everything happens in a fresh folder beside the target, renamed into place at the
    # end: a failure (or Ctrl-C) leaves nothing half-written.
    staging = target.resolve().parent / f".{target.resolve().name}.arena-new-{secrets.token_hex(4)}"
    try:
        staging.mkdir(mode=0o755)
        kits.write(kit, staging, name)
        manifest = load_manifest(staging)
        if manifest.vendor and not args.no_vendor:
            code = run_vendor(staging, manifest.vendor)
            if code != 0:
                return _fail("new", f"fetching the {kit.language} kit's dependencies failed "
                                    f"({' '.join(manifest.vendor)}: exit code {code}; its "
                                    "output is above). Nothing was written; fix the cause, or "
                                    "use --no-vendor and run `arena vendor` later")
        if target.exists():
            target.rmdir()
        staging.rename(target)
    except OSError as error:
        return _fail("new", f"cannot write {target}: {error.strerror or error} (nothing was "
                            "written)")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"wrote {target}/: a {kit.language} bot named {name} ({kit.summary})")
    if manifest.vendor and args.no_vendor:
        print(f"  its dependencies are not in the folder: arena check fetches them from its "
              f"lockfile; arena vendor {target} puts them there, for --no-fetch builds")
    print(f"next:  arena check {target}")
    print(f"       arena play {target} sample_bots/python/greedy --matches 20")
    print("       its README.md says how to make it yours")
    return 0


def _vendor(args: argparse.Namespace) -> int:
    """Run a bot's `vendor` command (bot.toml) in its folder, with the network, as you: it
    fetches the bot's dependencies into the folder, so that its build (in the sandbox,
    offline) finds them. Run it again after changing the bot's dependencies."""
    try:
        manifest = load_manifest(args.folder)
    except ManifestError as error:
        return _fail("vendor", str(error))
    if not manifest.vendor:
        print(f"{manifest.folder / 'bot.toml'} has no vendor command: nothing to fetch")
        return 0
    code = run_vendor(manifest.folder, manifest.vendor)
    if code != 0:
        print(f"arena vendor: {' '.join(manifest.vendor)} failed with exit code {code} "
              "(its output is above)", file=sys.stderr)
        return 1
    print(f"{manifest.folder}: dependencies fetched; builds now run offline")
    return 0


def register(commands: Any) -> None:
    new = commands.add_parser("new", help="write a starter bot (any of the kits)",
                              description=_new.__doc__)
    new.add_argument("folder", metavar="BOT_DIR", help="the folder to create")
    new.add_argument("--lang", required=True, choices=sorted(kits.KITS),
                     help="; ".join(f"{k.language}: {k.summary}" for k in kits.KITS.values()))
    new.add_argument("--name", help="the bot's name (default: the folder's name)")
    new.add_argument("--no-vendor", action="store_true",
                     help="do not fetch the dependencies now (then: arena vendor BOT_DIR)")
    new.set_defaults(run=_new)

    vendor = commands.add_parser("vendor", help="fetch a bot's dependencies into its folder",
                                 description=_vendor.__doc__)
    vendor.add_argument("folder", metavar="BOT_DIR")
    vendor.set_defaults(run=_vendor)
