"""What the person's page shows, built from what the seat's protocol client hears (and only
that: the seat's own view, docs/rules.md §19), and the one choice it waits for."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from arena.rules import events as ev
from arena.rules.actions import (
    ACCEPT,
    CHALLENGE,
    CHOOSE_COLOUR,
    CHOOSE_SEAT,
    DRAW,
    GIVE_CARD,
    KEEP,
    PASS,
    UNO_CALL,
    Action,
    DecisionKind,
    chosen_colour,
    chosen_seat,
    given_card,
    is_play,
    played_card,
)
from arena.rules.cards import CARD_COLOUR, NO_COLOUR, card_name
from arena.rules.narration import card_words, describe
from arena.rules.observation import Observation

COLOUR_NAMES = ("red", "yellow", "green", "blue", "wild")
"""An engine colour's name (4: none, a wild), the page's CSS class of a card."""
PROMPTS = {
    DecisionKind.PLAY_OR_DRAW: "Your turn: play a card or draw one.",
    DecisionKind.PLAY_DRAWN_OR_KEEP: "You drew a card you can play: play it or keep it.",
    DecisionKind.CHOOSE_COLOUR: "Name the colour in play.",
    DecisionKind.CHALLENGE_OR_ACCEPT: "A Wild Draw Four is on you: challenge it (if it was "
                                      "a bluff, its player draws 4; if not, you draw 6) or "
                                      "accept it and draw 4.",
    DecisionKind.CHOOSE_SEAT: "Choose a seat.",
    DecisionKind.GIVE_CARD: "Choose the card to give.",
    DecisionKind.JUMP_IN_OR_PASS: "You hold the card just played: jump in with it, or pass.",
    DecisionKind.STACK_OR_ACCEPT: "A draw penalty is on you: stack on it or accept it.",
}
"""What the page asks, for each kind of decision."""
KEPT_LINES = 5000
"""Lines of the match's story kept for the page (a match to 500 tells 2,000 to 8,000)."""


def card_view(card: int) -> dict[str, Any]:
    """A card as the page draws it: its words (the button's text) and its colour's class."""
    return {"card": card, "words": card_words(card), "short": card_name(card),
            "colour": COLOUR_NAMES[CARD_COLOUR[card]]}


class FaultHeard(NamedTuple):
    """A fault the seat was told of: whose, and in what words."""

    seat: int
    words: str


@dataclass
class Pending:
    """The decision the seat is asked: its request, its legal actions, the person's answer."""

    request_id: int
    observation: Observation
    legal: list[Action]
    answer: asyncio.Future[Action]


@dataclass
class Table:
    """The person's seat as the page shows it. ``version`` counts its changes; a page's
    event stream sends the state at each (``changed`` wakes it)."""

    seat: int
    names: list[str] = field(default_factory=list)
    observation: Observation | None = None
    pending: Pending | None = None
    lines: list[dict[str, Any]] = field(default_factory=list)
    """The match's story so far, a line per event or fault, as the seat heard it."""
    dropped: int = 0
    """Lines of the story dropped from the front (past ``KEPT_LINES``)."""
    result: dict[str, Any] | None = None
    replay: str | None = None
    """The address of the match's replay page, once written."""
    problem: str | None = None
    status: str = "Waiting for the match to start."
    version: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    left: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the person leaves the table (the page's button)."""

    def bump(self, status: str | None = None) -> None:
        if status is not None:
            self.status = status
        self.version += 1
        self.changed.set()
        self.changed = asyncio.Event()

    def name(self, seat: int) -> str:
        return self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"

    # -- what the protocol client hears ---------------------------------------------------

    def start(self, names: list[str]) -> None:
        self.names = names
        self.bump("The match has started.")

    def hear(self, events: list[ev.Event | FaultHeard]) -> None:
        """Engine events (as the seat sees them) and faults, in the order told."""
        if not events:
            return
        for item in events:
            if isinstance(item, FaultHeard):
                self._line(f"{self.name(item.seat)}: {item.words}", item.seat, "fault")
            else:
                self._line(describe(item, self.names), _seat_of(item), _kind_of(item))
                self._follow(item)
        self.bump()

    def _follow(self, event: ev.Event) -> None:
        """What the table shows between requests (each brings the seat's whole view): the
        card on top and the colour as they are played, the hands as a round's end counts
        them."""
        seen = self.observation
        if seen is None:
            return
        if isinstance(event, ev.Played):
            colour = CARD_COLOUR[event.card]
            self.observation = seen._replace(top_card=event.card,
                                             colour=seen.colour if colour == NO_COLOUR else colour)
        elif isinstance(event, ev.ColourChosen | ev.ColourAdvanced):
            self.observation = seen._replace(colour=event.colour)
        elif isinstance(event, ev.RoundEnded):
            self.observation = seen._replace(
                hand=tuple(sorted(event.hands[self.seat])),
                hand_sizes=tuple(len(hand) for hand in event.hands),
                scores=tuple(event.scores))

    def _line(self, text: str, seat: int, kind: str) -> None:
        self.lines.append({"text": text, "mine": seat == self.seat, "kind": kind})
        if len(self.lines) > KEPT_LINES:
            del self.lines[0]
            self.dropped += 1

    async def ask(self, request_id: int, observation: Observation, legal: list[Action]
                  ) -> Action:
        """The person's answer to a decision request (as long as they take)."""
        answer: asyncio.Future[Action] = asyncio.get_running_loop().create_future()
        self.observation = observation
        self.pending = Pending(request_id, observation, legal, answer)
        assert observation.decision is not None
        self.bump(PROMPTS[observation.decision])
        try:
            return await answer
        finally:
            self.pending = None

    def choose(self, request_id: int, action: Action) -> str | None:
        """The person's choice for ``request_id``; why it is refused, or None."""
        pending = self.pending
        if pending is None or pending.request_id != request_id or pending.answer.done():
            return "that decision is not the one asked: the page shows the one that is"
        legal = pending.legal
        if action not in legal and not (is_play(action) and (action ^ UNO_CALL) in legal):
            return "that is not one of the moves offered"
        pending.answer.set_result(action)
        self.bump("Waiting for the other seats.")
        return None

    def end(self, scores: list[int], places: list[int], rounds: int) -> None:
        standing = sorted(range(len(scores)), key=lambda s: (places[s], s))
        self.result = {"rounds": rounds, "you_won": places[self.seat] == 1,
                       "standing": [{"seat": s, "name": self.name(s), "place": places[s],
                                     "score": scores[s], "mine": s == self.seat}
                                    for s in standing]}
        self.bump("The match is over; its pages are being written.")

    def lose(self, reason: str) -> None:
        self.problem = reason
        self.bump(f"The seat lost its connection to the referee: {reason}")

    def written(self, replay: str | None, note: str) -> None:
        self.replay = replay
        self.bump(note)

    # -- what the page is sent ------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Everything the page draws but the story (sent apart, a line at a time)."""
        seen = self.pending.observation if self.pending else self.observation
        state: dict[str, Any] = {"version": self.version, "seat": self.seat,
                                 "names": self.names, "status": self.status,
                                 "result": self.result, "replay": self.replay,
                                 "problem": self.problem, "request": None}
        if seen is not None:
            state["table"] = {
                "hand": [card_view(card) for card in seen.hand],
                "top": card_view(seen.top_card), "colour": COLOUR_NAMES[seen.colour],
                "direction": "clockwise" if seen.direction > 0 else "counter-clockwise",
                "seats": [{"seat": s, "name": self.name(s), "cards": seen.hand_sizes[s],
                           "score": seen.scores[s], "mine": s == self.seat}
                          for s in range(len(seen.hand_sizes))],
                "draw_pile": seen.draw_pile_size, "round": seen.round_number,
                "pending_penalty": seen.pending_penalty}
        if self.pending is not None:
            state["request"] = self.request_view(self.pending)
        return state

    def request_view(self, pending: Pending) -> dict[str, Any]:
        """The decision asked: the prompt, the cards that may be played (each with and
        without the UNO call), and every other move as a labelled button."""
        plays: dict[int, dict[str, Any]] = {}
        moves = []
        for action in pending.legal:
            if is_play(action):
                card = played_card(action)
                plays[card] = {"card": card, "action": card, "uno": card | UNO_CALL,
                               "calls_uno": bool(action & UNO_CALL)}
            else:
                moves.append({"action": action, "label": self.move_label(action, pending),
                              "kind": _move_kind(action)})
        kind = pending.observation.decision
        return {"id": pending.request_id, "kind": kind.name.lower() if kind else "",
                "prompt": PROMPTS[kind] if kind else "", "plays": list(plays.values()),
                "uno": any(play["calls_uno"] for play in plays.values()), "moves": moves}

    def move_label(self, action: Action, pending: Pending) -> str:
        kind = pending.observation.decision
        if action == DRAW:
            return "Draw a card"
        if action == KEEP:
            return "Keep the drawn card"
        if action == CHALLENGE:
            return "Challenge the Wild Draw Four"
        if action == ACCEPT:
            penalty = pending.observation.pending_penalty
            return (f"Accept: draw {penalty}" if kind is DecisionKind.STACK_OR_ACCEPT and
                    penalty else "Accept the Wild Draw Four: draw 4")
        if action == PASS:
            return "Pass"
        code = _move_kind(action)
        if code == "give":
            return f"Give {card_words(given_card(action))}"
        if code == "seat":
            return f"Seat {chosen_seat(action)}: {self.name(chosen_seat(action))}"
        return f"Name {COLOUR_NAMES[chosen_colour(action)]}"


def _move_kind(action: Action) -> str:
    if action >= GIVE_CARD:
        return "give"
    if action >= CHOOSE_SEAT:
        return "seat"
    if CHOOSE_COLOUR <= action < PASS:
        return "colour"
    return {DRAW: "draw", KEEP: "keep", CHALLENGE: "challenge", ACCEPT: "accept",
            PASS: "pass"}[action]


def _seat_of(event: ev.Event) -> int:
    seat = getattr(event, "seat", -1)
    return seat if isinstance(seat, int) else -1


def _kind_of(event: ev.Event) -> str:
    if isinstance(event, ev.RoundEnded | ev.MatchEnded | ev.RoundStarted):
        return "round"
    return "event"
