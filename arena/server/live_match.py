"""A ladder match in play, as anyone may watch it: the lines its referee has written to its
log so far (the ``.partial`` file beside the finished logs, gzip flushed a few dozen lines
at a time), reduced to the public view of its events, what a spectator at the table sees:
cards played, the discard, the colour named, how many cards each seat holds and draws,
never a card in a hand, a card drawn or a hand shown to a challenger alone. Every seat is
told at least this much as the match goes on, so it teaches no seat anything; the
decisions (each carries its seat's hand), faults, timings and stderr are left out. A
round's hands are shown once it ends, as every seat is told them for the count.
"""

from __future__ import annotations

import glob
import zlib
from pathlib import Path
from typing import Any

from arena.referee.log import LINE_MOST, parse_line
from arena.report.matchmodel import MatchModel, read_model
from arena.rules import events as ev

FACE_DOWN = -1
"""A card the viewer is not shown, in the replay's data (its hands keep their sizes)."""
SPECTATOR = -1
"""The seat of someone at no seat (``seen_by``: every seat's cards hidden from it)."""
READ_MOST = 64 * 1024 * 1024
"""Bytes of a log in play decompressed at most (a 2-player match to 500 writes under 1 MB)."""


def partial_log(logs: Path, match_id: str) -> Path | None:
    """The log its referee is writing for ``match_id`` (the newest, should a killed run
    have left another), or None before the match has one."""
    found = []
    for name in glob.glob(glob.escape(str(logs / f"{match_id}.jsonl.gz")) + ".*.partial"):
        path = Path(name)
        try:
            if path.is_file() and not path.is_symlink():
                found.append((path.stat().st_mtime_ns, name))
        except OSError:
            continue
    return Path(max(found)[1]) if found else None


def flushed_records(path: Path) -> list[dict[str, Any]]:
    """The whole lines written to a gzip log so far (what a sync flush made decodable; a
    line still being written is left for the next read)."""
    inflater = zlib.decompressobj(wbits=31)  # gzip, its header included
    text = b""
    with path.open("rb") as stream:
        while len(text) < READ_MOST and (chunk := stream.read(1 << 16)):
            try:
                text += inflater.decompress(chunk, READ_MOST - len(text))
            except zlib.error:
                break  # a damaged file: what came before it is shown
    records = []
    for line in text.split(b"\n")[:-1]:
        if len(line) > LINE_MOST:
            break
        try:
            record = parse_line(line)
        except ValueError:
            break
        if not isinstance(record, dict):
            break
        records.append(record)
    return records


def public_events(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log's event lines as a spectator sees them (every private card hidden)."""
    public = []
    for record in records:
        if record.get("type") != "event":
            continue
        fields = {key: value for key, value in record.items() if key != "type"}
        try:
            seen = ev.seen_by(ev.from_record(fields), SPECTATOR)
        except (KeyError, TypeError, ValueError):
            break  # a line the engine did not write: nothing after it is shown
        public.append({"type": "event", **ev.to_record(seen)})
    return public


def public_model(records: list[dict[str, Any]], names: list[str]) -> MatchModel:
    """The replay's model of a match in play: its public events only, each hidden card a
    ``FACE_DOWN`` one (so hands keep their sizes on the table)."""
    events = public_events(records)
    header = [r for r in records[:1] if r.get("type") == "header"]
    model = read_model(header + events, names)
    steps = [step for round_ in model.data["rounds"] for step in round_["steps"]]
    if len(steps) == len(events):  # every event is a step once a round has started
        for step, record in zip(steps, events, strict=True):
            _face_down(step, record)
    model.data["live"] = True
    return model


def _face_down(step: dict[str, Any], record: dict[str, Any]) -> None:
    kind = record["event"]
    if kind in ("Dealt", "Drew"):
        step["cs"] = [FACE_DOWN] * int(record["amount"])
    elif kind == "HandsSwapped":
        step["cs"] = [FACE_DOWN] * int(record["amount"])
        step["ocs"] = [FACE_DOWN] * int(record["other_amount"])
    elif kind == "HandsPassed":
        step["hs"] = [[FACE_DOWN] * int(amount) for amount in record["amounts"]]
    elif kind == "CardsExchanged":
        step["cs"], step["ocs"] = [FACE_DOWN], [FACE_DOWN]
