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
IGNORABLE = frozenset(
    "\u034f\u17b4\u17b5" + "".join(map(chr, range(0x180B, 0x1810)))
    + "".join(map(chr, range(0xFE00, 0xFE10))) + "".join(map(chr, range(0xE0100, 0xE01F0))))
"""Marks Unicode says to show as nothing (Default_Ignorable_Code_Point) that are not format
characters: the combining grapheme joiner, Khmer's inherent vowels, Mongolian's and the
variation selectors. The emoji selectors (U+FE0E, U+FE0F) are kept after a symbol."""
EMOJI_SELECTORS = frozenset("\ufe0e\ufe0f")
MARKS_PER_LETTER = 2
"""Combining marks after one letter, at most: a pile of them overlaps the lines around."""
LOOKALIKE_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK"})
"""Scripts whose letters pass for each other's: a name mixing them is refused."""


def name_problem(name: str, length: int = NAME_LENGTH) -> str | None:
    """Why ``name`` cannot name a bot (None when it can). A name is shown beside others
    and told apart by eye: so no character that shows as nothing or reorders the text
    (zero-width and other format characters, fillers, controls), no unassigned or private
    character, no space at either end, one form of each accented letter (NFC), and at
    most ``NAME_LENGTH`` characters."""
    hidden = unshowable(name)
    if hidden:
        return f"holds {hidden}"
    if len(name) > length:
        return f"is {len(name)} characters long; at most {length}"
    if name != name.strip():
        return "starts or ends with a space"
    if unicodedata.normalize("NFC", name) != name:
        return "is not in Unicode's composed form (NFC): write each accented letter as one"
    marks = 0
    for index, char in enumerate(name):
        if char in JOINERS and _joins(name, index):
            continue
        if char in EMOJI_SELECTORS and index and unicodedata.category(name[index - 1]) == "So":
            continue
        if (unicodedata.category(char) in ("Cf", "Co", "Cn", "Cs") or char in BLANK_LETTERS
                or char in IGNORABLE):
            described = unicodedata.name(char, "an unassigned or private character")
            return (f"holds U+{ord(char):04X} ({described}), which shows as nothing or "
                    "not at all")
        marks = marks + 1 if unicodedata.category(char) in ("Mn", "Me") else 0
        if marks and index == marks - 1:
            return "starts with a combining mark (it shows on the text before the name)"
        if marks > MARKS_PER_LETTER:
            return (f"has more than {MARKS_PER_LETTER} combining marks on one letter (a "
                    "pile of them covers the lines around it)")
    scripts = _letter_scripts(name) & LOOKALIKE_SCRIPTS
    if len(scripts) > 1:
        return (f"mixes {' and '.join(sorted(s.title() for s in scripts))} letters, which "
                "pass for each other's: write it in one of them")
    return None


def _letter_scripts(text: str) -> set[str]:
    """The scripts of ``text``'s letters, by the first word of their Unicode names."""
    return {unicodedata.name(char, "?").split()[0] for char in text
            if unicodedata.category(char).startswith("L")}


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


LOOKALIKE_LETTERS = str.maketrans({
    "1": "l", "|": "l", "i": "l", "0": "o",  # i: the case-folded capital I, drawn as l
    # Cyrillic and Greek letters drawn as Latin ones (lower case: the key is case-folded),
    # written as escapes so that this file shows which is which.
    "\u0430": "a", "\u0435": "e", "\u0451": "e", "\u043e": "o", "\u0440": "p",
    "\u0441": "c", "\u0443": "y", "\u0445": "x", "\u0456": "l", "\u0457": "l",
    "\u0458": "j", "\u0455": "s", "\u0501": "d", "\u051b": "q", "\u051d": "w",
    "\u0251": "a", "\u0261": "g", "\u0131": "l", "\u03b1": "a", "\u03b2": "b",
    "\u03b5": "e", "\u03b9": "l", "\u03ba": "k", "\u03bd": "v", "\u03bf": "o",
    "\u03c1": "p", "\u03c4": "t", "\u03c5": "u", "\u03c7": "x", "\u03c9": "w",
    " ": None, "_": None, "-": None, ".": None})
LOOKALIKE_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"))


def lookalike_key(name: str) -> str:
    """What two names are told apart by at a glance: ``name_key``, with the letters and
    digits that look alike in the site's font folded together (capital I, l, 1; O and 0;
    rn and m; Cyrillic and Greek letters drawn as Latin ones) and separators dropped (a
    capital I is l, so i is too once case is folded: "bit" and "blt" are one). Two
    names with one key are one name: the second is refused."""
    key = name_key(name).translate(LOOKALIKE_LETTERS)  # its one space between words dropped
    for pair, single in LOOKALIKE_PAIRS:
        key = key.replace(pair, single)
    return key


LABEL_LENGTH = 80


def file_label(label: str) -> str:
    """``label`` (which may hold a bot's name) made fit to name a file or a cgroup, one
    file per label: a label of ASCII letters, digits, ``.`` and ``-`` (not first), at most
    ``LABEL_LENGTH`` long, as it is; any other with everything else (a slash, a space, an
    underscore, a letter of another script) as ``_``, capped, then ``_`` and a digest of
    the label. So a label kept as it is holds no ``_`` and one changed does: no name can be
    chosen to land on another's file, as it could if ``_`` were kept as it is."""
    if (label.isascii() and len(label) <= LABEL_LENGTH and label[:1] not in ("", ".", "-")
            and all(char.isalnum() or char in ".-" for char in label)):
        return label
    safe = "".join(char if char.isascii() and (char.isalnum() or char in ".-") else "_"
                   for char in label)
    digest = hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    safe = f"x{safe}" if safe[:1] in ("", ".", "-") else safe
    return f"{safe[:LABEL_LENGTH - 13]}_{digest}"
