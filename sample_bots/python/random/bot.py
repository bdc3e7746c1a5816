"""A bot that plays uniformly at random among the legal actions (under any variant)."""

from arena.bots.sdk import Turn, run
from arena.rules.options import VARIANTS


def decide(turn: Turn) -> int:
    # turn.rng is seeded with this seat's match seed, so the bot is reproducible.
    return turn.rng.choice(turn.legal_actions)


if __name__ == "__main__":
    run(decide, name="random", version="1.0", variants=VARIANTS)
