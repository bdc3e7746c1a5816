"""A bot that plays the trained linear policy: ``weights.json`` over ``policy.py``'s features.

``python -m examples.train.train --out DIR`` writes this file into a bot folder beside
``policy.py`` and the weights; run there, it imports ``policy`` from its own folder.
"""

import tomllib
from pathlib import Path

from policy import LinearPolicy, load_weights

from arena.bots.sdk import run

FOLDER = Path(__file__).resolve().parent


def main() -> None:
    manifest = tomllib.loads((FOLDER / "bot.toml").read_text(encoding="utf-8"))
    policy = LinearPolicy(load_weights(FOLDER / "weights.json"))
    run(policy=lambda seed: policy, name=manifest["name"], version=manifest["version"])


if __name__ == "__main__":
    main()
