"""CSV cells a spreadsheet will not run: the downloads hold names bots' authors chose.

A cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return before
one) is read by Excel, LibreOffice and Google Sheets as a formula, so a bot named
``=HYPERLINK("http://…")`` or ``=cmd|' /C calc'!A0`` would act in the organiser's
spreadsheet ("CSV injection", OWASP). Such text gets a leading apostrophe, which the
spreadsheet shows as text and does not display; numbers (a negative score) are written as
they are. The JSON downloads keep every name exactly.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> object:
    """``value``, or, for text a spreadsheet would take for a formula, that text quoted."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
