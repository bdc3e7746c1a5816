"""The site's downloads: the standings and the results as CSV and JSON, and every match
log in ``logs.tar``. The same store and logs give the same bytes."""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any, BinaryIO

from arena.report.data import MatchRow, SeasonData
from arena.report.incremental import MatchRecord, replace, write_in_parts
from arena.spreadsheet import safe_cell

DOWNLOADS = ("standings.csv", "standings.json", "results.csv", "results.json", "logs.tar")
LOG_SUFFIX = ".jsonl.gz"

Listing = list[tuple[str, int, str]]
"""The archive's logs in name order: each log's file name, size and its match's page key
(a copy is known by its source log's size and time, the same in any output folder)."""


def standings_rows(data: SeasonData) -> list[dict[str, Any]]:
    """The standings as plain rows (the CSV and JSON downloads)."""
    rows = []
    for bot in data.ranked + data.unrated:
        row, live = bot.official, bot.standing
        rows.append({
            "rank": row.rank_label if row else "unrated",
            "position": row.position if row else None,
            "rank_interval_low": row.interval[0] if row else None,
            "rank_interval_high": row.interval[1] if row else None,
            "bot": bot.name, "version": bot.version,
            "strength": round(row.strength, 6) if row else None,
            "p_above_next": row.above_next if row else None,
            "live_mu": round(live.mu, 6) if live else None,
            "live_sigma": round(live.sigma, 6) if live else None,
            "matches": live.matches if live else 0,
            "wins": live.wins if live else 0,
            "average_place": round(live.average_place, 6) if live else None,
            "average_score": round(live.average_score, 6) if live else None,
            "faults": live.faults if live else 0,
        })
    return rows


def results_rows(data: SeasonData, matches: list[MatchRow] | None = None
                 ) -> list[dict[str, Any]]:
    """Every seat of every match (and every failed match, once), in schedule order; or
    of ``matches`` only."""
    rows: list[dict[str, Any]] = []
    for match in data.matches if matches is None else matches:
        base = {"match_id": match.match_id, "round": match.round, "status": match.status,
                "deal": match.chance, "finished_at": match.finished_at,
                "seconds": match.seconds, "rounds": match.rounds,
                "decisions": match.decisions}
        if not match.results:
            rows.append({**base, "seat": None, "bot": None, "version": None, "place": None,
                         "score": None, "faults": None, "disqualified": None,
                         "error": match.error})
            continue
        for result in match.results:
            bot = data.bot(result.entrant_id)
            rows.append({**base, "seat": result.seat, "bot": bot.name,
                         "version": bot.version, "place": result.place,
                         "score": result.score, "faults": len(result.faults),
                         "disqualified": result.disqualified, "error": None})
    return rows


def csv_rows(rows: list[dict[str, Any]], header: bool = True) -> bytes:
    """``rows`` as CSV, a column a key of the first row; no cell a spreadsheet formula."""
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        if header:
            writer.writeheader()
        writer.writerows({key: safe_cell(value) for key, value in row.items()}
                         for row in rows)
    return buffer.getvalue().encode()


def write_standings(data: SeasonData, out: Path) -> None:
    """The standings as CSV and JSON."""
    standings = standings_rows(data)
    replace(out / "standings.csv", csv_rows(standings))
    groups = [[b.name for b in group] for group in data.groups]
    replace(out / "standings.json", (json.dumps(
        {"season": data.name, "standings": standings, "cannot_separate": groups,
         "unrated": [b.name for b in data.unrated], "matches": data.counts},
        indent=1) + "\n").encode())


def write_downloads(data: SeasonData, out: Path, pages: list[tuple[str, list[MatchRow]]],
                    previous: dict[str, str], match_state: dict[str, MatchRecord],
                    copied: dict[str, int]) -> dict[str, str]:
    """The results downloads and the logs' archive; what they add to the state.
    ``pages``: each page of the match list, its key and its matches."""
    state: dict[str, str] = {}
    _write_results(data, out, pages, previous, state)
    _write_archive(data.name, out, previous, state, match_state, copied)
    return state


def _write_results(data: SeasonData, out: Path, pages: list[tuple[str, list[MatchRow]]],
                   previous: dict[str, str], state: dict[str, str]) -> None:
    """The results as CSV and JSON, written a page of the match list at a time, each part
    keyed by that page's key: the part of a page that did not change is copied from the
    file the last render wrote, so a new result costs its page's rows, not the season's."""
    header = csv_rows(results_rows(data, data.matches[:1]))
    write_in_parts(out / "results.csv", header[:header.index(b"\n") + 1] if pages else b"",
                   [(key, functools.partial(_results_csv, data, chunk))
                    for key, chunk in pages], b"", b"", previous, state)
    # One result a line: json's C encoder (an indent makes it fall back to its pure-Python
    # one, 10 s for 100,000 rows), still readable line by line.
    encode = json.JSONEncoder().encode
    write_in_parts(out / "results.json",
                   f'{{"season": {encode(data.name)}, "results": [\n'.encode(),
                   [(key, functools.partial(_results_json, data, chunk))
                    for key, chunk in pages], b",\n", b"\n]}\n", previous, state)


def _results_csv(data: SeasonData, matches: list[MatchRow]) -> bytes:
    return csv_rows(results_rows(data, matches), header=False)


def _results_json(data: SeasonData, matches: list[MatchRow]) -> bytes:
    encode = json.JSONEncoder().encode
    return ",\n".join(encode(row) for row in results_rows(data, matches)).encode()


def _write_archive(name: str, out: Path, previous: dict[str, str],
                   state: dict[str, str], match_state: dict[str, MatchRecord],
                   copied: dict[str, int]) -> None:
    """Every log of ``logs/`` in ``logs.tar``, in name order. While the logs the archive
    holds are still its first ones, unchanged (new matches come later in the schedule),
    only the new ones are added, after them, giving the bytes a whole rebuild gives.
    ``copied``: the sizes of the logs this render copied whole (their sources' sizes);
    any other log of the folder is stated."""
    folder = out / "logs"
    names = sorted(n for n in os.listdir(folder) if n.endswith(LOG_SUFFIX))
    entries = [(log, copied[log] if log in copied else (folder / log).stat().st_size,
                (match_state.get(log.removesuffix(LOG_SUFFIX)) or [""])[0] or "")
               for log in names]
    target = out / "logs.tar"
    count, _, digest = previous.get("archive/logs.tar", "").partition(":")
    held = int(count) if count.isdigit() else -1
    state["archive/logs.tar"] = f"{len(entries)}:{_listing_digest(entries)}"
    if target.is_file() and 0 <= held <= len(entries) and digest == _listing_digest(
            entries[:held]) and target.stat().st_size == _archive_size(entries[:held]):
        if held < len(entries):
            with target.open("r+b") as archive:
                archive.seek(_entries_end(entries[:held]))
                _write_logs(archive, name, [folder / log for log in names[held:]])
        return
    partial = target.with_name(f".{target.name}.partial")
    with partial.open("wb") as archive:
        _write_logs(archive, name, [folder / log for log in names])
    os.replace(partial, target)


def _write_logs(archive: BinaryIO, season: str, logs: list[Path]) -> None:
    """The entries of ``logs`` from ``archive``'s position on, then the archive's end, as
    ``tarfile`` writes them, and nothing after it. The position is known from the
    listing, so no header already there is read (``tarfile``'s mode "a" reads them all:
    about 2 s at 50,000 logs)."""
    with tarfile.open(fileobj=archive, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        add_logs(tar, season, logs)
    archive.truncate()


def add_logs(tar: tarfile.TarFile, season: str, logs: list[Path]) -> None:
    """Each log as ``<season>-logs/<name>``, with what does not come from the log fixed
    (modification time 0, owner 0, mode 644): the archive is a function of the logs."""
    for log in logs:
        content = log.read_bytes()
        info = tarfile.TarInfo(f"{season}-logs/{log.name}")
        info.size, info.mtime, info.mode, info.uid, info.gid = len(content), 0, 0o644, 0, 0
        tar.addfile(info, io.BytesIO(content))


def _listing_digest(entries: Listing) -> str:
    return hashlib.sha256(repr(entries).encode()).hexdigest()


def _entries_end(entries: Listing) -> int:
    """Where these logs' entries end in an archive of them (its end blocks start there)."""
    return sum(1 + -(-size // tarfile.BLOCKSIZE) for _, size, _ in entries) * tarfile.BLOCKSIZE


def _archive_size(entries: Listing) -> int:
    """The size of a USTAR archive of these logs, as ``tarfile`` writes it."""
    size = _entries_end(entries) + 2 * tarfile.BLOCKSIZE
    return -(-size // tarfile.RECORDSIZE) * tarfile.RECORDSIZE
