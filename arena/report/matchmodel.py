"""What a match's pages show, read from its log alone: each round's summary, the replay's
data (every step of every round, each seat's view of each of its decisions, the faults,
the timings and the bots' stderr) and the plain move list."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.protocol.convert import ProtocolError, action_from_message, card_from_message
from arena.referee.log import TIMING, decision_timing, decode_answer, decode_asked
from arena.rules import events as ev
from arena.rules.actions import action_name
from arena.rules.cards import CARD_NAMES
from arena.rules.narration import describe

STDERR_BYTES = 16 * 1024
"""The end of a bot's stderr kept in the replay data (a bot may write gigabytes)."""


@dataclass(frozen=True)
class Mark:
    """A step worth finding on the timeline: a fault or a disqualification."""

    round: int
    step: int
    """1-based, within its round (``#round-R-step-S``)."""
    seat: int
    kind: str
    """``fault`` or ``disqualified``."""
    text: str

    @property
    def anchor(self) -> str:
        return f"round-{self.round}-step-{self.step}"


@dataclass
class MatchModel:
    """What the match and replay pages show, read from one log."""

    names: list[str]
    rounds: list[dict[str, Any]]
    """Each round's summary (number, dealer, winner, points, scores, cards left)."""
    data: dict[str, Any]
    """The replay's data (``replays/<id>.js``)."""
    marks: list[Mark] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    """The log's fault lines, each with ``anchor`` (its step in the replay)."""
    moves: list[dict[str, Any]] = field(default_factory=list)
    """The plain move list (no JavaScript): per round, its steps' text and who moved."""


def _answer_text(answer: Any, legal: list[str]) -> str:
    if answer is None:
        return "no answer"
    choice = answer.WhichOneof("choice")
    if choice == "action_index":
        index = answer.action_index
        if index < len(legal):
            return f"option {index}: {legal[index]}"
        return f"option {index} (there are {len(legal)} options: out of range)"
    if choice == "action":
        try:
            return action_name(action_from_message(answer.action))
        except ProtocolError as error:
            return f"an unreadable action ({error})"
    return "a decision with no action"


def seat_view(record: dict[str, Any], timing: dict[str, Any] | None) -> dict[str, Any]:
    """One decision as its seat saw it, compact, from a decision line (and its timing)."""
    view: dict[str, Any] = {"s": record["seat"], "src": record.get("source", "bot"),
                            "a": record.get("name") or action_name(record["action"]),
                            "r": record.get("request")}
    latency, bank = decision_timing(timing if timing is not None else record)
    if latency is not None and view["src"] != "in-process":
        view["l"] = latency
    if bank is not None:
        view["b"] = bank
    try:
        asked, answer = decode_asked(record), decode_answer(record)
    except ValueError as error:
        view["err"] = str(error)
        return view
    if asked is None:
        return view
    legal = []
    for message in asked.legal_actions:
        try:
            legal.append(action_name(action_from_message(message)))
        except ProtocolError:
            legal.append("?")
    observation = asked.observation
    view.update({
        "k": _kind_words(asked),
        "h": [_card_name(card) for card in observation.hand],
        "top": _card_name(observation.top_card),
        "sizes": list(observation.hand_sizes),
        "lg": legal,
        "ans": _answer_text(answer, legal),
        "dl": asked.deadline_ms, "bk": asked.time_bank_ms,
    })
    return view


def _kind_words(asked: Any) -> str:
    """``play or draw`` for DECISION_KIND_PLAY_OR_DRAW (a number for an unknown kind)."""
    kind = asked.DESCRIPTOR.fields_by_name["kind"].enum_type.values_by_number.get(asked.kind)
    if kind is None:
        return f"decision kind {asked.kind}"
    return str(kind.name).removeprefix("DECISION_KIND_").lower().replace("_", " ")


def _card_name(card: Any) -> str:
    try:
        return CARD_NAMES[card_from_message(card)]
    except (ProtocolError, IndexError, KeyError, ValueError):
        return "?"


def _hidden_texts(event: ev.Event, text: str, names: list[str]) -> list[str] | None:
    """The event's line as each seat saw it, when some seat saw less (cards hidden)."""
    texts = [text if (seen := ev.seen_by(event, seat)) is event else describe(seen, names)
             for seat in range(len(names))]
    return None if all(t == text for t in texts) else texts


def event_step(record: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """An event line's step in the replay: its kind, its text, the fields the replay
    draws and, when some seat saw less, the text each seat saw."""
    fields = {k: v for k, v in record.items() if k != "type"}
    event = ev.from_record(fields)
    text = describe(event, names)
    step = {"e": record["event"], "t": text}
    for key, short in (("seat", "s"), ("card", "c"), ("cards", "cs"), ("colour", "k"),
                       ("direction", "d"), ("dealer", "s"), ("challenger", "s"),
                       ("scores", "sc"), ("other", "o"), ("other_cards", "ocs")):
        if key in fields:
            step[short] = fields[key]
    if record["event"] == "HandsPassed":  # §23: every hand moves
        step["hs"] = fields["hands"]
    hidden = _hidden_texts(event, text, names)
    if hidden is not None:
        step["tv"] = hidden
    return step


def read_model(records: list[dict[str, Any]], names: list[str],
               stderr: Sequence[str | None] = ()) -> MatchModel:
    """Everything the match's pages show, in one pass over its log's lines."""
    rounds: list[dict[str, Any]] = []
    summaries: list[dict[str, Any]] = []
    decisions: list[dict[str, Any]] = []
    marks: list[Mark] = []
    faults: list[dict[str, Any]] = []
    prelude: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    pending_decision: int | None = None
    """The decision whose events come next (it is logged before them)."""
    fault_steps: list[dict[str, Any]] = []
    """Fault steps waiting for the decision they were made in."""
    dealer = -1
    timings = {(r["seat"], r.get("request")): r for r in records if r["type"] == TIMING}
    steps_by_line: dict[str, dict[str, Any]] = {}

    def add(step: dict[str, Any]) -> None:
        (current["steps"] if current is not None else prelude).append(step)

    for record in records:
        kind = record["type"]
        if kind == "decision":
            if record.get("source") == "in-process" and "asked" not in record:
                timing = None
            else:
                timing = timings.get((record["seat"], record.get("request")))
            decisions.append(seat_view(record, timing))
            pending_decision = len(decisions) - 1
            for step in fault_steps:  # the faults made while this decision was asked
                if step["s"] == record["seat"]:
                    step["dv"] = pending_decision
            fault_steps = []
            continue
        if kind == "fault":
            step = {"e": "Fault", "s": record["seat"],
                    "t": f"{names[record['seat']]}: {record['reason']}"}
            if record.get("disqualified"):
                step["dq"] = 1
            add(step)
            fault_steps.append(step)
            faults.append({**record, "step": step})
            continue
        if kind != "event":
            continue
        # A match repeats most of its events (a card played, a card drawn seen from
        # outside): each line is read, narrated and hidden from the other seats once.
        line = repr(record)
        shown = steps_by_line.get(line)
        if shown is None:
            shown = steps_by_line[line] = event_step(record, names)
        step = dict(shown)
        if pending_decision is not None:
            step["dv"] = pending_decision
            latency = decisions[pending_decision].get("l")
            if latency is not None and decisions[pending_decision]["src"] == "bot":
                step["l"] = latency
            pending_decision = None
        if record["event"] == "RoundStarted":
            dealer = record["dealer"]
            current = {"number": record["round"], "dealer": record["dealer"],
                       "steps": [*prelude, step]}
            prelude = []
            rounds.append(current)
        elif current is not None:
            current["steps"].append(step)
        else:
            prelude.append(step)
        if record["event"] == "RoundEnded":
            summaries.append({"number": record["round"], "dealer": dealer,
                              "winner": record["winner"], "points": record["points"],
                              "scores": record["scores"], "stalled": record["stalled"],
                              "left": [len(h) for h in record["hands"]]})
    if prelude and rounds:
        rounds[-1]["steps"].extend(prelude)  # the match result after the last round
    # Where each fault sits: its round and 1-based step (the replay's #round-R-step-S).
    for round_ in rounds:
        for number, step in enumerate(round_["steps"], start=1):
            if step["e"] == "Fault":
                step["_at"] = (round_["number"], number)
    moves = []
    for round_ in rounds:
        lines = []
        for number, step in enumerate(round_["steps"], start=1):
            view = decisions[step["dv"]] if "dv" in step and step["e"] != "Fault" else None
            lines.append({"anchor": f"round-{round_['number']}-step-{number}",
                          "text": step["t"], "fault": step["e"] == "Fault",
                          "source": view["src"] if view else None})
        moves.append({"number": round_["number"], "lines": lines})
    for fault in faults:
        step = fault.pop("step")
        at = step.pop("_at", None)
        fault["anchor"] = f"round-{at[0]}-step-{at[1]}" if at else None
        if at:
            marks.append(Mark(at[0], at[1], fault["seat"],
                              "disqualified" if fault.get("disqualified") else "fault",
                              step["t"]))
    data: dict[str, Any] = {"players": names, "rounds": rounds, "decisions": decisions,
                            "marks": [{"a": m.anchor, "k": m.kind, "s": m.seat, "t": m.text}
                                      for m in marks],
                            "stderr": list(stderr) or [None] * len(names)}
    header = records[0] if records else {}
    if header.get("rules", {}).get("draw_ten"):
        data["deck"] = 112  # §28
    if header.get("limits"):
        data["deadline_ms"] = round(float(header["limits"]["decision_deadline"]) * 1000)
    return MatchModel(names, summaries, data, marks, faults, moves)


def seat_think_medians(model: MatchModel) -> list[float | None]:
    """Each seat's median think time in the match (ms), None for a seat with no timed
    decision (bots in-process, an older log, a bot disqualified at once)."""
    per_seat: list[list[float]] = [[] for _ in model.names]
    for view in model.data["decisions"]:
        if "l" in view:
            per_seat[view["s"]].append(float(view["l"]))
    return [statistics.median(times) if times else None for times in per_seat]


def bot_stderr(log: Path, names: Sequence[str]) -> list[str | None]:
    """The end of each seat's stderr, where the match's bot output was kept: a season and
    ``arena play`` keep it beside the log, in ``<match>/seat<N>-<name>.stderr.log``."""
    folder = log.parent / log.name.removesuffix(".jsonl.gz")
    out: list[str | None] = []
    for seat in range(len(names)):
        found = sorted(folder.glob(f"seat{seat}-*.stderr.log")) if folder.is_dir() else []
        if not found or not found[0].is_file() or found[0].is_symlink():
            out.append(None)
            continue
        with found[0].open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - STDERR_BYTES))
            tail = handle.read(STDERR_BYTES)
        text = tail.decode("utf-8", "replace")
        if size > STDERR_BYTES:
            text = f"[the first {size - STDERR_BYTES} bytes are left out]\n" + text
        out.append(text)
    return out
