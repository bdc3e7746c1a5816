"""Training environments over the official engine: a PettingZoo AEC environment for every
seat (``UnoEnv``), a Gymnasium one for a single seat (``SingleSeatEnv``), and their
observation vector and action space (``arena.env.encoding``; docs/bots.md, "Training a
bot"). They need the ``env`` extra: ``pip install 'uno-arena[env]'``."""

from arena.env.aec import UnoEnv, place_rewards
from arena.env.encoding import (
    ACTION_SIZE,
    FIELDS,
    OBSERVATION_SIZE,
    SLICES,
    Encoder,
    action_index,
    legal_indices,
)
from arena.env.single import PolicyLike, SingleSeatEnv

__all__ = [
    "ACTION_SIZE", "FIELDS", "OBSERVATION_SIZE", "SLICES", "Encoder", "PolicyLike",
    "SingleSeatEnv", "UnoEnv", "action_index", "legal_indices", "place_rewards",
]
