"""The Python bot SDK: write ``decide(turn) -> action`` (or a policy class), call ``run``.

    from arena.bots.sdk import run

    def decide(turn):
        return turn.legal_actions[0]      # any of turn.legal_actions

    if __name__ == "__main__":
        run(decide, name="my-bot", version="1.0")

``run`` reads ARENA_ADDRESS and ARENA_TOKEN from the environment (the referee sets them),
connects, says hello, answers every decision request and returns the match end. A bot that
handles the house rules (docs/rules.md §21-§32) declares them: ``run(..., variants=VARIANTS)``
(from ``arena.rules.options``), and lists them in its bot.toml too; ``turn.variants`` says
which are on in the match.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import grpc

from arena.bots.policies import Policy, decision_rng
from arena.protocol import PROTOCOL_VERSION, pb, pb_grpc
from arena.protocol.aio import holding
from arena.protocol.convert import (
    action_from_message,
    action_message,
    observation_from_request,
    variants_to_wire,
)
from arena.rules.actions import Action, DecisionKind
from arena.rules.observation import Observation


@dataclass
class Turn:
    """One decision, with everything a bot needs to make it."""

    request: pb.DecisionRequest
    """The raw request (protobuf)."""
    observation: Observation
    """What your seat may see (docs/rules.md §19), as the rules engine's Observation."""
    legal_actions: list[Action]
    """The legal actions (ints, see ``arena.rules.actions``); return one of them."""
    events: list[pb.Event]
    """Events since your previous decision."""
    match: pb.MatchStart
    """Seat, players, rules, limits and your seed."""

    @functools.cached_property
    def rng(self) -> random.Random:
        """A generator seeded from your match seed and this decision's observation: use it
        for any randomness and each answer depends on what the request shows and your seed
        alone, so a match replays and ``arena refeed`` of any one decision gives the same
        answer (``arena.bots.policies.decision_rng``)."""
        return decision_rng(self.match.seed, self.request.observation.SerializeToString())

    @property
    def kind(self) -> DecisionKind:
        return DecisionKind(self.request.kind)

    @property
    def variants(self) -> tuple[str, ...]:
        """The variants in force (§21-§32), in rulebook order; empty in official play."""
        return self.observation.variants


Decide = Callable[[Turn], Action]


def run(
    decide: Decide | None = None,
    *,
    policy: Callable[[int], Policy] | None = None,
    name: str = "bot",
    version: str = "0",
    address: str | None = None,
    token: str | None = None,
    variants: Iterable[str] = (),
) -> pb.MatchEnd:
    """Play one match. Give ``decide`` (a function of a Turn) or ``policy`` (a class built
    with the match seed, with ``decide(observation, legal_actions)``); ``variants`` are the
    house rules the bot supports, declared in its hello."""
    if (decide is None) == (policy is None):
        raise TypeError("run() needs exactly one of decide= or policy=")
    address = address or os.environ.get("ARENA_ADDRESS")
    token = token or os.environ.get("ARENA_TOKEN")
    if not address or not token:
        raise SystemExit("ARENA_ADDRESS and ARENA_TOKEN must be set (the referee sets them)")
    hello = pb.PlayRequest(hello=pb.Hello(
        token=token, bot_name=name, bot_version=version, protocol_version=PROTOCOL_VERSION,
        variants=variants_to_wire(variants)))  # type: ignore[arg-type]
    return asyncio.run(holding(_play(address, hello, decide, policy)))


async def _play(address: str, hello: pb.PlayRequest, decide: Decide | None,
                policy: Callable[[int], Policy] | None) -> pb.MatchEnd:
    # grpc.aio rather than the blocking client: its stream needs no thread to feed the
    # requests, which measured ~20% less time per decision and less CPU per bot.
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]
        call = stub.Play()
        await call.write(hello)
        start = pb.MatchStart()
        seat_policy: Policy | None = None
        while True:
            response = await call.read()
            if response is grpc.aio.EOF:
                raise ConnectionError("the referee closed the stream before the match ended")
            kind = response.WhichOneof("message")
            if kind == "match_start":
                start = response.match_start
                if policy is not None:
                    seat_policy = policy(start.seed)
            elif kind == "decision_request":
                request = response.decision_request
                legal = [action_from_message(a) for a in request.legal_actions]
                observation = observation_from_request(request)
                if seat_policy is not None:
                    action = seat_policy.decide(observation, legal)
                else:
                    assert decide is not None
                    action = decide(Turn(request, observation, legal, list(response.events),
                                         start))
                await call.write(pb.PlayRequest(decision=_decision(request.request_id, action,
                                                                   legal)))
            elif kind == "match_end":
                end: pb.MatchEnd = response.match_end
                await call.done_writing()  # hang up: the referee can finish at once
                return end


def _decision(request_id: int, action: Action, legal: list[Action]) -> pb.Decision:
    try:
        return pb.Decision(request_id=request_id, action_index=legal.index(action))
    except ValueError:  # not listed as is (e.g. the UNO flag differs): send it explicitly
        return pb.Decision(request_id=request_id, action=action_message(action))
