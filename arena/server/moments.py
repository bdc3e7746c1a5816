"""Times as the organiser's pages and the final's page say them: ISO-8601 in UTC, with a
hint of how far off they are ("in 2 days 3 hours", "5 minutes ago")."""

from __future__ import annotations

import datetime as dt

UNITS = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))


def iso_utc(moment: float | dt.datetime | None) -> str | None:
    """``2026-12-02T18:00:00Z`` (None for None)."""
    if moment is None:
        return None
    if not isinstance(moment, dt.datetime):
        moment = dt.datetime.fromtimestamp(moment, dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def span(seconds: float) -> str:
    """A length of time in its two largest units: ``2 days 3 hours``, ``40 seconds``."""
    left = max(0, round(abs(seconds)))
    parts = []
    for name, size in UNITS:
        count, left = divmod(left, size)
        if count:
            parts.append(f"{count} {name}{'s' if count != 1 else ''}")
    return " ".join(parts[:2]) or "0 seconds"


def relative(moment: float, now: float) -> str:
    """``in 2 days 3 hours`` for a moment to come, ``5 minutes ago`` for one past."""
    return f"in {span(moment - now)}" if moment >= now else f"{span(now - moment)} ago"


def final_start(frozen_until: dt.datetime | None, phase: str, now: float) -> str | None:
    """``2026-12-02T18:00:00Z (in 2 days 3 hours)``: when the league file's times start the
    final (``[phases] frozen_until``); None in the final phase, or with no time set (the
    organiser starts it)."""
    if phase == "final" or frozen_until is None:
        return None
    return f"{iso_utc(frozen_until)} ({relative(frozen_until.timestamp(), now)})"
