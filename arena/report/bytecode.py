"""Where the site's templates are kept compiled between processes.

Compiling the dozen templates takes about a quarter of a second, paid again by every
``arena report``, ``arena view`` and league server start; loading them compiled takes a
few milliseconds. Jinja's own file cache does the keeping; this module decides where it
lives and makes it harmless: a cache that cannot be written, a damaged cache file or a
folder other users can write to is no cache (the template is compiled as before), and a
template is looked up under the version of the code that compiles it, so a change of the
environment's settings never meets code compiled under the old ones.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from jinja2 import BytecodeCache, FileSystemBytecodeCache
from jinja2.bccache import Bucket

from arena import cache

CACHE_VARIABLE = "ARENA_TEMPLATE_CACHE"
"""Overrides the folder (``off`` for no cache)."""


def cache_folder() -> Path:
    """``ARENA_TEMPLATE_CACHE``, or ``uno-arena/templates`` in the user's cache folder."""
    return cache.cache_folder("templates", CACHE_VARIABLE)


class _QuietCache(FileSystemBytecodeCache):
    """Jinja's file cache, keyed by the code's version too, and never an error."""

    def __init__(self, folder: Path, version: str) -> None:
        super().__init__(str(folder), f"{version}-%s.cache")

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # a damaged file (its checksum is unpickled before any check)
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        # A full disk or a read-only home: the next process compiles again.
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def bytecode_cache(version: str) -> BytecodeCache | None:
    """The cache for templates compiled by code of ``version`` (None: none usable)."""
    configured = os.environ.get(CACHE_VARIABLE)
    if configured is not None and configured.lower() in ("off", "0", "no", "none"):
        return None
    try:
        folder = cache_folder()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
    except (OSError, RuntimeError):  # RuntimeError: a user with no home folder
        return None
    # Compiled code is run as it is read: only from a folder no one else can write to.
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
            or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        return None
    return _QuietCache(folder, version)
