"""``arena report``'s entry point: ``render_site`` renders a season's store into a static
site (``site.py``), and what the CLI and the league server take from the report."""

from __future__ import annotations

from arena.report.data import MatchRow
from arena.report.incremental import STATE_FILE
from arena.report.logcheck import LogProblem, check_log
from arena.report.site import RenderSummary, render_site
from arena.report.templating import ASSETS, card_html, environment

__all__ = ["ASSETS", "STATE_FILE", "LogProblem", "MatchRow", "RenderSummary", "card_html",
           "check_log", "environment", "render_site"]
