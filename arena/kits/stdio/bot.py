"""@BOT_NAME@: an UNO Arena bot over the stdio-json bridge, in plain Python (no libraries).

Every message from the referee arrives on stdin as one line of JSON (the protobuf JSON
mapping of PlayResponse: lowerCamelCase names, enums by name, 64-bit ids as strings, and
fields at their default value left out). For every line with a "decisionRequest" the bot
prints one line, {"requestId": "<its id>", "actionIndex": <index into legalActions>}, and
flushes stdout: an answer left in a buffer is never sent. Logs go to stderr.

Rewrite it in any language: read lines, write lines, flush.
"""

import json
import sys
from typing import Any

CHALLENGE_HAND_SIZE = 6
"""Challenge a Wild Draw Four only from a seat holding this many cards or more: a big hand
almost surely held the colour in play, so the play was a bluff."""


def index_of(legal: list[dict[str, Any]], wanted: dict[str, Any]) -> int:
    """The index of the first legal action with every field of ``wanted``, else 0."""
    for index, action in enumerate(legal):
        if all(action.get(key) == value for key, value in wanted.items()):
            return index
    return 0


def decide(request: dict[str, Any]) -> int:
    legal = request.get("legalActions", [])
    observation = request.get("observation", {})
    kind = request.get("kind")
    if kind == "DECISION_KIND_CHOOSE_COLOUR":
        hand = [card.get("colour") for card in observation.get("hand", [])]
        return max(range(len(legal)), key=lambda i: (hand.count(legal[i].get("colour")), -i))
    if kind == "DECISION_KIND_CHALLENGE_OR_ACCEPT":
        sizes = observation.get("handSizes", [])
        step = -1 if observation.get("direction") == "DIRECTION_COUNTER_CLOCKWISE" else 1
        offender = (observation.get("seat", 0) - step) % len(sizes)
        wanted = "ACTION_KIND_CHALLENGE" if sizes[offender] >= CHALLENGE_HAND_SIZE else \
            "ACTION_KIND_ACCEPT"
        return index_of(legal, {"kind": wanted})
    # Plays come first (one that leaves a single card calls UNO for you), then DRAW or KEEP.
    return 0


for line in sys.stdin:
    message = json.loads(line)
    if "matchStart" in message:
        start = message["matchStart"]
        print(f"match {start.get('matchId')}: seat {start.get('seat', 0)}", file=sys.stderr)
    elif "decisionRequest" in message:
        request = message["decisionRequest"]
        answer = {"requestId": request["requestId"], "actionIndex": decide(request)}
        print(json.dumps(answer), flush=True)
    elif "matchEnd" in message:
        print(f"match end: {message['matchEnd']}", file=sys.stderr)
        break
