"""Write a trained policy as a bot folder that ``arena check`` and ``arena submit`` take.

The folder holds ``bot.toml``, ``bot.py`` (the SDK bot of this directory), ``policy.py``
(this directory's, byte for byte: the bot plays by the features it was trained on) and
``weights.json``.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from examples.train.policy import save_weights

HERE = Path(__file__).resolve().parent
COPIED = ("bot.py", "policy.py")
VERSION = "1.0"


def manifest(name: str) -> str:
    """The bot's ``bot.toml``."""
    return (f'name = "{name}"\nversion = "{VERSION}"\nauthor = ""\nlanguage = "python"\n'
            "# python3 is the referee's own interpreter, where the arena SDK lives.\n"
            'run = ["python3", "bot.py"]\n')


def export(folder: Path, weights: Sequence[float], about: dict[str, Any],
           name: str = "trained-linear") -> None:
    """Write the bot folder (created if missing; its four files replaced)."""
    folder.mkdir(parents=True, exist_ok=True)
    for file in COPIED:
        shutil.copyfile(HERE / file, folder / file)
    save_weights(folder / "weights.json", weights, about)
    (folder / "bot.toml").write_text(manifest(name), encoding="utf-8")
