"""A match's pages from its log alone: the match page, the replay page and its data file.

Used by the season site (``render.py``), ``arena view LOG`` and ``arena play``. The replay's
data (every step of every round, each seat's view of each of its decisions, the faults,
the timings and the bots' stderr) is a separate file per match, ``replays/<id>.js``, that
the replay page loads with a ``<script>`` element: only the replay being looked at is
downloaded (big seasons stay light), and unlike ``fetch()`` of a ``.json`` file it also
works when the pages are opened from disk (browsers refuse ``fetch`` from ``file://``).
The file holds one JSON value, after ``window.arenaReplay = ``; ``replay_data`` builds it.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
from markupsafe import Markup, escape

from arena.formats import json_value
from arena.protocol.convert import ProtocolError, action_from_message, card_from_message
from arena.referee.log import (
    TIMING,
    decision_timing,
    decode_answer,
    decode_asked,
    log_problem,
    read_log,
)
from arena.rules import events as ev
from arena.rules.actions import action_name
from arena.rules.cards import CARD_NAMES
from arena.rules.narration import describe

STDERR_BYTES = 16 * 1024
"""The end of a bot's stderr kept in the replay data (a bot may write gigabytes)."""
DATA_PREFIX = "window.arenaReplay = "
SOURCES = {"bot": "the bot", "default": "the referee's default (after a fault)",
           "autopilot": "the autopilot (after disqualification)",
           "in-process": "a built-in policy"}


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


def _event_step(record: dict[str, Any], names: list[str]) -> dict[str, Any]:
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
            shown = steps_by_line[line] = _event_step(record, names)
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


def move_items(lines: list[dict[str, Any]]) -> Markup:
    """A round's plain move list, its ``<li>`` items (the replay page without JavaScript):
    written here rather than by a template loop, as it holds every step of the match
    (thousands of lines for a match to 500, a third of its replay page's time)."""
    items = []
    for line in lines:
        source = line["source"]
        bad = ' class="bad"' if line["fault"] else ""
        items.append(
            f'<li id="{escape(line["anchor"])}"{bad}>{escape(line["text"])}'
            + (f' <span class="badge bad">{escape(source)}</span>'
               if source in ("default", "autopilot") else "")
            + "</li>")
    return Markup("".join(items))


def data_script(data: dict[str, Any]) -> str:
    """The replay data file's text: one JSON value assigned to ``window.arenaReplay``."""
    # orjson: faster than json (benchmarks/report.py); the same JSON but for text beyond
    # ASCII, written as UTF-8 (as the file and the pages that load it are), not escaped,
    # and NaN or an infinity (never in a log the referee wrote) as null. What it refuses
    # (an integer past 64 bits, in a log made by hand) is written by json.
    try:
        text = orjson.dumps(data).decode()
    except orjson.JSONEncodeError:
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return DATA_PREFIX + text + ";\n"


def read_data_script(text: str) -> dict[str, Any]:
    """The JSON value of a replay data file (tests, tools)."""
    if not text.startswith(DATA_PREFIX):
        raise ValueError("not a replay data file")
    value: dict[str, Any] = json_value(text[len(DATA_PREFIX):].rstrip().rstrip(";"))
    return value


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


# -- the time-use chart ----------------------------------------------------------------

CHART_WIDTH, ROW_HEIGHT, CHART_LEFT, CHART_RIGHT = 640, 96, 56, 16
FLOOR_MS = 0.1
"""The time chart's log scale starts here (answers faster than this sit on the axis)."""


def time_chart(model: MatchModel) -> tuple[Markup, list[str]]:
    """Each seat's think time per decision (as lichess's move-times chart), one row a
    seat: a bar per decision on a log scale against the deadline (dashed), the decisions
    the referee made for the bot in red."""
    decisions = model.data["decisions"]
    deadline = float(model.data.get("deadline_ms") or 1000)
    per_seat: list[list[dict[str, Any]]] = [[] for _ in model.names]
    for view in decisions:
        if "l" in view:
            per_seat[view["s"]].append(view)
    if not any(per_seat):
        return Markup('<p class="muted">No timings in this log (bots in-process, or an '
                      'older log).</p>'), []
    top = max([deadline, FLOOR_MS * 10] + [float(v["l"]) for seat in per_seat for v in seat])
    height = ROW_HEIGHT * len(model.names) + 24
    parts = [f'<svg class="chart time-chart" viewBox="0 0 {CHART_WIDTH} {height}" role="img" '
             f'aria-labelledby="time-title time-desc" xmlns="http://www.w3.org/2000/svg">',
             '<title id="time-title">Think time per decision, by seat</title>']
    summary = []
    inner = CHART_WIDTH - CHART_LEFT - CHART_RIGHT
    for seat, views in enumerate(per_seat):
        base = 16 + ROW_HEIGHT * (seat + 1) - 20
        span = ROW_HEIGHT - 34

        def y(value: float, base: float = base, span: float = span) -> float:
            # A log scale from FLOOR_MS: a fast bot's 0.3 ms and a 300 ms deadline both show.
            value = min(max(value, FLOOR_MS), top)
            return base - span * math.log(value / FLOOR_MS) / math.log(top / FLOOR_MS)

        parts.append(f'<text x="{CHART_LEFT}" y="{base - span - 6:.1f}" class="tick">'
                     f'seat {seat} · {escape(model.names[seat])}</text>')
        parts.append(f'<line x1="{CHART_LEFT}" x2="{CHART_WIDTH - CHART_RIGHT}" '
                     f'y1="{base:.1f}" y2="{base:.1f}" class="grid"/>')
        at = y(deadline)
        parts.append(f'<line x1="{CHART_LEFT}" x2="{CHART_WIDTH - CHART_RIGHT}" y1="{at:.1f}" '
                     f'y2="{at:.1f}" class="deadline" stroke-dasharray="4 3"/>'
                     f'<text x="{CHART_LEFT - 4}" y="{at + 4:.1f}" class="tick" '
                     f'text-anchor="end">{deadline:.0f} ms</text>')
        if not views:
            summary.append(f"seat {seat} ({model.names[seat]}): no timed decision")
            continue
        width = max(inner / len(views), 0.5)
        for index, view in enumerate(views):
            x = CHART_LEFT + inner * index / len(views)
            bad = view["src"] != "bot"
            kind = "bar bad" if bad else "bar"
            parts.append(f'<rect x="{x:.2f}" y="{y(view["l"]):.2f}" width="{width:.2f}" '
                         f'height="{base - y(view["l"]):.2f}" class="{kind}">'
                         f'<title>decision {index + 1}: {view["l"]:.1f} ms'
                         f'{" (" + escape(view["src"]) + ")" if bad else ""}</title></rect>')
        latencies = [v["l"] for v in views]
        bank = views[-1].get("b")
        summary.append(
            f"seat {seat} ({model.names[seat]}): {len(views)} decisions, median "
            f"{statistics.median(latencies):.1f} ms, slowest {max(latencies):.1f} ms"
            + (f", time bank left {bank / 1000:.2f} s" if bank is not None else ""))
    parts.append(f'<desc id="time-desc">{escape("; ".join(summary))}</desc></svg>')
    return Markup("".join(parts)), summary


# -- writing the pages -------------------------------------------------------------------

Write = Callable[..., None]


def write_match_pages(write: Write, out: Path, model: MatchModel, match_id: str,
                      **context: Any) -> None:
    """The match page, the replay page and its data file (``write(path, template, depth,
    **context)`` renders a page)."""
    chart, summary = time_chart(model)
    write(f"matches/{match_id}.html", "match.html", 1, page="match", model=model,
          match_id=match_id, rounds=model.rounds, names=model.names, time_chart=chart,
          time_summary=summary, **context)
    write(f"replays/{match_id}.html", "replay.html", 1, page="replay", model=model,
          match_id=match_id, rounds=model.rounds, names=model.names, **context)
    target = out / "replays" / f"{match_id}.js"
    text = data_script(model.data)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


class LogError(Exception):
    """A log that cannot be shown: one line saying why."""


def read_whole_log(log: Path) -> list[dict[str, Any]]:
    """Every line of a match log; LogError (one line) when it is missing or damaged."""
    import zlib

    if not log.is_file():
        raise LogError(f"{log}: no such match log")
    try:
        records = list(read_log(log))
    except (OSError, EOFError, ValueError, UnicodeDecodeError, zlib.error) as error:
        raise LogError(f"{log}: a damaged match log ({type(error).__name__}: {error}); "
                       "restore it from a backup") from None
    if not records or not isinstance(records[0], dict) or records[0].get("type") != "header":
        raise LogError(f"{log}: not a match log (no header line)")
    problem = log_problem(records)
    if problem:
        raise LogError(f"{log}: a damaged match log ({problem}); restore it from a backup")
    if not any(r.get("type") == "result" for r in records):
        raise LogError(f"{log}: the log has no result line (the match was cut short)")
    return records


def damaged(log: Path, error: Exception) -> str:
    """The one line for a log whose lines do not hold what a match log's lines hold."""
    return (f"{log}: a damaged match log (a line lacks what it should hold: "
            f"{type(error).__name__}: {error}); restore it from a backup")


def seat_names(records: list[dict[str, Any]]) -> list[str]:
    players = int(records[0].get("players", 0))
    names = [f"seat {s}" for s in range(players)]
    for record in records:
        if record.get("type") == "seats":
            for seat in record["seats"]:
                if seat.get("name"):
                    names[seat["seat"]] = str(seat["name"])
            break
    return names


@dataclass(frozen=True)
class LocalSeason:
    """What the page templates need of a season, for pages made outside one."""

    name: str
    ratings: None = None


def render_logs(logs: Sequence[Path], out: Path, title: str = "local") -> list[Path]:
    """Render each log's match and replay pages into ``out`` (``arena view``, ``arena
    play``), with an index of them; the match pages' paths. LogError for a bad log."""
    from arena.report.render import ASSETS, _environment

    loaded = [(log, read_whole_log(log)) for log in logs]
    env = _environment()
    for sub in ("matches", "replays", "logs", "assets"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for asset in ASSETS:
        content = (resources.files("arena.report") / "static" / asset).read_bytes()
        target = out / "assets" / asset
        if not target.exists() or target.read_bytes() != content:
            target.write_bytes(content)
    season = LocalSeason(title)
    pages = []
    entries = []
    taken: set[str] = set()
    for log, records in loaded:
        header = records[0]
        # Named after the log's file (unique in its folder), numbered when logs from
        # several folders share a name.
        stem = log.name.removesuffix(".gz").removesuffix(".jsonl") or "match"
        match_id, copy = stem, 1
        while match_id in taken:
            copy += 1
            match_id = f"{stem}-{copy}"
        taken.add(match_id)
        try:
            names = seat_names(records)
            model = read_model(records, names, bot_stderr(log, names))
            result = next(r for r in records if r.get("type") == "result")
            standing = local_standing(records, model, names)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
            raise LogError(damaged(log, error)) from None
        context = {"season": season, "local": True, "facts": {"rules": header.get("rules", {})},
                   "log_problems": {}, "header": header,
                   "standing": standing, "summary": match_summary(records, model, result)}

        def write(path: str, template: str, depth: int, **page: Any) -> None:
            html = env.get_template(template).render(root="../" * depth, **page)
            target = out / path
            if not target.exists() or target.read_text(encoding="utf-8") != html:
                target.write_text(html, encoding="utf-8")

        write_match_pages(write, out, model, match_id, **context)
        if log.resolve() != (out / "logs" / f"{match_id}.jsonl.gz").resolve():
            shutil.copyfile(log, out / "logs" / f"{match_id}.jsonl.gz")
        pages.append(out / "matches" / f"{match_id}.html")
        entries.append({"match_id": match_id, "names": names, "standing": standing,
                        "faults": len(model.faults)})
    html = env.get_template("local_index.html").render(
        root="", season=season, local=True, facts={"rules": {}}, matches=entries)
    (out / "index.html").write_text(html, encoding="utf-8")
    return pages


def local_standing(records: list[dict[str, Any]], model: MatchModel, names: list[str]
                   ) -> list[dict[str, Any]]:
    """The final standing as the match page shows it, from the log's result line."""
    result = next(r for r in records if r.get("type") == "result")
    won = [0] * len(names)
    for round_ in model.rounds:
        if not round_["stalled"] and round_["winner"] >= 0:
            won[round_["winner"]] += 1
    strikes = [0] * len(names)
    for fault in model.faults:
        strikes[fault["seat"]] = max(strikes[fault["seat"]], int(fault.get("strikes", 0)))
    disqualified = set(result.get("disqualified", []))
    return [{"seat": seat, "name": names[seat], "href": None, "version": "",
             "place": result["places"][seat], "score": result["scores"][seat],
             "rounds_won": won[seat], "strikes": strikes[seat],
             "disqualified": seat in disqualified} for seat in range(len(names))]


def match_summary(records: list[dict[str, Any]], model: MatchModel,
                  result: dict[str, Any] | None) -> dict[str, Any]:
    header = records[0]
    return {"rounds": (result or {}).get("rounds", len(model.rounds)), "seconds": None,
            "decisions": (result or {}).get("decisions"),
            "chance": header.get("key_label") or (
                f"public seed {header['seed']}" if "seed" in header else ""),
            "round_limit_reached": bool((result or {}).get("round_limit_reached"))}


# -- a bot's think time over the season -------------------------------------------------

def seat_think_medians(model: MatchModel) -> list[float | None]:
    """Each seat's median think time in the match (ms), None for a seat with no timed
    decision (bots in-process, an older log, a bot disqualified at once)."""
    per_seat: list[list[float]] = [[] for _ in model.names]
    for view in model.data["decisions"]:
        if "l" in view:
            per_seat[view["s"]].append(float(view["l"]))
    return [statistics.median(times) if times else None for times in per_seat]


BOT_TIME_POINTS = 400
"""A bot's think-time chart shows at most this many matches (evenly picked)."""


def bot_time_chart(name: str, medians: Sequence[float | None], deadline_ms: float
                   ) -> Markup:
    """A bot's median think time per match over the season, in schedule order, on a log
    scale against the deadline (as lichess's move-times chart, a point a match)."""
    points = [(index, value) for index, value in enumerate(medians) if value is not None]
    if not points:
        return Markup('<p class="muted">No timings for this bot\'s matches (bots '
                      'in-process, or older logs).</p>')
    if len(points) > BOT_TIME_POINTS:
        step = len(points) / BOT_TIME_POINTS
        points = [points[int(i * step)] for i in range(BOT_TIME_POINTS)]
    top = max([deadline_ms, FLOOR_MS * 10] + [value for _, value in points])
    height, base, span = 180, 150, 126
    inner = CHART_WIDTH - CHART_LEFT - CHART_RIGHT
    last = max(len(medians) - 1, 1)

    def y(value: float) -> float:
        value = min(max(value, FLOOR_MS), top)
        return base - span * math.log(value / FLOOR_MS) / math.log(top / FLOOR_MS)

    parts = [f'<svg class="chart bot-time-chart" viewBox="0 0 {CHART_WIDTH} {height}" '
             'role="img" aria-labelledby="bot-time-title" xmlns="http://www.w3.org/2000/svg">',
             f'<title id="bot-time-title">{escape(name)}: median think time per match '
             f'({len(points)} matches)</title>',
             f'<line x1="{CHART_LEFT}" x2="{CHART_WIDTH - CHART_RIGHT}" y1="{base}" '
             f'y2="{base}" class="grid"/>',
             f'<line x1="{CHART_LEFT}" x2="{CHART_WIDTH - CHART_RIGHT}" '
             f'y1="{y(deadline_ms):.1f}" y2="{y(deadline_ms):.1f}" class="deadline"/>',
             f'<text x="{CHART_LEFT - 4}" y="{y(deadline_ms) + 4:.1f}" class="tick" '
             f'text-anchor="end">{deadline_ms:g} ms</text>',
             f'<text x="{CHART_LEFT - 4}" y="{base + 4}" class="tick" '
             f'text-anchor="end">{FLOOR_MS:g} ms</text>',
             f'<text x="{CHART_LEFT + inner / 2:.0f}" y="{height - 4}" class="tick" '
             'text-anchor="middle">matches, in schedule order</text>']
    for index, value in points:
        x = CHART_LEFT + inner * index / last
        parts.append(f'<circle class="point" cx="{x:.1f}" cy="{y(value):.1f}" r="2.5">'
                     f'<title>match {index + 1}: {value:.1f} ms</title></circle>')
    parts.append("</svg>")
    return Markup("".join(parts))

