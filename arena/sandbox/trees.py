"""Trees of files that a bot's author, its build or its upload made: how deep and how long
their paths may be, and how to remove one whatever its shape.

Such a tree may hold anything its maker wants: a folder nested thousands deep (Python's
walks and ``shutil.rmtree`` recurse, and raise RecursionError past a thousand levels), a
path longer than the kernel takes whole (ENAMETOOLONG), a name that is not UTF-8. Every
tree the referee walks is held to these limits, far past any real bot's (a Java package
tree is a dozen folders deep, a path a few hundred bytes), and is removed by
``remove_tree``, which no shape defeats."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

MOST_TREE_DEPTH = 100
"""Folders nested below a tree's top, at most."""
MOST_TREE_PATH_BYTES = 2048
"""A path below a tree's top, at most (bytes; the kernel takes 4096 whole, the top's own
path included)."""


def path_problem(relative: str) -> str | None:
    """Why the path ``relative`` ('/'-separated, below a tree's top) goes past the limits,
    or None."""
    if len(os.fsencode(relative)) > MOST_TREE_PATH_BYTES:
        return f"a path longer than {MOST_TREE_PATH_BYTES:,} bytes ({_shown(relative)})"
    if relative.count("/") >= MOST_TREE_DEPTH:
        return f"folders nested more than {MOST_TREE_DEPTH} deep ({_shown(relative)})"
    return None


def _shown(relative: str) -> str:
    return repr(relative if len(relative) <= 80 else f"{relative[:40]}...{relative[-37:]}")


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything below it, never following a link, however deep or
    long its paths; what cannot be removed stays (as ``rmtree(ignore_errors=True)``)."""
    with contextlib.suppress(RecursionError):  # a tree deeper than Python's walk goes
        shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):  # left by the recursion or by paths too long: GNU rm walks
        # any depth relative to each folder, and stays on this file system
        with contextlib.suppress(OSError):
            subprocess.run(["rm", "-rf", "--one-file-system", "--", os.fspath(path)],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False, timeout=600)
