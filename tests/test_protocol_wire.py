"""The referee's hand-assembled wire bytes (arena.protocol.wire) are exactly protobuf's.

The referee sends, and logs as the seat's view, a decision request joined from cached
fragments, and events encoded once for every seat that sees them. Protobuf is the
reference: over whole matches (official play and random sets of variants, 2 to 10 seats),
every request and every event must serialize to the same bytes as the message built field
by field, and a response joined from them must parse back to the same message.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.bots.policies import RandomPolicy
from arena.protocol import pb
from arena.protocol.convert import CARD_MESSAGES, decision_request, event_message
from arena.protocol.wire import (
    decision_request_bytes,
    event_entry,
    fault_entry,
    request_entry,
    varint,
)
from arena.rules import Match, RuleOptions
from arena.rules import events as ev
from arena.rules.options import VARIANTS

INT64 = st.integers(min_value=-(2**31), max_value=2**63 - 1)


@given(INT64)
def test_varints_are_protobufs(value: int) -> None:
    # int64 request ids, uint32 sizes, and int32 scores or partners (-1: no partner);
    # the field's one-byte tag is cut off protobuf's bytes (zero is not sent at all).
    if value < 0:
        expected = pb.Observation(partner=value).SerializeToString()[1:]
    elif value > 0:
        expected = pb.DecisionRequest(request_id=value).SerializeToString()[1:]
    else:
        expected = b"\x00"
    assert varint(value) == expected


def _play(seed: int, players: int, options: RuleOptions) -> None:
    """Every decision and event of one match, checked against protobuf's own bytes."""
    match = Match(players, random.Random(seed), options)
    policy = RandomPolicy(seed)
    rng = random.Random(seed)
    sent = [0] * players
    while not match.is_over:
        seat = match.current_seat
        observation, legal = match.observation(seat), match.legal_actions()
        # Deadlines and banks across the varint sizes (0 is absent on the wire).
        request_id, deadline, bank = rng.choice(
            [(1, 1000, 10000), (2**40, 0, 0), (127, 128, 2**32 - 1)])
        request = decision_request(request_id, observation, legal, deadline, bank)
        wire = decision_request_bytes(request_id, observation, legal, deadline, bank)
        assert wire == request.SerializeToString()
        seen = [ev.seen_by(event, seat) for event in match.events[sent[seat]:]]
        sent[seat] = len(match.events)
        joined = b"".join(event_entry(event) for event in seen) + request_entry(wire)
        message = pb.PlayResponse(events=[event_message(event) for event in seen],
                                  decision_request=request)
        assert joined == message.SerializeToString()
        assert pb.PlayResponse.FromString(joined) == message
        match.apply(policy.decide(observation, legal))


@pytest.mark.parametrize("players", range(2, 11))
def test_official_matches(players: int) -> None:
    _play(1000 * players, players, RuleOptions(target_score=100))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6),
       variants=st.sets(st.sampled_from(VARIANTS)))
def test_matches_under_any_variants(seed: int, players: int, variants: set[str]) -> None:
    chosen: dict[str, object] = dict.fromkeys(variants, True)
    if "stack_two_on_four" in variants:
        chosen["stacking"] = True  # it refines stacking (§21)
    if "lazy_scoring" in variants:
        chosen["rounds"] = 2
    options = RuleOptions(target_score=100, round_limit=3, **chosen)  # type: ignore[arg-type]
    _play(seed, players, options)


def test_a_fault_entry_is_an_event_of_the_response() -> None:
    fault = pb.Fault(seat=1, kind=2, reason="late", strikes=1)
    end = pb.PlayResponse(match_end=pb.MatchEnd(scores=[500, 0], places=[1, 2])).SerializeToString()
    joined = fault_entry(fault) + end
    assert joined == pb.PlayResponse(events=[pb.Event(fault=fault)], match_end=pb.MatchEnd(
        scores=[500, 0], places=[1, 2])).SerializeToString()


@pytest.mark.parametrize(("first", "second"), [
    (ev.Skipped(1), ev.UnoCaught(1)),
    (ev.FirstCardTurned(5), ev.FirstCardReturned(5)),
    (ev.ColourChosen(0, 2), ev.ColourAdvanced(0, 2)),
])
def test_equal_tuples_of_two_event_kinds_are_encoded_apart(first: ev.Event,
                                                           second: ev.Event) -> None:
    # Events are NamedTuples: two kinds with the same values compare equal, and the entry
    # cache must still tell them apart.
    assert first == second
    for event in (first, second, first):
        assert event_entry(event) == pb.PlayResponse(
            events=[event_message(event)]).SerializeToString()
    assert event_entry(first) != event_entry(second)


@settings(max_examples=200, deadline=None)
@given(seat=st.integers(0, 9), cards=st.lists(st.integers(0, len(CARD_MESSAGES) - 1),
                                             min_size=1, max_size=120),
       amount=st.integers(0, 200), reason=st.sampled_from(list(ev.DrawReason)),
       dealt=st.booleans())
def test_own_draws_and_deals_are_joined_as_protobuf_writes_them(
        seat: int, cards: list[int], amount: int, reason: ev.DrawReason, dealt: bool) -> None:
    # A seat's own draw or deal is joined from fragments (it is mostly new each time): the
    # bytes must still be protobuf's, whatever the seat, cards, amount and reason.
    event: ev.Event = (ev.Dealt(seat, tuple(cards), amount) if dealt
                       else ev.Drew(seat, tuple(cards), amount, reason))
    assert event_entry(event) == pb.PlayResponse(
        events=[event_message(event)]).SerializeToString()
