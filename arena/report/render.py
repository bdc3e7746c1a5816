"""Render a season into a static site: standings, head-to-head, bots, matches, replays.

Pages use relative links only, so the folder works from disk, from ``arena serve``, or
from any static host. Rendering is deterministic (same store and logs, same bytes) and
incremental: a match's pages are rewritten only when its log or the templates changed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from arena.report.charts import rating_chart
from arena.report.data import Bot, MatchRow, SeasonData, load_season_data, read_match_log
from arena.rules import events as ev
from arena.rules.cards import CARD_COLOUR, CARD_NAMES
from arena.rules.narration import card_words, describe

COLOUR_NAMES = ("red", "yellow", "green", "blue", "wild")
STATE_FILE = ".render-state.json"


def card_html(card: int) -> Markup:
    """A card as a readable chip: colour, symbol, and a text alternative."""
    colour = COLOUR_NAMES[CARD_COLOUR[card]]
    name = CARD_NAMES[card]
    symbol = {"W": "W", "W+4": "+4"}.get(name, name[1:])
    symbol = {"S": "⊘", "R": "⇄"}.get(symbol, symbol)
    return Markup('<span class="card card-{}" title="{}" aria-label="{}">{}</span>').format(
        colour, card_words(card), card_words(card), symbol)


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("arena.report", "templates"),
                      autoescape=select_autoescape(), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["card"] = card_html
    env.filters["pct"] = lambda x: "" if x is None else f"{x:.0%}"
    env.filters["num"] = lambda x, d=2: "" if x is None else f"{x:.{d}f}"
    # UTC, so the same store renders the same bytes on any machine.
    env.filters["date"] = lambda t: "" if t is None else (
        datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M UTC"))
    return env


def _templates_version() -> str:
    digest = hashlib.sha256()
    for package in ("templates", "static"):
        folder = resources.files("arena.report") / package
        for item in sorted(folder.iterdir(), key=lambda p: p.name):
            if item.is_file():
                digest.update(item.name.encode() + item.read_bytes())
    here = Path(__file__).parent
    for module in ("render.py", "data.py", "charts.py"):
        digest.update((here / module).read_bytes())
    digest.update((here.parent / "rules" / "narration.py").read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class RenderSummary:
    pages: int
    match_pages_rendered: int
    match_pages_reused: int
    out: Path


def render_site(store_path: Path, out: Path) -> RenderSummary:
    """Render the season in ``store_path`` into ``out`` (created if needed)."""
    data = load_season_data(store_path)
    env = _environment()
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("bots", "matches", "replays", "logs", "assets"):
        (out / sub).mkdir(exist_ok=True)
    for asset in ("style.css", "replay.js"):
        source = resources.files("arena.report") / "static" / asset
        target = out / "assets" / asset
        content = source.read_bytes()
        if not target.exists() or target.read_bytes() != content:
            target.write_bytes(content)
    version = _templates_version()
    state_path = out / STATE_FILE
    previous: dict[str, str] = {}
    if state_path.exists():
        previous = json.loads(state_path.read_text())
    state: dict[str, str] = {"_templates": version}
    rendered = reused = pages = 0
    common = {"season": data, "facts": _facts(data)}

    def write(path: str, template: str, depth: int, **context: Any) -> None:
        nonlocal pages
        html = env.get_template(template).render(root="../" * depth, **common, **context)
        target = out / path
        if not target.exists() or target.read_text(encoding="utf-8") != html:
            target.write_text(html, encoding="utf-8")
        pages += 1

    chart_range = _chart_range(data)
    write("index.html", "standings.html", 0, page="standings")
    write("head-to-head.html", "head_to_head.html", 0, page="h2h")
    write("matches.html", "matches.html", 0, page="matches")
    for bot in data.bots.values():
        write(f"bots/{bot.slug}.html", "bot.html", 1, page="bot", bot=bot,
              chart=rating_chart(bot, chart_range), positions=_positions(bot),
              faults=_faults(data, bot))
    for match in data.matches:
        if match.status != "done" or not match.log_path or not Path(match.log_path).exists():
            continue
        log = Path(match.log_path)
        key = f"{version}:{log.stat().st_size}:{log.stat().st_mtime_ns}"
        state[match.match_id] = key
        if previous.get(match.match_id) == key and (
                out / "matches" / f"{match.match_id}.html").exists():
            reused += 1
            pages += 2
            continue
        records = read_match_log(log)
        names = [data.bot(e).name for e in match.seats]
        rounds = _rounds(records)
        write(f"matches/{match.match_id}.html", "match.html", 1, page="match", match=match,
              names=names, rounds=rounds, faults=[r for r in records if r["type"] == "fault"],
              header=records[0])
        write(f"replays/{match.match_id}.html", "replay.html", 1, page="replay", match=match,
              names=names, rounds=rounds,
              replay_json=Markup(_replay_json(records, names)))
        shutil.copyfile(log, out / "logs" / f"{match.match_id}.jsonl.gz")
        rendered += 1
    state_path.write_text(json.dumps(state, sort_keys=True, indent=0))
    return RenderSummary(pages, rendered, reused, out)


def _facts(data: SeasonData) -> dict[str, Any]:
    settings = data.settings
    finished = [m.finished_at for m in data.matches if m.finished_at]
    return {
        "rules": settings.get("rules", {}),
        "limits": settings.get("limits", {}),
        "sandbox": settings.get("sandbox", {}),
        "table_size": settings.get("table_size"),
        "matches_per_group": settings.get("matches_per_group"),
        "duplicate_deals": settings.get("duplicate_deals"),
        "key_commitment": data.key_commitment,
        "revealed_key": data.revealed_key,
        "first": min(finished) if finished else None,
        "last": max(finished) if finished else None,
        "done": data.counts.get("done", 0),
        "failed": data.counts.get("failed", 0),
        "scheduled": data.counts.get("scheduled", 0),
    }


def _chart_range(data: SeasonData) -> tuple[float, float]:
    low, high = 0.0, 50.0
    values = [mu + k * sigma for bot in data.bots.values() if bot.standing
              for _, mu, sigma in bot.standing.history for k in (-1, 1)]
    if values:
        low, high = min(values), max(values)
    return (low - 1, high + 1)


def _positions(bot: Bot) -> list[dict[str, Any]]:
    rows = []
    for seat in sorted(bot.seat_positions):
        results = bot.seat_positions[seat]
        wins = sum(1 for r in results if r.place == 1)
        rows.append({"seat": seat, "matches": len(results), "wins": wins,
                     "rate": wins / len(results),
                     "place": sum(r.place for r in results) / len(results),
                     "score": sum(r.score for r in results) / len(results)})
    return rows


def _faults(data: SeasonData, bot: Bot) -> list[dict[str, Any]]:
    return [{"match_id": r.match_id, "kind": f.get("kind"), "reason": f.get("reason")}
            for r in bot.results for f in r.faults]


def _rounds(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rounds = []
    dealer = -1
    for record in records:
        if record["type"] != "event":
            continue
        if record["event"] == "RoundStarted":
            dealer = record["dealer"]
        elif record["event"] == "RoundEnded":
            rounds.append({"number": record["round"], "dealer": dealer,
                           "winner": record["winner"], "points": record["points"],
                           "scores": record["scores"], "stalled": record["stalled"],
                           "left": [len(h) for h in record["hands"]]})
    return rounds


def _replay_json(records: list[dict[str, Any]], names: list[str]) -> str:
    """The replay's data: each round's events, compact, with text and decision latency."""
    rounds: list[dict[str, Any]] = []
    prelude: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    latency: float | None = None
    for record in records:
        kind = record["type"]
        if kind == "decision":
            latency = record.get("latency_ms") if record.get("source") == "bot" else None
            continue
        if kind == "fault":
            step = {"e": "Fault", "s": record["seat"],
                    "t": f"{names[record['seat']]}: {record['reason']}"}
            (current["steps"] if current else prelude).append(step)
            continue
        if kind != "event":
            continue
        fields = {k: v for k, v in record.items() if k != "type"}
        event = ev.from_record(fields)
        step = {"e": record["event"], "t": describe(event, names)}
        for key, short in (("seat", "s"), ("card", "c"), ("cards", "cs"), ("colour", "k"),
                           ("direction", "d"), ("dealer", "s"), ("challenger", "s"),
                           ("scores", "sc")):
            if key in fields:
                step[short] = fields[key]
        if latency is not None and "s" in step:
            step["l"] = latency
            latency = None
        if record["event"] == "RoundStarted":
            current = {"number": record["round"], "dealer": record["dealer"],
                       "steps": [*prelude, step]}
            prelude = []
            rounds.append(current)
        elif current is not None:
            current["steps"].append(step)
        else:
            prelude.append(step)
    if prelude and rounds:
        rounds[-1]["steps"].extend(prelude)  # the match result after the last round
    text = json.dumps({"players": names, "rounds": rounds}, separators=(",", ":"))
    return text.replace("</", "<\\/")  # safe inside a <script> element


def render_match_ids(out: Path) -> list[str]:
    return sorted(p.stem for p in (out / "matches").glob("*.html"))


__all__ = ["MatchRow", "RenderSummary", "card_html", "render_site"]
