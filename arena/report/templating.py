"""The Jinja environment every page of the report is rendered in, its filters, and the
writing of rendered pages into a site's folder."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from arena.report.bytecode import bytecode_cache
from arena.report.data import Bot
from arena.rules.cards import CARD_COLOUR, CARD_NAMES
from arena.rules.narration import card_words, describe_rules, variant_lines

COLOUR_NAMES = ("red", "yellow", "green", "blue", "wild")
ASSETS = ("style.css", "replay.js", "tables.js")
"""The files of ``static/`` every site holds in its ``assets/`` folder."""


def environment() -> Environment:
    """A new environment for the report's templates, with its filters (a new one each call:
    the league server changes its loader and adds filters to its own)."""
    env = Environment(loader=PackageLoader("arena.report", "templates"),
                      autoescape=select_autoescape(), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                      # The templates do not change during a render: no stat of a
                      # template's file each time a page asks for it.
                      auto_reload=False,
                      # Compiled once, not by every process that renders.
                      bytecode_cache=bytecode_cache(templates_version()))
    env.filters["card"] = card_html
    env.filters["move_items"] = move_items
    env.filters["pct"] = lambda x: "" if x is None else f"{x:.0%}"
    env.filters["num"] = lambda x, d=2: "" if x is None else f"{x:.{d}f}"
    # The rules in force (a RuleOptions dict from the store or a log header), §21-§32.
    env.filters["rules"] = describe_rules
    env.filters["variant_lines"] = variant_lines
    env.filters["signed"] = lambda x: "" if x is None else f"{x:+.2f}"
    env.filters["duration"] = _duration
    env.filters["names"] = _names
    # UTC, so the same store renders the same bytes on any machine.
    env.filters["date"] = lambda t: "" if t is None else (
        datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M UTC"))
    return env


@functools.cache
def templates_version() -> str:
    """A digest of the templates, the assets and the code that renders them (this package
    and the narration), computed once a process: none of them changes while it runs."""
    digest = hashlib.sha256()
    for package in ("templates", "static"):
        folder = resources.files("arena.report") / package
        for item in sorted(folder.iterdir(), key=lambda p: p.name):
            if item.is_file():
                digest.update(item.name.encode() + item.read_bytes())
    here = Path(__file__).parent
    for module in sorted(here.glob("*.py")):
        digest.update(module.read_bytes())
    digest.update((here.parent / "rules" / "narration.py").read_bytes())
    return digest.hexdigest()[:16]


def card_html(card: int) -> Markup:
    """A card as a readable chip: colour, symbol, and a text alternative."""
    colour = COLOUR_NAMES[CARD_COLOUR[card]]
    name = CARD_NAMES[card]
    symbol = {"W": "W", "W+4": "+4", "W+10": "+10"}.get(name, name[1:])
    symbol = {"S": "⊘", "R": "⇄"}.get(symbol, symbol)
    return Markup('<span class="card card-{}" title="{}" aria-label="{}">{}</span>').format(
        colour, card_words(card), card_words(card), symbol)


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


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{seconds:.1f} s"


def _names(bots: list[Bot]) -> str:
    names = [b.name for b in bots]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def write_text(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` unless it holds it already (an unchanged page keeps its
    modification time)."""
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def copy_assets(out: Path) -> None:
    """The site's stylesheet and scripts into ``out/assets`` (which must exist)."""
    for asset in ASSETS:
        content = (resources.files("arena.report") / "static" / asset).read_bytes()
        target = out / "assets" / asset
        if not target.exists() or target.read_bytes() != content:
            target.write_bytes(content)


@dataclass
class Site:
    """The site being written: its templates, folder and the context every page shares,
    the last render's keys (``previous``) and this one's (``state``), pages counted."""

    env: Environment
    out: Path
    common: dict[str, Any]
    version: str
    previous: dict[str, str]
    state: dict[str, str]
    pages: int = 0

    def write(self, path: str, template: str, depth: int, **context: Any) -> None:
        """Render ``template`` into ``path`` (relative to the site, ``depth`` folders
        down)."""
        write_text(self.out / path, self.env.get_template(template).render(
            root="../" * depth, **self.common, **context))
        self.pages += 1

    def reuse(self, name: str, key: str) -> bool:
        """Whether the page ``name`` was rendered under ``key`` and is still there."""
        self.state[f"list/{name}"] = key
        if self.previous.get(f"list/{name}") == key and (self.out / name).exists():
            self.pages += 1
            return True
        return False
