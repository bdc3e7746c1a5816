"""Where a match's chance comes from: secret keys, derived one way.

The derivation is part of the platform's promise (a revealed key must re-deal every match
of a season, on any machine, in any later version), so it is pinned here against an
independent computation with the standard library, and by known answers.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import random
from collections import Counter

import pytest

from arena.rules.seeds import (
    KEY_BYTES,
    KeyedRandom,
    MatchSeed,
    derive_key,
    key_commitment,
    parse_key,
)

SEASON_KEY = bytes(range(KEY_BYTES))


def test_match_keys_are_hmac_sha256_of_the_label_under_the_season_key() -> None:
    seed = MatchSeed.keyed(SEASON_KEY, "m00007")
    expected = hmac.new(SEASON_KEY, b"match/m00007", hashlib.sha256).digest()
    assert seed.key == expected
    assert seed.commitment == hashlib.sha256(SEASON_KEY).hexdigest() == \
        key_commitment(SEASON_KEY)
    deck_key = hmac.new(expected, b"deck", hashlib.sha256).digest()
    ours, theirs = seed.deck_rng(), KeyedRandom(deck_key)
    assert [ours.getrandbits(32) for _ in range(50)] == [theirs.getrandbits(32)
                                                        for _ in range(50)]
    seat_key = hmac.new(expected, b"seat/1", hashlib.sha256).digest()
    assert seed.seat_seed(1) == int.from_bytes(seat_key[:8], "big") >> 1


def test_keyed_generator_is_blake2b_in_counter_mode() -> None:
    """Known answers: the first block is BLAKE2b-512 of the counter 0 under the key."""
    generator = KeyedRandom(b"k" * 32)
    block = hashlib.blake2b((0).to_bytes(8, "big"), key=b"k" * 32).digest()
    value = int.from_bytes(block, "big")
    assert generator.getrandbits(64) == value & (2**64 - 1)
    assert generator.getrandbits(448) == value >> 64
    second = int.from_bytes(hashlib.blake2b((1).to_bytes(8, "big"), key=b"k" * 32).digest(),
                            "big")
    assert generator.getrandbits(3) == second & 7


def test_same_key_same_stream_other_key_other_stream() -> None:
    first = [KeyedRandom(SEASON_KEY).random() for _ in range(3)]
    assert first == [KeyedRandom(SEASON_KEY).random() for _ in range(3)]
    one, two = KeyedRandom(SEASON_KEY), KeyedRandom(SEASON_KEY[::-1])
    assert [one.getrandbits(32) for _ in range(8)] != [two.getrandbits(32) for _ in range(8)]


def test_keyed_generator_drives_the_standard_methods() -> None:
    generator = KeyedRandom(SEASON_KEY)
    assert generator.getrandbits(0) == 0
    assert all(0.0 <= generator.random() < 1.0 for _ in range(1000))
    assert all(0 <= generator.randrange(108) < 108 for _ in range(1000))
    state = generator.getstate()
    ahead = [generator.getrandbits(17) for _ in range(20)]
    generator.setstate(state)
    assert [generator.getrandbits(17) for _ in range(20)] == ahead
    with pytest.raises(ValueError):
        generator.getrandbits(-1)


def test_keyed_shuffles_are_uniform() -> None:
    """Every order of four cards equally often: a chi-square test at 24 cells over 48,000
    shuffles (fixed key, so the figure is fixed; the bound is the 99.9% point, 49.7)."""
    generator = KeyedRandom(SEASON_KEY)
    counts: Counter[tuple[int, ...]] = Counter()
    for _ in range(48_000):
        cards = [0, 1, 2, 3]
        generator.shuffle(cards)
        counts[tuple(cards)] += 1
    assert set(counts) == set(itertools.permutations(range(4)))
    expected = 48_000 / 24
    chi_square = sum((count - expected) ** 2 / expected for count in counts.values())
    assert chi_square < 49.7, chi_square


def test_seat_seeds_differ_by_seat_and_match_and_say_nothing_of_the_deck() -> None:
    seeds = {MatchSeed.keyed(SEASON_KEY, f"m{m:05d}").seat_seed(seat)
             for m in range(50) for seat in range(10)}
    assert len(seeds) == 500 and all(0 <= s < 2**63 for s in seeds)
    match = MatchSeed.keyed(SEASON_KEY, "m00001")
    assert match.key is not None
    deck = random.Random(match.seat_seed(0))  # what a naive bot would try
    assert [deck.getrandbits(32) for _ in range(4)] != [match.deck_rng().getrandbits(32)
                                                       for _ in range(4)]


def test_a_duplicate_deal_is_the_same_for_every_rotation() -> None:
    one, two = MatchSeed.keyed(SEASON_KEY, "deal/3/1"), MatchSeed.keyed(SEASON_KEY, "deal/3/1")
    assert one == two
    assert MatchSeed.keyed(SEASON_KEY, "deal/3/2").key != one.key


def test_the_log_record_names_the_commitment_and_label_never_a_key() -> None:
    seed = MatchSeed.keyed(SEASON_KEY, "m00002")
    record = seed.to_record()
    assert record == {"key_commitment": key_commitment(SEASON_KEY), "key_label": "m00002"}
    text = repr(record)
    assert SEASON_KEY.hex() not in text and seed.key is not None and seed.key.hex() not in text
    assert MatchSeed.from_record(record, SEASON_KEY) == seed
    with pytest.raises(KeyError):
        MatchSeed.from_record(record, None)
    with pytest.raises(ValueError, match="does not match the commitment"):
        MatchSeed.from_record(record, SEASON_KEY[::-1])
    assert MatchSeed.from_record({"seed": 5}, None) == MatchSeed.public(5)
    assert MatchSeed.public(5).predictable and not seed.predictable


@pytest.mark.parametrize(("text", "message"), [
    ("zz" * 32, "hexadecimal"), ("ab" * 31, "64 hexadecimal digits, not 62"), ("", "not 0")])
def test_parse_key_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_key(text)
    assert parse_key(SEASON_KEY.hex() + "\n") == SEASON_KEY


def test_derive_key_joins_labels_with_slashes() -> None:
    assert derive_key(SEASON_KEY, "seat", 3) == hmac.new(SEASON_KEY, b"seat/3",
                                                         hashlib.sha256).digest()
