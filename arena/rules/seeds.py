"""Where a match's chance comes from: a secret key (seasons, ``arena play``) or a public seed.

A league season draws one secret **season key** (32 random bytes) at its first run and keeps
it in its store. Every match's key is derived from it with HMAC-SHA256 under a label that
names the match (or the deal, when several matches share one), and the match key gives, one
way again, the deck's generator and each seat's seed. A bot is given its seat seed and sees
cards; neither leads back to the match key, the deck, or another match: HMAC is one-way, and
the deck's generator is keyed BLAKE2b in counter mode, whose output (unlike the Mersenne
Twister's) reveals nothing of its state. Logs and the site carry the season key's SHA-256
(a commitment) and each match's label; once the organiser reveals the key, anyone can check
the commitment and re-derive every deal (commit-reveal).

A **public seed** (an integer) is the predictable alternative, for tests, ``arena simulate``
and ``arena play --seed``: anyone who knows it knows every deal.

Pure: no I/O, no clock; the only randomness is what the key or seed determines.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from dataclasses import dataclass
from typing import Any

KEY_BYTES = 32
"""Length of a season key (and of every key derived from it)."""


def derive_seed(seed: int, *labels: object) -> int:
    """A 63-bit seed from a public ``seed`` and labels (``derive_seed(s, "seat", 2)``)."""
    text = ":".join([str(seed), *map(str, labels)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def seat_seed(match_seed: int, seat: int) -> int:
    """The seed a seat's bot gets at match start from a public match seed."""
    return derive_seed(match_seed, "seat", seat)


def deck_seed(match_seed: int) -> int:
    """The seed of a match's shuffles from a public match seed (bots are never given it)."""
    return derive_seed(match_seed, "deck")


def key_commitment(key: bytes) -> str:
    """The SHA-256 of a season key, published before the season and checked after."""
    return hashlib.sha256(key).hexdigest()


def derive_key(key: bytes, *labels: object) -> bytes:
    """HMAC-SHA256 of the labels (joined by "/") under ``key``: a key for one purpose."""
    return hmac.new(key, "/".join(map(str, labels)).encode(), hashlib.sha256).digest()


def parse_key(text: str) -> bytes:
    """A season key from its hex form; ValueError saying what is wrong."""
    text = text.strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise ValueError("a season key is 64 hexadecimal digits") from None
    if len(key) != KEY_BYTES:
        raise ValueError(f"a season key is {KEY_BYTES * 2} hexadecimal digits, "
                         f"not {len(text)}")
    return key


class KeyedRandom(random.Random):
    """``random.Random`` whose bits are BLAKE2b, keyed, in counter mode: the same key gives
    the same sequence on every machine, and no run of outputs reveals the key or the
    outputs still to come (the Mersenne Twister's state can be rebuilt from its output)."""

    def __init__(self, key: bytes) -> None:
        if not 1 <= len(key) <= 64:
            raise ValueError("a BLAKE2b key is 1 to 64 bytes")
        self._key = key
        self._counter = 0
        self._pool = 0
        self._pool_bits = 0
        super().__init__()

    def seed(self, *args: Any, **kwargs: Any) -> None:
        """The key is the seed; random.Random's own seeding has nothing to set."""

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        while self._pool_bits < k:
            block = hashlib.blake2b(self._counter.to_bytes(8, "big"), key=self._key).digest()
            self._counter += 1
            self._pool |= int.from_bytes(block, "big") << self._pool_bits
            self._pool_bits += 8 * len(block)
        value = self._pool & ((1 << k) - 1)
        self._pool >>= k
        self._pool_bits -= k
        return value

    def random(self) -> float:
        return self.getrandbits(53) * (1.0 / (1 << 53))

    def getstate(self) -> tuple[Any, ...]:
        return (self._key, self._counter, self._pool, self._pool_bits)

    def setstate(self, state: tuple[Any, ...]) -> None:
        self._key, self._counter, self._pool, self._pool_bits = state


@dataclass(frozen=True)
class MatchSeed:
    """Where one match's chance comes from: a secret match key derived from a season key
    (``keyed``), or a public integer seed (``public``). Its ``to_record()`` is what the
    match log may say about it: the season key's commitment and the match's label, or the
    public seed; never a key."""

    key: bytes | None = None
    """The match key (secret): ``derive_key(season_key, label)``."""
    number: int | None = None
    """The public seed, when there is no key."""
    commitment: str = ""
    """SHA-256 of the season key the match key comes from."""
    label: str = ""
    """The label the match key is derived under."""

    def __post_init__(self) -> None:
        if (self.key is None) == (self.number is None):
            raise ValueError("a match seed is either a key or a public number")

    @classmethod
    def public(cls, number: int) -> MatchSeed:
        return cls(number=number)

    @classmethod
    def keyed(cls, season_key: bytes, label: str) -> MatchSeed:
        return cls(key=derive_key(season_key, "match", label),
                   commitment=key_commitment(season_key), label=label)

    @property
    def predictable(self) -> bool:
        return self.key is None

    def deck_rng(self) -> random.Random:
        """The generator of every shuffle of the match."""
        if self.key is None:
            assert self.number is not None
            return random.Random(deck_seed(self.number))
        return KeyedRandom(derive_key(self.key, "deck"))

    def seat_seed(self, seat: int) -> int:
        """The seed a seat is given at match start (63 bits; says nothing of the deck)."""
        if self.key is None:
            assert self.number is not None
            return seat_seed(self.number, seat)
        return int.from_bytes(derive_key(self.key, "seat", seat)[:8], "big") >> 1

    def to_record(self) -> dict[str, Any]:
        if self.key is None:
            return {"seed": self.number}
        return {"key_commitment": self.commitment, "key_label": self.label}

    @classmethod
    def from_record(cls, record: dict[str, Any], season_key: bytes | None) -> MatchSeed:
        """The match seed a log header describes. KeyError when the header's deals come
        from a season key and ``season_key`` is missing; ValueError when it does not match
        the header's commitment."""
        if record.get("seed") is not None:
            return cls.public(int(record["seed"]))
        commitment = record["key_commitment"]
        if season_key is None:
            raise KeyError(commitment)
        if key_commitment(season_key) != commitment:
            raise ValueError(f"the season key given does not match the commitment "
                             f"{commitment[:16]}… this log was played under")
        return cls.keyed(season_key, record["key_label"])
