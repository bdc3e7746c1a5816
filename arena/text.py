"""Text from bots (names, build output, stderr) shown to people: in terminals and pages.

A terminal runs the escape sequences it is sent (colours, a cleared screen, a window title,
on some terminals worse), a carriage return or line break lets text pass for another line,
and direction controls make a name read as another. Names may hold none of them
(``unshowable``); output quoted to a terminal shows them as escapes (``visible``).
"""

from __future__ import annotations

import unicodedata

DIRECTION_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                               "\u2066\u2067\u2068\u2069")
"""Marks that reorder how the text around them is shown."""


def _hidden(char: str) -> bool:
    # C0 controls, DEL and C1 controls; line and paragraph separators; direction controls.
    return unicodedata.category(char) in ("Cc", "Zl", "Zp") or char in DIRECTION_CONTROLS


def unshowable(text: str) -> str | None:
    """The first character of ``text`` that cannot be shown as it is, described; None when
    there is none."""
    for char in text:
        if _hidden(char):
            return f"the character U+{ord(char):04X} ({unicodedata.name(char, 'a control')})"
    return None


def visible(line: str) -> str:
    """``line`` with each such character written as its escape (``\\x1b``, ``\\u202e``),
    tabs kept."""
    if line.isprintable():  # the usual line: nothing to do
        return line
    return "".join(char if char == "\t" or not _hidden(char)
                   else (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")
                   for char in line)
