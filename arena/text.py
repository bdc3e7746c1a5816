"""Text from bots (names, build output, stderr) shown to people: in terminals and pages.

A terminal runs the escape sequences it is sent (colours, a cleared screen, a window title,
on some terminals worse), a carriage return or line break lets text pass for another line,
and direction controls make a name read as another. Names may hold none of them
(``unshowable``); output quoted to a terminal shows them as escapes (``visible``).
"""

from __future__ import annotations

import hashlib
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


NAME_LENGTH = 64
"""The longest bot name (characters): it heads tables and terminal lines."""

BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters that show as nothing (Hangul fillers, the blank Braille pattern)."""


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a bot (None when it can). A name is shown beside others
    and told apart by eye: so no character that shows as nothing or reorders the text
    (zero-width and other format characters, fillers, controls), no unassigned or private
    character, no space at either end, one form of each accented letter (NFC), and at
    most ``NAME_LENGTH`` characters."""
    hidden = unshowable(name)
    if hidden:
        return f"holds {hidden}"
    if len(name) > NAME_LENGTH:
        return f"is {len(name)} characters long; at most {NAME_LENGTH}"
    if name != name.strip():
        return "starts or ends with a space"
    if unicodedata.normalize("NFC", name) != name:
        return "is not in Unicode's composed form (NFC): write each accented letter as one"
    for index, char in enumerate(name):
        if char in JOINERS and _joins(name, index):
            continue
        if unicodedata.category(char) in ("Cf", "Co", "Cn", "Cs") or char in BLANK_LETTERS:
            described = unicodedata.name(char, "an unassigned or private character")
            return (f"holds U+{ord(char):04X} ({described}), which shows as nothing or "
                    "not at all")
    return None


JOINERS = frozenset("\u200c\u200d")
"""Zero-width (non-)joiners: part of emoji sequences and of some scripts' words."""


def _joins(name: str, index: int) -> bool:
    """A joiner between two characters beyond ASCII (an emoji sequence, a Persian word),
    not one hidden inside a Latin name."""
    return 0 < index < len(name) - 1 and all(
        not neighbour.isascii() and not neighbour.isspace()
        for neighbour in (name[index - 1], name[index + 1]))


def name_key(name: str) -> str:
    """What two names are compared by: names that read alike (by case, compatibility forms,
    spacing or joiners) have the same key."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return " ".join("".join(char for char in folded if char not in JOINERS).split())


LABEL_LENGTH = 80


def file_label(label: str) -> str:
    """``label`` (which may hold a bot's name) made fit to name a file or a cgroup, one
    file per label: a label of ASCII letters, digits, ``.`` and ``-`` (not first), at most
    ``LABEL_LENGTH`` long, as it is; any other with everything else (a slash, a space, an
    underscore, a letter of another script) as ``_``, capped, then ``_`` and a digest of
    the label. So a label kept as it is holds no ``_`` and one changed does: no name can be
    chosen to land on another's file (found by review, when ``_`` was kept as it is)."""
    if (label.isascii() and len(label) <= LABEL_LENGTH and label[:1] not in ("", ".", "-")
            and all(char.isalnum() or char in ".-" for char in label)):
        return label
    safe = "".join(char if char.isascii() and (char.isalnum() or char in ".-") else "_"
                   for char in label)
    digest = hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    safe = f"x{safe}" if safe[:1] in ("", ".", "-") else safe
    return f"{safe[:LABEL_LENGTH - 13]}_{digest}"
