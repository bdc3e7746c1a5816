"""``arena replay LOG``: re-run a match log through the engine and check it agrees."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.referee.log import log_problem, read_log
from arena.rules import events as ev
from arena.rules.match import Match
from arena.rules.options import RuleOptions
from arena.rules.seeds import MatchSeed


class ReplayMismatch(Exception):
    """The log does not replay to the state it records."""


class KeyNeeded(ReplayMismatch):
    """The log's deals come from a secret season key that was not given (or is wrong)."""


@dataclass(frozen=True)
class Replay:
    header: dict[str, Any]
    names: list[str]
    match: Match
    records: list[dict[str, Any]]
    result: dict[str, Any] | None


def replay(path: Path, on_line: Callable[[dict[str, Any]], None] | None = None,
           season_key: bytes | None = None) -> Replay:
    """Re-apply every logged decision to a fresh engine dealt as the log says; every
    event must come out identical and the final scores must match. A log played under a
    season key needs that key (``season_key``), checked against the log's commitment."""
    records = list(read_log(path))
    if not records or not isinstance(records[0], dict) or records[0].get("type") != "header":
        raise ReplayMismatch(f"{path}: not a match log (no header line)")
    problem = log_problem(records)
    if problem:
        raise ReplayMismatch(f"{path}: a damaged match log ({problem})")
    header = records[0]
    try:
        chance = MatchSeed.from_record(header, season_key)
    except KeyError:
        raise KeyNeeded(
            f"{path}: its deals come from a secret season key (SHA-256 "
            f"{header['key_commitment']}); replay it with --key once the organiser has "
            "revealed the key (`arena season reveal`)") from None
    except ValueError as error:
        raise KeyNeeded(f"{path}: {error}") from None
    names = [f"seat {s}" for s in range(header["players"])]
    match = Match(header["players"], chance.deck_rng(), RuleOptions.from_dict(header["rules"]))
    produced = 0
    result = None
    for number, record in enumerate(records[1:], start=2):
        kind = record.get("type")
        if kind == "seats":
            names = [s["name"] or f"seat {s['seat']}" for s in record["seats"]]
        elif kind == "penalty":  # §32: the seat drew 2 for an illegal action
            if not match.penalise(record["seat"]):
                raise ReplayMismatch(f"line {number}: the log has a mistake penalty the rules "
                                     "in force do not give")
        elif kind == "decision":
            if match.current_seat != record["seat"]:
                raise ReplayMismatch(f"line {number}: the log has seat {record['seat']} "
                                     f"deciding, the engine expects seat {match.current_seat}")
            match.apply(record["action"])
        elif kind == "event":
            if produced >= len(match.events):
                raise ReplayMismatch(f"line {number}: the log has an event the engine did not "
                                     "produce")
            expected = ev.to_record(match.events[produced])
            logged = {k: v for k, v in record.items() if k != "type"}
            if expected != logged:
                raise ReplayMismatch(f"line {number}: logged {logged}, engine {expected}")
            produced += 1
        elif kind == "result":
            result = record
            if list(match.scores) != record["scores"]:
                raise ReplayMismatch(f"final scores: logged {record['scores']}, "
                                     f"engine {match.scores}")
        if on_line is not None:
            on_line(record)
    if produced != len(match.events):
        raise ReplayMismatch(f"the engine produced {len(match.events)} events, the log "
                             f"holds {produced}")
    if result is None:
        raise ReplayMismatch(f"{path}: the log has no result line (cut short?)")
    return Replay(header, names, match, records, result)
