"""For the whole suite: every subprocess the tests start (``python -m arena.cli``, bots run
without a sandbox) imports this checkout's ``arena`` package, whatever else is installed or
wherever the subprocess runs."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
