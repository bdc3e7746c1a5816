"""Whether a season file still describes the season its store holds.

A season's first run records its *fingerprint* in the store: the SHA-256 of its entrant
folders, every scheduled match (id, deal label, seats) and its rules. Every later run and
every reader (status, standings, export, report) checks the file against it, as a file
changed under a season would mix two seasons' results. Computing it walks the whole
schedule (79,600 matches at 200 entrants: over a second), so a run also records the
SHA-256 of what the fingerprint is computed from (``fingerprint_inputs``: the entrant
folders, the schedule's settings and the rules, and the code that computes the schedule
and the fingerprint). The same inputs give the same fingerprint: finding them unchanged,
a check is done without walking the schedule; it walks it when they differ (a changed
file or changed code) or when the store has none (made by an older version). A reader
never records them: only a run writes the store.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.league import schedule
from arena.league.schedule import ScheduledMatch, lazy_schedule
from arena.league.season import Season, SeasonError
from arena.league.store import SeasonStore, StoreMissing

INPUTS_KEY = "fingerprint_inputs"
"""The store's meta key for ``fingerprint_inputs`` (beside ``fingerprint``)."""


class SeasonChanged(SeasonError):
    """The season file no longer describes the season its store holds."""


def season_schedule(season: Season) -> Sequence[ScheduledMatch]:
    """The season's schedule; at two seats computed match by match as it is read (a
    200-entrant season never holds its 19,900 x matches-per-pair matches at once)."""
    return lazy_schedule(len(season.entrants), season.table_size, season.matches_per_group,
                         season.duplicate_deals)


FINGERPRINT_CHUNK = 4096
"""Matches encoded per update of the fingerprint's hash."""


PLAIN = re.compile(r"[A-Za-z0-9/._-]*")
"""Labels json.dumps writes as they are, between quotes (the schedule's ids and labels)."""


def _match_json(match: ScheduledMatch) -> str:
    """``json.dumps([id, chance, seats])``, three times faster for the schedule's plain
    labels (anything else goes through json)."""
    if PLAIN.fullmatch(match.match_id) and PLAIN.fullmatch(match.chance):
        return f'["{match.match_id}", "{match.chance}", [{", ".join(map(str, match.seats))}]]'
    return json.dumps([match.match_id, match.chance, list(match.seats)])


def season_fingerprint(season: Season, matches: Iterable[ScheduledMatch]) -> str:
    """What must not change under a season's feet: the schedule and the rules.

    The SHA-256 of ``json.dumps({"entrants": [...], "matches": [(id, chance, seats)...],
    "rules": {...}}, sort_keys=True)``, the stores' format since the first, fed to the
    hash a chunk of matches at a time rather than built as one string."""
    digest = hashlib.sha256()
    entrants = json.dumps([str(m.folder) for m in season.entrants])
    digest.update(f'{{"entrants": {entrants}, "matches": ['.encode())
    chunk: list[str] = []
    first = True
    for match in matches:
        chunk.append(_match_json(match))
        if len(chunk) == FINGERPRINT_CHUNK:
            digest.update(((", " if not first else "") + ", ".join(chunk)).encode())
            chunk, first = [], False
    if chunk:
        digest.update(((", " if not first else "") + ", ".join(chunk)).encode())
    rules = json.dumps(season.rules.to_dict(), sort_keys=True)
    digest.update(f'], "rules": {rules}}}'.encode())
    return digest.hexdigest()


def fingerprint_inputs(season: Season) -> str:
    """The SHA-256 of everything ``season_fingerprint`` of ``season_schedule`` depends on:
    the entrant folders, the schedule's settings, the rules, the source of the schedule's
    module and of this one, and at tables of 3+ the numpy and scipy the schedule is
    balanced with (an optimal seating they choose among equals could change with them)."""
    code = hashlib.sha256()
    for source in (inspect.getfile(schedule), __file__):
        code.update(Path(source).read_bytes())
    libraries: dict[str, str] = {}
    if season.table_size > 2:
        from importlib.metadata import version

        libraries = {name: version(name) for name in ("numpy", "scipy")}
    inputs = {"entrants": [str(m.folder) for m in season.entrants],
              "table_size": season.table_size, "matches_per_group": season.matches_per_group,
              "duplicate_deals": season.duplicate_deals, "rules": season.rules.to_dict(),
              "code": code.hexdigest(), "libraries": libraries}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def same_fingerprint(season: Season, store: SeasonStore,
                     matches: Iterable[ScheduledMatch] | None = None) -> bool:
    """Whether ``store`` holds ``season``'s fingerprint: at once when it holds the same
    fingerprint inputs, else computed over ``matches`` (the season's schedule, computed
    here when not given)."""
    if store.meta(INPUTS_KEY) == fingerprint_inputs(season):
        return True
    matches = season_schedule(season) if matches is None else matches
    return store.meta("fingerprint") == season_fingerprint(season, matches)


SCHEDULE_SETTINGS = ("table_size", "matches_per_group", "duplicate_deals")


@dataclass(frozen=True)
class SeasonChanges:
    """How a season file differs from the season its store holds."""

    season: tuple[str, ...]
    """Entrants, schedule or rules: the store cannot go on with this file."""
    bots: tuple[str, ...]
    """Entrants whose folder changed since the last run: their remaining matches will be
    played by the new content (a new version), which a run allows."""

    def message(self, season: Season) -> str:
        return (f"{season.path}: {'; '.join(self.season)}, since this season started in "
                f"{season.folder}; restore the season file, or give the changed season a new "
                "[output] folder")

    def notes(self) -> list[str]:
        return [f"{change}: its remaining matches will be played by the new content (a new "
                "version in the standings) when the season runs again; restore the folder "
                "to keep the old one" for change in self.bots]


def _difference(name: str, before: object, after: object) -> str | None:
    return None if before == after else f"{name} {before!r} -> {after!r}"


def season_changes(season: Season, store: SeasonStore,
                   matches: Iterable[ScheduledMatch] | None = None) -> SeasonChanges:
    """What changed between ``season`` and the season ``store`` was started with
    (``matches``: the season's schedule, computed here when needed and not given)."""
    changes: list[str] = []
    if not same_fingerprint(season, store, matches):
        settings = store.settings()
        before = store.entrant_folders()
        if before is not None:
            now = [str(m.folder) for m in season.entrants]
            added = [f for f in now if f not in before]
            removed = [f for f in before if f not in now]
            if added or removed:
                changes.append("the entrants changed (" + ", ".join(
                    [f"added {f}" for f in added] + [f"removed {f}" for f in removed]) + ")")
            elif before != now:
                changes.append("the entrants changed (listed in another order)")
        if settings:
            schedule_changes = [d for key in SCHEDULE_SETTINGS if (d := _difference(
                key, settings.get(key), getattr(season, key))) is not None]
            if schedule_changes:
                changes.append(f"the schedule changed ({', '.join(schedule_changes)})")
            rules = season.rules.to_dict()
            rule_changes = [d for key in sorted(set(rules) | set(settings.get("rules", {})))
                            if (d := _difference(key, settings.get("rules", {}).get(key),
                                                 rules.get(key))) is not None]
            if rule_changes:
                changes.append(f"the rules changed ({', '.join(rule_changes)})")
        if not changes:
            changes.append("the entrants, schedule or rules changed")
    latest: dict[str, str] = {}
    for entrant in store.entrants():  # in id order: the last one is the latest version
        latest[str(entrant["folder"])] = str(entrant["hash"])
    bots = []
    for bot in season.entrants:
        known = latest.get(str(bot.folder))
        try:
            content = bot.content_hash()
        except OSError as error:
            bots.append(f"bot {bot.label} ({bot.folder}) cannot be read ({error.strerror})")
            continue
        if known is not None and known != content:
            bots.append(f"bot {bot.label} ({bot.folder}) changed since the last run")
    return SeasonChanges(tuple(changes), tuple(bots))


def read_store(season: Season) -> tuple[SeasonStore, SeasonChanges]:
    """The season's store opened read-only (a run may be writing it), after checking it
    belongs to this season file: StoreMissing if the season has not been run,
    SeasonChanged if the file changed under it, StoreError if it is damaged."""
    store = SeasonStore(season.store_path, read_only=True)
    try:
        if store.meta("fingerprint") is None:  # created, but no run got further
            raise StoreMissing(f"{season.store_path}: no match scheduled yet")
        changes = season_changes(season, store)
        if changes.season:
            raise SeasonChanged(changes.message(season))
    except BaseException:
        store.close()
        raise
    return store, changes
