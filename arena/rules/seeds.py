"""Seeds derived one-way from a match seed, so that a seed never reveals the deck order."""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *labels: object) -> int:
    """A 63-bit seed from ``seed`` and labels (``derive_seed(s, "seat", 2)``); one-way."""
    text = ":".join([str(seed), *map(str, labels)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def seat_seed(match_seed: int, seat: int) -> int:
    """The seed a seat's bot gets at match start (the shuffle's seed stays secret, §19)."""
    return derive_seed(match_seed, "seat", seat)
