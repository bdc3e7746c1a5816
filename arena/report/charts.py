"""Inline SVG charts drawn server side (no CDN, no script)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markupsafe import Markup, escape

from arena.rating.trueskill_ratings import MU, SIGMA
from arena.report.data import Bot

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
