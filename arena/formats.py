"""JSON and TOML read from files and peers that may be hostile or damaged (a bot's
``bot.toml``, an upload, a match log, a site's state, a season or league file, a server's
answer). Python's parsers recurse: a value nested a few thousand levels deep (a few
kilobytes) raises RecursionError, which no caller expects of a parse. Here it raises the
format's own error, a ValueError every caller already handles."""

from __future__ import annotations

import json
import tomllib
from typing import Any


class NestedTooDeep(json.JSONDecodeError):
    """A JSON value nested deeper than the parser goes."""

    def __init__(self) -> None:
        message = "nested deeper than the parser goes (a damaged or hostile value)"
        super().__init__(message, "", 0)
        self.args = (message,)  # no "line 1 column 1": the parser gives no position


def json_value(text: str | bytes) -> Any:
    """``json.loads(text)``; NestedTooDeep (a ``json.JSONDecodeError``) for a value nested
    past the parser's depth."""
    try:
        return json.loads(text)
    except RecursionError:
        raise NestedTooDeep from None


def toml_table(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``; ``tomllib.TOMLDecodeError`` for arrays or tables nested
    past the parser's depth."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(
            "arrays or tables nested deeper than the parser goes") from None
