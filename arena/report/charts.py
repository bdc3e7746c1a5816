"""Inline SVG charts drawn server side (no CDN, no script)."""

from __future__ import annotations

from markupsafe import Markup, escape

from arena.report.data import Bot

WIDTH, HEIGHT, PAD = 640, 220, 36


def rating_chart(bot: Bot, y_range: tuple[float, float]) -> Markup:
    """mu over the bot's matches with a ±sigma band."""
    history = bot.standing.history if bot.standing else []
    title = f"Rating history of {bot.label}: mu with a band of plus or minus one sigma"
    if not history:
        return Markup('<p class="muted">No rated matches yet.</p>')
    low, high = y_range
    span = max(high - low, 1e-9)
    count = len(history)

    def x(index: int) -> float:
        return PAD + (WIDTH - 2 * PAD) * (index + 1) / count

    def y(value: float) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (value - low) / span

    start = f"{PAD:.1f},{y(25.0):.1f}"
    upper = [start] + [f"{x(i):.1f},{y(mu + sigma):.1f}" for i, (_, mu, sigma) in
                       enumerate(history)]
    lower = [f"{x(i):.1f},{y(mu - sigma):.1f}" for i, (_, mu, sigma) in
             reversed(list(enumerate(history)))] + [f"{PAD:.1f},{y(25.0):.1f}"]
    line = [start] + [f"{x(i):.1f},{y(mu):.1f}" for i, (_, mu, _) in enumerate(history)]
    ticks = []
    for step in range(5):
        value = low + span * step / 4
        ticks.append(f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{y(value):.1f}" '
                     f'y2="{y(value):.1f}" class="grid"/>'
                     f'<text x="{PAD - 4}" y="{y(value) + 4:.1f}" class="tick" '
                     f'text-anchor="end">{value:.0f}</text>')
    last_match, last_mu, last_sigma = history[-1]
    svg = (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="chart-title chart-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="chart-title">{escape(title)}</title>'
        f'<desc id="chart-desc">{count} matches; after match {escape(last_match)} mu is '
        f'{last_mu:.2f} and sigma {last_sigma:.2f}.</desc>'
        + "".join(ticks)
        + f'<polygon class="band" points="{" ".join(upper + lower)}"/>'
        f'<polyline class="mu" points="{" ".join(line)}"/>'
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 8}" class="tick" text-anchor="middle">'
        f'matches played (1 to {count})</text>'
        "</svg>"
    )
    return Markup(svg)
