"""Running a season: schedule, resume from the store, execute, record, rate.

A run holds the season's output folder (``arena.league.lock``), sweeps what killed runs
left behind (``arena.sandbox.sweep``), checks that the store belongs to this season file,
builds and probes every entrant that has matches to play (``arena.league.preflight``: one
broken entrant refuses the season before any match), then records each match's result as
it comes. A run stopped by a signal or a full disk records nothing half-done: run again to
resume.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.league.executor import Executor, JobOutcome, LocalExecutor, MatchJob, host_trouble
from arena.league.fingerprint import (
    INPUTS_KEY,
    SeasonChanged,
    fingerprint_inputs,
    season_changes,
    season_fingerprint,
    season_schedule,
)
from arena.league.lock import SeasonLock
from arena.league.outcomes import season_outcomes
from arena.league.preflight import ProbeJob, describe_broken
from arena.league.schedule import ScheduledMatch
from arena.league.season import Season, SeasonError
from arena.league.store import SeasonStore, StoreError, match_log, store_trouble
from arena.league.tiebreak import next_batch, scheduled_tiebreak
from arena.rating import Leaderboard, SeasonRatings, rate
from arena.rules.options import unsupported_message
from arena.rules.seeds import KEY_BYTES, MatchSeed, key_commitment
from arena.sandbox.manifest import BotManifest


class EntrantsRefused(SeasonError):
    """Entrants that cannot play (build failed, no hello): the season was not started."""


class RunStopped(Exception):
    """The run cannot go on (a full disk ...): nothing half-done; run again to resume."""


@dataclass(frozen=True)
class RunSummary:
    scheduled: int
    already_done: int
    played: int
    failed: int
    failures: tuple[tuple[str, str], ...]


def open_store(season: Season
               ) -> tuple[SeasonStore, list[int], Sequence[ScheduledMatch]]:
    """Open (or create) the season's store for a run and check it belongs to this season
    file (SeasonChanged if not; StoreError for a damaged store)."""
    matches = season_schedule(season)
    # The store, the logs and the bots' output are the organiser's: no bot may read them
    # (a bot under the fallback sandbox sees what others may read).
    season.folder.mkdir(parents=True, exist_ok=True)
    season.folder.chmod(0o700)
    store = SeasonStore(season.store_path)
    try:
        known, inputs = store.meta("fingerprint"), fingerprint_inputs(season)
        if known is not None and store.meta(INPUTS_KEY) == inputs:
            fingerprint = known  # the same inputs give the same fingerprint
        else:
            fingerprint = season_fingerprint(season, matches)
        if known is None:
            store.set_metas({
                "fingerprint": fingerprint,
                INPUTS_KEY: inputs,
                "name": season.name,
                "season_file": str(season.path),
                "entrant_folders": json.dumps([str(m.folder) for m in season.entrants]),
                "settings": json.dumps({
                    "table_size": season.table_size,
                    "matches_per_group": season.matches_per_group,
                    "duplicate_deals": season.duplicate_deals,
                    "rules": season.rules.to_dict(), "limits": season.limits.to_record(),
                    "sandbox": season.sandbox.to_dict()}, sort_keys=True)})
        elif known != fingerprint:
            raise SeasonChanged(season_changes(season, store, matches).message(season))
        elif store.meta(INPUTS_KEY) != inputs:  # an older version's store, or changed code
            store.set_meta(INPUTS_KEY, inputs)
        ids = [store.entrant_id(m.name, m.version, str(m.folder), m.content_hash(),
                                {"name": m.name, "version": m.version, "author": m.author,
                                 "language": m.language, "run": list(m.run),
                                 "build": list(m.build), "protocol": m.protocol})
               for m in season.entrants]
        # The schedule is recorded again only when it or the entrant versions changed (a
        # resumed 79,600-match season spent seconds rewriting the same rows).
        stamp = hashlib.sha256(f"{fingerprint}:{ids}".encode()).hexdigest()
        if store.meta("schedule_stamp") != stamp:
            store.schedule(matches, ids, stamp)
    except BaseException:
        store.close()
        raise
    return store, ids, matches


def season_key(store: SeasonStore, given: bytes | None = None) -> bytes:
    """The season's secret key: drawn at its first run (or ``given``, to re-run a revealed
    season) and kept in the store, never in the season file, a log or the site until the
    organiser reveals it. Its SHA-256 is published from the start (commit-reveal)."""
    known = store.meta("season_key")
    if known is None:
        key = given if given is not None else secrets.token_bytes(KEY_BYTES)
        store.set_metas({"season_key": key.hex(), "key_commitment": key_commitment(key)})
        return key
    key = bytes.fromhex(known)
    if given is not None and given != key:
        raise SeasonError(
            f"{store.path}: this season already has a different key (SHA-256 "
            f"{key_commitment(key)[:16]}…); a key can only be given at the first run")
    return key


def check_variant_support(season: Season) -> None:
    """Refuse, before any match, a season with a variant (docs/rules.md §21-§32) that an entrant
    does not declare in its bot.toml: SeasonError naming each such bot and variant."""
    problems = [unsupported_message(f"entrant {bot.label} ({bot.folder})", season.rules,
                                    bot.variants) for bot in season.entrants]
    if any(problems):
        raise SeasonError(f"{season.path}: [rules] " + "; ".join(filter(None, problems)))


def _folder_trouble(season: Season, error: OSError) -> StoreError:
    """An output folder the run cannot write (or a full disk)."""
    where = Path(error.filename or season.folder)
    if host_trouble(error) is not None and error.errno not in (errno.EROFS,):
        return store_trouble(where, error)
    return StoreError(f"{where}: cannot write the season's output folder ({error.strerror}); "
                      "give the season an [output] folder it may write")


def run_season(season: Season, executor: Executor | None = None,
               on_outcome: Callable[[JobOutcome, RunSummary], None] | None = None,
               on_note: Callable[[str], None] | None = None,
               on_start: Callable[[RunSummary], None] | None = None,
               key: bytes | None = None) -> RunSummary:
    """Play every match not yet recorded; safe to stop at any moment and run again.
    ``key``: the season key to use at the first run (default: a fresh secret one).
    ``on_start`` hears what is to play (once the season is held and its store checked),
    ``on_note`` what is being done before the first match, ``on_outcome`` each match.
    When the season file asks for a tie-break stage, its batches follow the schedule.

    Raises SeasonBusy (another run holds the season), SeasonChanged, StoreError (a damaged
    store, an unwritable folder), EntrantsRefused (nothing was played) or RunStopped (a full
    disk: what was recorded stays, the rest waits for the next run)."""
    from arena.sandbox.sweep import sweep_leftovers

    check_variant_support(season)
    executor = executor or LocalExecutor(season.parallelism, season.pin_cores)
    lock = SeasonLock(season.folder)
    try:
        lock.acquire()
    except OSError as error:
        raise _folder_trouble(season, error) from None
    try:
        sweep_leftovers()
        store, ids, matches = open_store(season)
        try:
            secret = season_key(store, key)
            return _run(season, store, ids, matches, secret, executor, on_outcome, on_note,
                        on_start)
        finally:
            store.close()
    finally:
        executor.shutdown()
        lock.release()


def _run(season: Season, store: SeasonStore, ids: list[int], matches: Sequence[ScheduledMatch],
         secret: bytes, executor: Executor,
         on_outcome: Callable[[JobOutcome, RunSummary], None] | None,
         on_note: Callable[[str], None] | None,
         on_start: Callable[[RunSummary], None] | None) -> RunSummary:
    # Logs of matches that were in flight when an earlier run died (no run holds the
    # season but this one: the lock says so).
    try:
        for partial in season.logs.glob("*.partial"):
            partial.unlink(missing_ok=True)
        season.logs.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _folder_trouble(season, error) from None
    # Tie-break matches of a batch in flight when an earlier run stopped come too.
    staged = scheduled_tiebreak(store, ids)
    # The store holds the schedule and the tie-break matches, no other (the fingerprint).
    total = len(matches) + len(staged)
    counts = store.counts()
    already = total - counts["scheduled"] - counts["failed"]
    if on_start is not None:
        on_start(RunSummary(total, already, 0, 0, ()))
    prepared = entrants_to_play(pending_matches(store, itertools.chain(matches, staged)),
                                len(ids))
    ready = check_entrants(season, prepared, executor, on_note)
    played = failed = 0
    failures: list[tuple[str, str]] = []
    summary = RunSummary(total, already, 0, 0, ())
    todo: Iterable[ScheduledMatch] = pending_matches(store, itertools.chain(matches, staged))
    while True:
        # Read match by match as the executor pulls them (the schedule is computed as it is
        # read): no list of the matches or the jobs still to play.
        jobs = season_jobs(season, todo, secret, ready)
        outcomes = executor.run(jobs)
        try:
            for outcome in outcomes:
                if outcome.stop is not None:
                    raise RunStopped(f"{outcome.stop}; match {outcome.match_id} was not "
                                     "recorded: fix that, then run the same command again to "
                                     "resume")
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
        except OSError as error:  # the driver's own writes (logs shipped back by a cluster)
            trouble = host_trouble(error)
            if trouble is None:
                raise
            raise RunStopped(f"{trouble}: fix that, then run the same command again to "
                             "resume") from None
        finally:
            close = getattr(outcomes, "close", None)
            if close is not None:
                close()
        # The tie-break stage (when the file asks for it): a batch at a time, each decided
        # from the standings after the previous one; not after a failure.
        if failed:
            return summary
        batch = next_batch(season, store, season_ratings(store).official, ids)
        if not batch:
            return summary
        store.schedule(batch, ids)
        total += len(batch)
        todo = batch
        more = {e for m in batch for e in m.seats} - prepared
        if more:
            checked = check_entrants(season, more, executor, on_note)
            for entrant in more:
                ready[entrant] = checked[entrant]
            prepared |= more


PENDING_CHUNK = 1000
"""Scheduled matches whose state is asked of the store at once."""


def pending_matches(store: SeasonStore, matches: Iterable[ScheduledMatch]
                    ) -> Iterator[ScheduledMatch]:
    """The matches not played yet, in schedule order, their state asked of the store a
    chunk at a time: a resumed run of 80,000 matches holds a chunk's ids, not the season's."""
    matches = iter(matches)
    while chunk := list(itertools.islice(matches, PENDING_CHUNK)):
        pending = store.pending_among([match.match_id for match in chunk])
        yield from (match for match in chunk if match.match_id in pending)


def entrants_to_play(pending: Iterable[ScheduledMatch], entrants: int) -> set[int]:
    """The entrants with a match still to play; read as the schedule is, stopping once every
    entrant has one (at a first run, within the first round)."""
    needed: set[int] = set()
    for match in pending:
        needed.update(match.seats)
        if len(needed) == entrants:
            break
    return needed


def season_jobs(season: Season, matches: Iterable[ScheduledMatch], secret: bytes,
                ready: Sequence[BotManifest]) -> Iterator[MatchJob]:
    """Each match's job, made as the executor asks for it (in ``matches``' order)."""
    for m in matches:
        yield MatchJob(match_id=m.match_id, seed=MatchSeed.keyed(secret, m.chance),
                       bots=tuple(ready[e] for e in m.seats), rules=season.rules,
                       limits=season.limits, sandbox=season.sandbox,
                       log_path=match_log(season.folder, m.match_id),
                       output_dir=season.logs / m.match_id)


def check_entrants(season: Season, needed: set[int], executor: Executor,
                   on_note: Callable[[str], None] | None = None) -> list[BotManifest]:
    """Build every needed entrant, then start each once where the matches run; the
    manifests to play with. EntrantsRefused, naming every broken entrant, if any is."""
    ready, broken = prepare_entrants(season, needed)
    probed = sorted(e for e in needed if e not in broken)
    if on_note is not None and probed:
        on_note(f"checking that {len(probed)} entrant(s) start and say hello")
    try:
        reasons = executor.probe([ProbeJob(ready[e], season.sandbox, season.limits,
                                           season.folder / "probe") for e in probed])
    except Exception as error:  # the probe's worker died (OOM killer ...), a cluster error
        raise RunStopped(f"the entrants could not be checked before the first match "
                         f"({error!r}); run the same command again") from None
    for entrant, reason in zip(probed, reasons, strict=True):
        if reason is not None:
            broken[entrant] = reason
    if broken:
        entrants = [(season.entrants[e], broken[e]) for e in sorted(broken)]
        raise EntrantsRefused(
            f"{season.path}: {len(entrants)} entrant(s) cannot play, so no match was played: "
            f"{describe_broken(entrants)}; fix them (or remove them from the entrants), "
            "then run again")
    return ready


def prepare_entrants(season: Season, needed: set[int] | Sequence[int]
                     ) -> tuple[list[BotManifest], dict[int, str]]:
    """Run each needed entrant's build step once (sandboxed; reused while its content is
    unchanged). Returns the manifests to play with and, for entrants whose build failed,
    the reason."""
    from arena.sandbox import ManifestError, SandboxError, limits_from, prepare

    ready = list(season.entrants)
    broken: dict[int, str] = {}
    limits = limits_from(season.sandbox)
    for index in sorted(needed):
        bot = season.entrants[index]
        try:  # built, or (no build step) exactly its sources, as its version hashes them
            ready[index] = prepare(bot, season.sandbox.backend, limits, season.folder,
                                   trusted=season.sandbox.trusted_bots)
        except (ManifestError, SandboxError) as error:  # a BuildError is a ManifestError
            lines = str(error).strip().splitlines() or [repr(error)]
            said = [line.strip(" |") for line in lines[1:]
                    if line.strip(" |") and line.strip() != "(no output)"]
            broken[index] = (lines[0].removeprefix(f"bot {bot.label} ({bot.folder}): ")
                             .rstrip(":") + (f"; its last words: {said[-1]}" if said else ""))
        except OSError as error:
            broken[index] = f"the build could not run: {error}"
    return ready, broken


def season_ratings(store: SeasonStore) -> SeasonRatings:
    """The live TrueSkill and the official standings of the results recorded so far."""
    names = {int(str(e["id"])): str(e["name"]) for e in store.entrants()}
    return rate(season_outcomes(store), list(names), names=names)


def leaderboard(store: SeasonStore) -> Leaderboard:
    """The live TrueSkill (schedule order, draw probability calibrated from the ties)."""
    from arena.rating import calibrated_draw_probability, rate_season

    ids = [int(str(e["id"])) for e in store.entrants()]
    outcomes = season_outcomes(store)
    return rate_season(outcomes, ids, calibrated_draw_probability(outcomes))
