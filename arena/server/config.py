"""League files: one TOML file says everything about a league server.

    [league]
    name = "spring"
    data = "data/spring"          # the store, uploads, builds and match logs (made 0700)
    host = "127.0.0.1"            # where `arena server` listens
    port = 8080

    [phases]                      # optional times (UTC unless the time says otherwise)
    open_until = 2026-12-01T18:00:00Z     # then frozen: no new submissions
    frozen_until = 2026-12-02T18:00:00Z   # then the final round robin
    # without times, the organiser moves on with `arena server advance LEAGUE.toml PHASE`

    [ladder]
    parallel = 2                  # ladder matches at once
    table_size = 2                # players per match
    placement_matches = 4         # a new version's first matches, played before others'
    max_bots_per_author = 3
    max_running_per_author = 2    # ladder matches at once involving one author's bots
    same_author_matches = false   # may an author's bots meet on the ladder?
    new_version_rating = "fresh"  # or "carry_mean": start at the previous version's mu
    versions_active_per_bot = 1   # older versions beyond this retire (keeping history)

    [final]
    matches_per_group = 4
    duplicate_deals = true        # default at 2 seats, as in a season

    [uploads]
    max_bytes = 5_000_000         # the compressed archive
    max_unpacked_bytes = 50_000_000
    max_files = 2_000
    per_hour = 10                 # submissions an author may make in any hour

    [challenges]                  # unranked matches an author asks for
    per_hour = 6                  # challenges an author may ask for in any hour (0: none)

    [validation]
    matches = 2                   # conformance matches (as `arena check`) before going live
    validators = 1                # versions validated at once, besides the quick lane's own
                                  # validator (default: half the cores)

    [cluster]                     # optional: play the matches on a Dask cluster
    address = "tls://head:8786"   # with tls_ca_file, tls_cert_file, tls_key_file (relative
                                  # to this file); a plain tcp:// address only on this
                                  # machine, or with insecure = true (see the README)

    [rules]    # as in a season file: RuleOptions (the official rules by default)
    [limits]   # as in a season file
    [sandbox]  # as in a season file

Every mistake is reported before the server starts, naming the file, the field and what
was expected.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from arena.league.config_file import TLS_FILES, FileKind, Table
from arena.league.season import MATCH_TABLES, SandboxSettings, check_deals, match_settings
from arena.referee.limits import Limits
from arena.rules.options import RuleOptions

PHASES = ("open", "frozen", "final")
RATING_POLICIES = ("fresh", "carry_mean")


class LeagueError(ValueError):
    """A league file a user must fix."""


@dataclass(frozen=True)
class PhaseTimes:
    open_until: dt.datetime | None = None
    frozen_until: dt.datetime | None = None

    def phase_at(self, now: dt.datetime) -> str:
        """The phase the times alone give at ``now``."""
        if self.frozen_until is not None and now >= self.frozen_until:
            return "final"
        if self.open_until is not None and now >= self.open_until:
            return "frozen"
        return "open"


@dataclass(frozen=True)
class LadderSettings:
    parallel: int = 2
    table_size: int = 2
    placement_matches: int = 4
    max_bots_per_author: int = 3
    max_running_per_author: int = 2
    same_author_matches: bool = False
    new_version_rating: str = "fresh"
    versions_active_per_bot: int = 1


@dataclass(frozen=True)
class FinalSettings:
    matches_per_group: int = 4
    duplicate_deals: bool = True


@dataclass(frozen=True)
class UploadSettings:
    max_bytes: int = 5_000_000
    max_unpacked_bytes: int = 50_000_000
    max_files: int = 2_000
    per_hour: int = 10


@dataclass(frozen=True)
class ChallengeSettings:
    per_hour: int = 6
    """Challenges an author may ask for in any hour; 0 turns challenges off."""


@dataclass(frozen=True)
class ClusterSettings:
    """A Dask cluster for the matches (``arena.league.cluster``); None: local workers."""

    address: str
    tls: tuple[Path, Path, Path] | None = None
    """The CA, certificate and key files the server connects with (a ``tls://`` address)."""
    insecure: bool = False

    def security(self) -> Any:
        """The connection's ``distributed`` Security (None: plain TCP); ClusterSecurityError
        when the address would expose the cluster."""
        from arena.league.cluster import ClusterTLS, cluster_security

        tls = ClusterTLS(*self.tls) if self.tls else None
        return cluster_security(self.address, tls, self.insecure)


@dataclass(frozen=True)
class League:
    name: str
    path: Path
    data: Path
    host: str
    port: int
    phases: PhaseTimes
    ladder: LadderSettings
    final: FinalSettings
    uploads: UploadSettings
    validation_matches: int
    rules: RuleOptions
    limits: Limits
    sandbox: SandboxSettings
    cluster: ClusterSettings | None = None
    challenges: ChallengeSettings = ChallengeSettings()
    validators: int = 1
    """Versions validated at once, each in a worker process of its own, apart from the
    ladder's match workers and beside the quick lane's own validator."""
    public_url: str | None = None
    """Where browsers reach the league (``https://uno.example.org``) when a reverse proxy
    stands before it: a form's Origin is compared with it, as the proxy may rewrite the
    Host header (nginx does by default)."""

    @property
    def store_path(self) -> Path:
        return self.data / "league.sqlite"


def default_validators() -> int:
    """Half this machine's cores, at least one."""
    return max(1, (os.cpu_count() or 2) // 2)


LEAGUE_FILE = FileKind("league file", LeagueError, {
    "league": {"name", "data", "host", "port", "public_url"},
    "phases": {"open_until", "frozen_until"},
    "ladder": {f.name for f in fields(LadderSettings)},
    "final": {f.name for f in fields(FinalSettings)},
    "uploads": {f.name for f in fields(UploadSettings)},
    "validation": {"matches", "validators"},
    "challenges": {f.name for f in fields(ChallengeSettings)},
    "cluster": {"address", *TLS_FILES, "insecure"},
    **MATCH_TABLES,
}, "league")


def _time(table: Table, key: str) -> dt.datetime | None:
    """A TOML date and time (UTC unless it says otherwise), None when not given."""
    value = table.data.get(key)
    if value is None:
        return None
    if not isinstance(value, dt.datetime):
        raise table.error(key, "a TOML date and time (2026-12-01T18:00:00Z)", value)
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def load_league(path: Path | str) -> League:
    """Read and validate a league file; raises LeagueError naming file, field and fix."""
    path = Path(path)
    data = LEAGUE_FILE.read(path)
    league = LEAGUE_FILE.table(path, "league", data["league"])
    name = league.string("name", None, r"[A-Za-z0-9][A-Za-z0-9_.-]*")

    phases = LEAGUE_FILE.table(path, "phases", data.get("phases", {}))
    times = PhaseTimes(_time(phases, "open_until"), _time(phases, "frozen_until"))
    if times.open_until and times.frozen_until and times.frozen_until < times.open_until:
        raise LeagueError(f"{path}: [phases] frozen_until ({times.frozen_until}) is before "
                          f"open_until ({times.open_until})")

    ladder = LEAGUE_FILE.table(path, "ladder", data.get("ladder", {}))
    defaults = LadderSettings()
    ladder_settings = LadderSettings(
        parallel=ladder.integer("parallel", defaults.parallel, 1, 64),
        table_size=ladder.integer("table_size", defaults.table_size, 2, 10),
        placement_matches=ladder.integer("placement_matches", defaults.placement_matches, 0),
        max_bots_per_author=ladder.integer("max_bots_per_author",
                                           defaults.max_bots_per_author, 1),
        max_running_per_author=ladder.integer("max_running_per_author",
                                              defaults.max_running_per_author, 1),
        same_author_matches=ladder.boolean("same_author_matches",
                                           defaults.same_author_matches),
        new_version_rating=ladder.string("new_version_rating", defaults.new_version_rating),
        versions_active_per_bot=ladder.integer("versions_active_per_bot",
                                               defaults.versions_active_per_bot, 1),
    )
    if ladder_settings.new_version_rating not in RATING_POLICIES:
        raise ladder.error("new_version_rating", '"fresh" or "carry_mean"',
                           ladder_settings.new_version_rating)

    final = LEAGUE_FILE.table(path, "final", data.get("final", {}))
    table_size = ladder_settings.table_size
    duplicate = final.boolean("duplicate_deals", table_size == 2)
    per_group = final.integer("matches_per_group", 4 if duplicate else 2, 1)
    if duplicate:
        check_deals(final, per_group, table_size, "the table size", "two-player finals play")

    uploads = LEAGUE_FILE.table(path, "uploads", data.get("uploads", {}))
    upload_defaults = UploadSettings()
    upload_settings = UploadSettings(
        max_bytes=uploads.integer("max_bytes", upload_defaults.max_bytes, 1024),
        max_unpacked_bytes=uploads.integer("max_unpacked_bytes",
                                           upload_defaults.max_unpacked_bytes, 1024),
        max_files=uploads.integer("max_files", upload_defaults.max_files, 1),
        per_hour=uploads.integer("per_hour", upload_defaults.per_hour, 1),
    )
    validation = LEAGUE_FILE.table(path, "validation", data.get("validation", {}))
    challenges = LEAGUE_FILE.table(path, "challenges", data.get("challenges", {}))

    rules, limits, sandbox = match_settings(path, data, LEAGUE_FILE)
    cluster = None
    if "cluster" in data:
        table = LEAGUE_FILE.table(path, "cluster", data["cluster"])
        tls = table.tls_files()
        cluster = ClusterSettings(table.string("address", None), tls,
                                  table.boolean("insecure", False))
        from arena.league.cluster import ClusterSecurityError

        try:
            cluster.security()
        except ClusterSecurityError as error:
            raise LeagueError(f"{path}: [cluster] {error}") from None
    return League(
        name=name, path=path.resolve(),
        data=(path.parent / league.string("data", f"data/{name}")).resolve(),
        host=league.string("host", "127.0.0.1"),
        port=league.integer("port", 8080, 0, 65535),
        phases=times, ladder=ladder_settings,
        final=FinalSettings(matches_per_group=per_group, duplicate_deals=duplicate),
        uploads=upload_settings,
        validation_matches=validation.integer("matches", 2, 1, 20),
        validators=validation.integer("validators", default_validators(), 1, 64),
        rules=rules, limits=limits, sandbox=sandbox, cluster=cluster,
        challenges=ChallengeSettings(challenges.integer("per_hour",
                                                        ChallengeSettings.per_hour, 0, 1000)),
        public_url=(league.string("public_url", None, r"https?://[A-Za-z0-9.:\[\]-]+")
                    if "public_url" in league.data else None),
    )
