"""A match's pages from its log alone: the match page, the replay page and its data file.

Used by the season site (``site.py``), ``arena view LOG`` and ``arena play``. The replay's
data is a separate file per match, ``replays/<id>.js``, that the replay page loads with a
``<script>`` element: only the replay being looked at is downloaded (big seasons stay
light), and unlike ``fetch()`` of a ``.json`` file it also works when the pages are opened
from disk (browsers refuse ``fetch`` from ``file://``). The file holds one JSON value,
after ``window.arenaReplay = ``; ``data_script`` writes it.
"""

from __future__ import annotations

import json
import shutil
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from arena.formats import json_value
from arena.referee.log import log_problem, read_log
from arena.report.charts import time_chart
from arena.report.matchmodel import MatchModel, bot_stderr, read_model, seat_view
from arena.report.templating import copy_assets, environment, write_text

DATA_PREFIX = "window.arenaReplay = "


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
    write_text(out / "replays" / f"{match_id}.js", data_script(model.data))


class LogError(Exception):
    """A log that cannot be shown: one line saying why."""


def read_whole_log(log: Path) -> list[dict[str, Any]]:
    """Every line of a match log; LogError (one line) when it is missing or damaged."""
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
    loaded = [(log, read_whole_log(log)) for log in logs]
    env = environment()
    for sub in ("matches", "replays", "logs", "assets"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    copy_assets(out)
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
            write_text(out / path, env.get_template(template).render(root="../" * depth,
                                                                      **page))

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


__all__ = ["DATA_PREFIX", "LocalSeason", "LogError", "MatchModel", "damaged", "data_script",
           "local_standing", "match_summary", "read_data_script", "read_model",
           "read_whole_log", "render_logs", "seat_names", "seat_view", "time_chart",
           "write_match_pages"]
