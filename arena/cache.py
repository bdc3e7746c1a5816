"""Where UNO Arena keeps what it can make again (built bots, compiled templates)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder(kind: str, variable: str) -> Path:
    """The folder named by the environment variable ``variable`` if set, else ``kind`` under
    ``uno-arena`` in the user's cache folder (``XDG_CACHE_HOME``, or ``~/.cache``)."""
    configured = os.environ.get(variable)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "uno-arena" / kind
