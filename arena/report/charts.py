"""Inline SVG charts drawn server side (no CDN, no script)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup, escape

from arena.rating.trueskill_ratings import MU, SIGMA
from arena.report.data import Bot
from arena.report.matchmodel import MatchModel

WIDTH, HEIGHT, PAD, LEFT = 640, 240, 36, 56
"""LEFT: room for the y axis' ticks and its title."""
SERIES = ("#0b57d0", "#b42318", "#1b7f3b", "#8a4b08", "#6f2dbd", "#0f766e", "#be185d",
          "#4d5b6a")
"""Line colours with 4.5:1 contrast or more on white; lines also differ by dash pattern
and carry their bot's name at their end (colour is never the only cue)."""
DASHES = ("", "6 3", "2 3", "8 3 2 3")


def _axes(low: float, high: float, y: object, x_title: str, y_title: str) -> str:
    span = high - low
    ticks = []
    for step in range(5):
        value = low + span * step / 4
        at = y(value)  # type: ignore[operator]
        ticks.append(f'<line x1="{LEFT}" x2="{WIDTH - PAD}" y1="{at:.1f}" y2="{at:.1f}" '
                     f'class="grid"/><text x="{LEFT - 4}" y="{at + 4:.1f}" class="tick" '
                     f'text-anchor="end">{value:.0f}</text>')
    return ("".join(ticks)
            + f'<text x="{(LEFT + WIDTH - PAD) / 2}" y="{HEIGHT - 6}" class="axis-title" '
              f'text-anchor="middle">{escape(x_title)}</text>'
            + f'<text transform="translate(14 {HEIGHT / 2}) rotate(-90)" class="axis-title" '
              f'text-anchor="middle">{escape(y_title)}</text>')


SEASON_CHART_POINTS = 6000
"""Points drawn over all lines of the season chart (200 bots of 500 matches each drew
100,000: 1.4 MB of one page); each line keeps an even sample with its last point."""
BOT_CHART_POINTS = 400


def thinned(items: Sequence[Any], most: int) -> Sequence[Any]:
    """At most ``most`` of ``items``, evenly spaced, the first and last kept."""
    if len(items) <= most:
        return items
    step = (len(items) - 1) / (most - 1)
    return [items[round(i * step)] for i in range(most)]


def rating_chart(bot: Bot, y_range: tuple[float, float]) -> Markup:
    """mu over the bot's matches with a ±sigma band, from the prior (mu 25, sigma 25/3)."""
    history = bot.standing.history if bot.standing else []
    title = f"Rating history of {bot.label}: mu with a band of plus or minus one sigma"
    if not history:
        return Markup('<p class="muted">No rated matches yet.</p>')
    low, high = y_range
    low, high = min(low, MU - SIGMA - 1), max(high, MU + SIGMA + 1)
    span = max(high - low, 1e-9)
    count = len(history)

    def x(index: int) -> float:
        return LEFT + (WIDTH - PAD - LEFT) * (index + 1) / count

    def y(value: float) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (value - low) / span

    # Before its first match a bot has the prior: mu 25 with sigma 25/3 (not a point).
    # The matches shown are thinned first (a bot of 800 matches: 400 points).
    points = [(-1, MU, SIGMA)] + [(i, history[i][1], history[i][2])
                                  for i in thinned(range(count), BOT_CHART_POINTS)]
    xs = [f"{x(i):.1f}," for i, _, _ in points]  # each point's x is written three times
    pairs = list(zip(xs, points, strict=True))
    upper = [f"{at}{y(mu + sigma):.1f}" for at, (_, mu, sigma) in pairs]
    lower = [f"{at}{y(mu - sigma):.1f}" for at, (_, mu, sigma) in reversed(pairs)]
    line = [f"{at}{y(mu):.1f}" for at, (_, mu, _) in pairs]
    last_match, last_mu, last_sigma = history[-1]
    svg = (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="chart-title">{escape(title)}</title>'
        f'<desc id="chart-desc">{count} matches; after match {escape(last_match)} mu is '
        f'{last_mu:.2f} and sigma {last_sigma:.2f}.</desc>'
        + _axes(low, high, y, f"matches played (0 to {count})", "TrueSkill mu ± sigma")
        + f'<polygon class="band" points="{" ".join(upper + lower)}"/>'
        f'<polyline class="mu" points="{" ".join(line)}"/>'
        "</svg>"
    )
    return Markup(svg)


def season_chart(bots: list[Bot], order: list[str]) -> Markup:
    """Every bot's live mu over the season, on one time axis (the season's done matches
    in schedule order), so their courses can be compared."""
    series = [b for b in bots if b.standing and b.standing.history]
    if not series or not order:
        return Markup('<p class="muted">No rated matches yet.</p>')
    position = {match_id: i + 1 for i, match_id in enumerate(order)}
    values = [mu for b in series for _, mu, _ in b.standing.history] + [MU]  # type: ignore[union-attr]
    low, high = min(values) - 1, max(values) + 1
    span = high - low
    right = WIDTH - 130  # room for the names at the lines' ends

    def x(index: int) -> float:
        return LEFT + (right - LEFT) * index / len(order)

    def y(value: float) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (value - low) / span

    lines, labels, summary = [], [], []
    ends: list[float] = []
    for number, bot in enumerate(series):
        history = bot.standing.history  # type: ignore[union-attr]
        most = max(20, SEASON_CHART_POINTS // len(series))
        points = [f"{x(0):.1f},{y(MU):.1f}"] + [
            f"{x(position[m]):.1f},{y(mu):.1f}"
            for m, mu, _ in thinned([h for h in history if h[0] in position], most)]
        colour = SERIES[number % len(SERIES)]
        dash = DASHES[(number // len(SERIES) + number) % len(DASHES)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        lines.append(f'<polyline class="series" points="{" ".join(points)}" '
                     f'style="stroke: {colour}"{dash_attr}/>')
        end = y(history[-1][1])
        for other in ends:  # keep the names apart
            if abs(end - other) < 12:
                end = other + 12
        ends.append(end)
        labels.append(f'<text x="{right + 6}" y="{end + 4:.1f}" class="series-label" '
                      f'style="fill: {colour}">{escape(bot.name)}</text>')
        summary.append(f"{bot.name} ends at mu {history[-1][1]:.1f}")
    title = "Live rating (TrueSkill mu) of every bot over the season"
    svg = (
        f'<svg class="chart season-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="season-chart-title season-chart-desc" '
        f'xmlns="http://www.w3.org/2000/svg">'
        f'<title id="season-chart-title">{escape(title)}</title>'
        f'<desc id="season-chart-desc">{len(order)} matches in schedule order; '
        f'{escape("; ".join(summary))}.</desc>'
        + _axes(low, high, y, f"season's matches in schedule order (1 to {len(order)})",
                "TrueSkill mu")
        + "".join(lines) + "".join(labels) + "</svg>"
    )
    return Markup(svg)


# -- think times: a match's decisions, a bot's matches ---------------------------------

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

