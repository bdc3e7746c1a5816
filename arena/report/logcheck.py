"""A played match's log checked against what the store recorded with its result: a log
that is missing, altered or damaged is listed on the site, never shown as if it were
whole."""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.report.data import MatchRow, read_match_log


@dataclass(frozen=True)
class LogProblem:
    """A played match whose log cannot be shown as it was recorded."""

    match_id: str
    kind: str
    """"missing", "altered" (not the bytes recorded with the result) or "damaged"."""
    detail: str
    path: str


class LogUnreadable(Exception):
    pass


def check_log(match: MatchRow) -> LogProblem | None:
    """What is wrong with the match's log, if anything. A log whose SHA-256 was recorded
    is checked against it (it was whole when recorded); one with none recorded is read."""
    path = Path(match.log_path) if match.log_path else None
    if path is None or not path.is_file():
        where = str(path) if path else "(no log path recorded)"
        return LogProblem(match.match_id, "missing", "the log file is missing", where)
    try:
        content = path.read_bytes()
    except OSError as error:
        return LogProblem(match.match_id, "missing",
                          f"the log cannot be read ({error.strerror})", str(path))
    if match.log_sha256:
        if hashlib.sha256(content).hexdigest() != match.log_sha256:
            return LogProblem(match.match_id, "altered", "the log is not the one recorded "
                              "with the result (its SHA-256 differs)", str(path))
        return None
    try:
        read_whole(path)
    except LogUnreadable as error:
        return LogProblem(match.match_id, "damaged", str(error), str(path))
    return None


def read_whole(path: Path) -> list[dict[str, Any]]:
    """Every line of the log, a header first; LogUnreadable (one line) otherwise."""
    try:
        records = read_match_log(path)
        if not records or records[0].get("type") != "header":
            raise ValueError("no header record")
        return records
    except (OSError, EOFError, ValueError, UnicodeDecodeError, zlib.error) as error:
        raise LogUnreadable(f"the log cannot be read ({type(error).__name__}: {error})"
                            ) from None


def log_stat(match: MatchRow) -> os.stat_result | None:
    """The match's log file's stat (None: no log path recorded, or no file)."""
    if not match.log_path:
        return None
    try:
        return os.stat(match.log_path)
    except OSError:
        return None
