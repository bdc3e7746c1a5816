"""The server's validators: ``[validation] validators`` threads and one more for the quick
lane, each with its own store connection and worker process (``Validator``), taking queued
versions as the queue says (``arena.server.queue``), apart from the ladder's match
workers.

A version whose validation key matches one already validated gets that version's result
at once, named as such: identical sources are not built or checked again. What an author
reads of a build or a check names no server path (``arena.server.shown``).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import arena
from arena.sandbox import BotManifest, ManifestError, load_manifest
from arena.sandbox.build import toolchain_identity
from arena.sandbox.fetch import ecosystems_of, owner_state
from arena.sandbox.trees import remove_tree
from arena.server.config import League
from arena.server.shown import ServerPaths
from arena.server.store import LeagueStore
from arena.server.validation import ValidationJob, Validator

IDLE_SECONDS = 0.3
def lane_of(manifest: BotManifest) -> str:
    """A bot with no build step and no dependencies to fetch is checked in the quick lane."""
    return "build" if manifest.build or ecosystems_of(manifest) else "quick"


def owner_name(author_id: int) -> str:
    """Whose compiler caches and Maven repository an author's builds use
    (``arena.sandbox.pipeline``)."""
    return f"author-{author_id}"


def validation_key(content_hash: str, manifest: BotManifest, league: League,
                   author_id: int) -> str:
    """What a version's validation result depends on: its sources, how it is built and
    run, the toolchains (as the build cache knows them: ``toolchain_identity``), and the
    league's rules, limits, sandbox and check matches; and its author, where its build
    reads what the author's earlier builds left (``owner_state``)."""
    parts = {"sources": content_hash, "build": manifest.build, "run": manifest.run,
             "owner": owner_name(author_id) if owner_state(manifest) else None,
             "language": manifest.language, "protocol": manifest.protocol,
             "arena": arena.__version__, "toolchain": toolchain_identity(),
             "rules": repr(league.rules),
             "limits": repr(league.limits), "sandbox": repr(league.sandbox),
             "matches": league.validation_matches}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class Validators:
    """The validation threads; each runs ``guarded(loop)``, which restarts it after a
    failure of its own."""

    def __init__(self, league: League, stop_event: threading.Event,
                 guarded: Callable[[Callable[[], None]], None]) -> None:
        self.league = league
        self.stop_event = stop_event
        self.guarded = guarded
        self.paths = ServerPaths(league.data)
        self.workers = [Validator() for _ in range(league.validators + 1)]
        """The last takes quick checks only."""
        self.doing: dict[str, tuple[int, float]] = {}
        """What each validation thread (by name) validates now: the version's id and when
        it was taken (for the organiser's page)."""

    def names(self) -> list[str]:
        """The validation threads' names, by worker (the last: the quick lane's)."""
        return [f"arena-validation-{index + 1}" for index in range(len(self.workers) - 1)
                ] + ["arena-validation-quick"]

    def start(self) -> list[threading.Thread]:
        threading.Thread(target=toolchain_identity, name="arena-toolchain", daemon=True).start()
        threads = []
        for index, (worker, name) in enumerate(zip(self.workers, self.names(), strict=True)):
            quick = index == len(self.workers) - 1
            thread = threading.Thread(target=self.guarded,
                                      args=(functools.partial(self._loop, worker, quick),),
                                      name=name, daemon=True)
            thread.start()
            threads.append(thread)
        return threads

    def close(self) -> None:
        for worker in self.workers:
            worker.close()

    def shown(self, text: str) -> str:
        return self.paths.mask(text)

    def _loop(self, worker: Validator, quick_only: bool) -> None:
        store = LeagueStore(self.league.store_path)
        try:
            while not self.stop_event.is_set():
                self._classify(store)
                taken = store.claim(quick_only)
                if taken is None:
                    self.stop_event.wait(IDLE_SECONDS)
                    continue
                version_id = taken[0]
                version = store.version(version_id)
                if version is None:
                    continue
                name = threading.current_thread().name
                self.doing[name] = (version_id, time.time())
                try:
                    self._validate(store, worker, version_id, version.content_hash,
                                   Path(version.folder))
                except (ManifestError, OSError) as error:  # its stored sources are damaged
                    store.stage(version_id, "failed", build_log=self.shown(
                        f"the stored sources cannot be used: {error}"))
                finally:
                    self.doing.pop(name, None)
        finally:
            store.close()

    def _classify(self, store: LeagueStore) -> None:
        """Put the newly queued versions in their lanes, with their validation keys."""
        for version_id, folder in store.unclassified():
            version = store.version(version_id)
            if version is None:
                continue
            try:
                manifest = load_manifest(Path(folder))
            except (ManifestError, OSError) as error:
                store.set_status(version_id, "failed", build_log=self.shown(
                    f"the stored sources cannot be used: {error}"))
                continue
            store.classify(version_id, lane_of(manifest),
                           validation_key(version.content_hash, manifest, self.league,
                                          version.author_id))

    def _validate(self, store: LeagueStore, worker: Validator, version_id: int,
                  content_hash: str, folder: Path) -> None:
        if self._reuse(store, version_id):
            return
        logs = self.league.data / "validation" / str(version_id)
        logs.mkdir(parents=True, exist_ok=True)
        version = store.version(version_id)
        owner = owner_name(version.author_id) if version is not None else None
        job = ValidationJob(version_id, load_manifest(folder), self.league.sandbox, logs,
                            self.league.data / "builds", self.league.validation_matches,
                            self.league.rules, self.league.limits, owner)
        built = worker.build(job)
        if self.stop_event.is_set():
            return  # queued again at the next start
        if built.built is None:
            store.stage(version_id, "failed", build_log=self.shown(built.log))
            return
        store.stage(version_id, "checking", build_log=self.shown(built.log))
        checked = worker.check(job, built.built)
        if self.stop_event.is_set():
            return
        if not checked.passed:
            store.stage(version_id, "failed", check_report=self.shown(checked.report))
            self._drop_build(store, built.built.folder)
            return
        self._activate(store, version_id, self.shown(checked.report), built.built.folder)

    def _activate(self, store: LeagueStore, version_id: int, report: str,
                  play_folder: Path) -> None:
        with store.transaction() as db:
            db.execute("UPDATE versions SET check_report = ?, play_folder = ? WHERE id = ?",
                       (report, str(play_folder), version_id))
        store.activate(version_id, self.league.ladder.versions_active_per_bot)
        store.finished(version_id)

    def _reuse(self, store: LeagueStore, version_id: int) -> bool:
        """Give the version the result of an earlier one with its validation key, if any
        (one that played from a build since removed is validated again)."""
        source = store.reusable(version_id)
        if source is None:
            return False
        active = source["status"] != "failed"
        if active and not (source["play_folder"] and Path(source["play_folder"]).exists()):
            return False
        when = dt.datetime.fromtimestamp(source["finished_at"], dt.UTC)
        note = (f"the same sources, build and toolchains as {source['bot']} version "
                f"{source['number']} (validated {when:%Y-%m-%d %H:%M} UTC): its result is "
                "reused, nothing was built or checked again\n")
        build_log = note + source["build_log"]
        check_report = note + source["check_report"] if source["check_report"] else ""
        store.note_reuse(version_id, source["id"])
        if active:
            store.set_status(version_id, "checking", build_log=build_log)
            self._activate(store, version_id, check_report, Path(source["play_folder"]))
        else:
            store.stage(version_id, "failed", build_log=build_log, check_report=check_report)
        return True

    def _drop_build(self, store: LeagueStore, folder: Path) -> None:
        """Remove the build of a version that failed its check, unless a version plays from
        it: otherwise 267 bytes of upload would leave 512 MB of build for good (the same
        sources submitted again take the failure without a build)."""
        builds = (self.league.data / "builds").resolve()
        if folder.resolve().parent != builds:
            return  # not a build (a bot with no build step plays from its stored sources)
        if store.db.execute("SELECT 1 FROM versions WHERE play_folder = ?",
                            (str(folder),)).fetchone():
            return
        remove_tree(folder)
        folder.with_name(f"{folder.name}.sha256").unlink(missing_ok=True)
