"""Running a season: schedule, resume from the store, execute, record, rate."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from arena.league.executor import Executor, JobOutcome, LocalExecutor, MatchJob
from arena.league.schedule import ScheduledMatch, schedule
from arena.league.season import Season, SeasonError
from arena.league.store import SeasonStore
from arena.rating import Leaderboard, rate_season
from arena.rules.seeds import KEY_BYTES, MatchSeed, key_commitment
from arena.sandbox.manifest import BotManifest


@dataclass(frozen=True)
class RunSummary:
    scheduled: int
    already_done: int
    played: int
    failed: int
    failures: tuple[tuple[str, str], ...]


def season_schedule(season: Season) -> list[ScheduledMatch]:
    return schedule(len(season.entrants), season.table_size, season.matches_per_group,
                    season.duplicate_deals)


def _fingerprint(season: Season, matches: list[ScheduledMatch]) -> str:
    """What must not change under a season's feet: the schedule and the rules."""
    data = {
        "entrants": [str(m.folder) for m in season.entrants],
        "matches": [(m.match_id, m.chance, m.seats) for m in matches],
        "rules": season.rules.to_dict(),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def open_store(season: Season) -> tuple[SeasonStore, list[int], list[ScheduledMatch]]:
    """Open (or create) the season's store and check it belongs to this season file."""
    matches = season_schedule(season)
    # The store, the logs and the bots' output are the organiser's: no bot may read them
    # (a bot under the fallback sandbox sees what others may read).
    season.folder.mkdir(parents=True, exist_ok=True)
    season.folder.chmod(0o700)
    store = SeasonStore(season.store_path)
    fingerprint = _fingerprint(season, matches)
    known = store.meta("fingerprint")
    if known is None:
        store.set_meta("fingerprint", fingerprint)
        store.set_meta("name", season.name)
        store.set_meta("season_file", str(season.path))
        store.set_meta("settings", json.dumps({
            "table_size": season.table_size, "matches_per_group": season.matches_per_group,
            "duplicate_deals": season.duplicate_deals,
            "rules": season.rules.to_dict(), "limits": season.limits.to_record(),
            "sandbox": season.sandbox.to_dict()}, sort_keys=True))
    elif known != fingerprint:
        store.close()
        raise SeasonError(
            f"{season.path}: the entrants, schedule or rules changed since this season "
            f"started in {season.folder}; give the changed season a new [output] folder")
    ids = [store.entrant_id(m.name, m.version, str(m.folder), m.content_hash(),
                            {"name": m.name, "version": m.version, "author": m.author,
                             "language": m.language, "run": list(m.run),
                             "build": list(m.build), "protocol": m.protocol})
           for m in season.entrants]
    store.schedule(matches, ids)
    return store, ids, matches


def season_key(store: SeasonStore, given: bytes | None = None) -> bytes:
    """The season's secret key: drawn at its first run (or ``given``, to re-run a revealed
    season) and kept in the store, never in the season file, a log or the site until the
    organiser reveals it. Its SHA-256 is published from the start (commit-reveal)."""
    known = store.meta("season_key")
    if known is None:
        key = given if given is not None else secrets.token_bytes(KEY_BYTES)
        store.set_meta("season_key", key.hex())
        store.set_meta("key_commitment", key_commitment(key))
        return key
    key = bytes.fromhex(known)
    if given is not None and given != key:
        raise SeasonError(
            f"{store.path}: this season already has a different key (SHA-256 "
            f"{key_commitment(key)[:16]}…); a key can only be given at the first run")
    return key


def run_season(season: Season, executor: Executor | None = None,
               on_outcome: Callable[[JobOutcome, RunSummary], None] | None = None,
               key: bytes | None = None) -> RunSummary:
    """Play every match not yet recorded; safe to stop at any moment and run again.
    ``key``: the season key to use at the first run (default: a fresh secret one)."""
    store, _, matches = open_store(season)
    try:
        secret = season_key(store, key)
        # Logs of matches that were in flight when an earlier run died.
        for partial in season.logs.glob("*.partial"):
            partial.unlink(missing_ok=True)
        pending = set(store.pending())
        by_id = {m.match_id: m for m in matches}
        needed = {e for m in matches if m.match_id in pending for e in m.seats}
        ready, broken = prepare_entrants(season, needed)
        failures: list[tuple[str, str]] = []
        for match in matches:
            reasons = [broken[e] for e in match.seats if e in broken]
            if match.match_id in pending and reasons:
                store.record_failure(match.match_id, reasons[0])
                failures.append((match.match_id, reasons[0]))
                pending.discard(match.match_id)
        jobs = [
            MatchJob(match_id=m.match_id, seed=MatchSeed.keyed(secret, m.chance),
                     bots=tuple(ready[e] for e in m.seats), rules=season.rules,
                     limits=season.limits, sandbox=season.sandbox,
                     log_path=season.logs / f"{m.match_id}.jsonl.gz",
                     output_dir=season.logs / m.match_id)
            for m in matches if m.match_id in pending and m.match_id in by_id]
        executor = executor or LocalExecutor(season.parallelism, season.pin_cores)
        played = 0
        failed = len(failures)
        already = len(matches) - len(jobs) - failed
        summary = RunSummary(len(matches), already, 0, failed, tuple(failures))
        for outcome in executor.run(jobs):
            if outcome.record is not None:
                store.record(outcome.record)
                played += 1
            else:
                store.record_failure(outcome.match_id, outcome.error or "unknown error")
                failed += 1
                failures.append((outcome.match_id, outcome.error or ""))
            summary = RunSummary(len(matches), already, played, failed, tuple(failures))
            if on_outcome is not None:
                on_outcome(outcome, summary)
        return summary
    finally:
        store.close()


def prepare_entrants(season: Season, needed: set[int]
                     ) -> tuple[list[BotManifest], dict[int, str]]:
    """Run each needed entrant's build step once (sandboxed; reused while its content is
    unchanged). Returns the manifests to play with and, for entrants whose build failed,
    the reason: their matches fail with it and the rest of the season goes on."""
    from arena.sandbox import BuildError, SandboxError, limits_from, prepare

    ready = list(season.entrants)
    broken: dict[int, str] = {}
    limits = limits_from(season.sandbox)
    for index in sorted(needed):
        bot = season.entrants[index]
        if not bot.build:
            continue
        try:
            ready[index] = prepare(bot, season.sandbox.backend, limits, season.folder,
                                   trusted=season.sandbox.trusted_bots)
        except (BuildError, SandboxError) as error:
            broken[index] = f"entrant {bot.label} could not be built: {error}"
    return ready, broken


def leaderboard(store: SeasonStore) -> Leaderboard:
    ids = [int(str(e["id"])) for e in store.entrants()]
    return rate_season(store.results(), ids)
