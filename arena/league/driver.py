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
from arena.league.store import SeasonStore, StoredResult
from arena.league.tiebreak import next_batch, scheduled_tiebreak
from arena.rating import Leaderboard, Outcome, SeasonRatings, rate
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
    store, ids, matches = open_store(season)
    try:
        secret = season_key(store, key)
        # Logs of matches that were in flight when an earlier run died.
        for partial in season.logs.glob("*.partial"):
            partial.unlink(missing_ok=True)
        pending = set(store.pending())
        # Tie-break matches of a batch in flight when an earlier run stopped come too.
        todo = [m for m in [*matches, *scheduled_tiebreak(store, ids)]
                if m.match_id in pending]
        ready, broken = prepare_entrants(season, {e for m in todo for e in m.seats})
        prepared = {e for m in todo for e in m.seats}
        failures: list[tuple[str, str]] = []
        total = len(matches) + len(scheduled_tiebreak(store, ids))
        played = failed = 0
        already = total - len(todo)
        summary = RunSummary(total, already, 0, 0, ())

        def job(m: ScheduledMatch) -> MatchJob:
            return MatchJob(match_id=m.match_id, seed=MatchSeed.keyed(secret, m.chance),
                            bots=tuple(ready[e] for e in m.seats), rules=season.rules,
                            limits=season.limits, sandbox=season.sandbox,
                            log_path=season.logs / f"{m.match_id}.jsonl.gz",
                            output_dir=season.logs / m.match_id)

        executor = executor or LocalExecutor(season.parallelism, season.pin_cores)
        while True:
            jobs = []
            for match in todo:
                reasons = [broken[e] for e in match.seats if e in broken]
                if reasons:
                    store.record_failure(match.match_id, reasons[0])
                    failures.append((match.match_id, reasons[0]))
                    failed += 1
                else:
                    jobs.append(job(match))
            summary = RunSummary(total, already, played, failed, tuple(failures))
            for outcome in executor.run(jobs):
                if outcome.record is not None:
                    store.record(outcome.record)
                    played += 1
                else:
                    store.record_failure(outcome.match_id, outcome.error or "unknown error")
                    failed += 1
                    failures.append((outcome.match_id, outcome.error or ""))
                summary = RunSummary(total, already, played, failed, tuple(failures))
                if on_outcome is not None:
                    on_outcome(outcome, summary)
            # The tie-break stage (when the file asks for it): a batch at a time, each
            # decided from the standings after the previous one; not after a failure.
            if failed:
                break
            todo = next_batch(season, store, season_ratings(store).official, ids)
            if not todo:
                break
            store.schedule(todo, ids)
            total += len(todo)
            more = {e for m in todo for e in m.seats} - prepared
            if more:
                built, newly_broken = prepare_entrants(season, more)
                for e in more:
                    ready[e] = built[e]
                broken.update(newly_broken)
                prepared |= more
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
            ready[index] = prepare(bot, season.sandbox.backend, limits, season.folder)
        except (BuildError, SandboxError) as error:
            broken[index] = f"entrant {bot.label} could not be built: {error}"
    return ready, broken


def outcome_of(result: StoredResult, chance: str) -> Outcome:
    """A stored result as the rating code reads it; ``chance`` is its match's deal label
    (shared by the matches of a duplicate deal, which the bootstrap resamples together)."""
    return Outcome(result.match_id, result.entrant_id, result.seat, result.place,
                   result.score, result.rounds_won, result.strikes, result.disqualified,
                   result.faults, chance if chance != result.match_id else "")


def season_outcomes(store: SeasonStore) -> list[Outcome]:
    chances = {str(m["match_id"]): str(m["chance"]) for m in store.matches()}
    return [outcome_of(r, chances.get(r.match_id, r.match_id)) for r in store.results()]


def season_ratings(store: SeasonStore) -> SeasonRatings:
    """The live TrueSkill and the official standings of the results recorded so far."""
    ids = [int(str(e["id"])) for e in store.entrants()]
    return rate(season_outcomes(store), ids)


def leaderboard(store: SeasonStore) -> Leaderboard:
    """The live TrueSkill (schedule order, draw probability calibrated from the ties)."""
    from arena.rating import calibrated_draw_probability, rate_season

    ids = [int(str(e["id"])) for e in store.entrants()]
    outcomes = season_outcomes(store)
    return rate_season(outcomes, ids, calibrated_draw_probability(outcomes))
