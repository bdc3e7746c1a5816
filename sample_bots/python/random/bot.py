"""A bot that plays uniformly at random among the legal actions (under any variant)."""

from arena.bots.sdk import Turn, run
from arena.rules.options import VARIANTS


def decide(turn: Turn) -> int:
    # turn.rng is seeded from this seat's match seed and what the request shows, so the bot
    # is reproducible: a whole match, or any one decision with arena refeed.
    return turn.rng.choice(turn.legal_actions)


if __name__ == "__main__":
    run(decide, name="random", version="1.0", variants=VARIANTS)
