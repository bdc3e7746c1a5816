"""Season files: one TOML file says everything about a league season.

    [season]
    name = "sample"
    table_size = 2             # players per match, 2..10
    matches_per_group = 4      # per pair at 2-player tables, per group of k otherwise
    duplicate_deals = true     # each deal once per seat rotation (default at 2 seats)
    parallelism = 2            # matches at once (default: the cores this process may use)
    pin_cores = true           # workers filling the cores get one core each (see executor)
    entrants = ["python/*"]    # bot folders or globs, relative to this file
    # executor = "dask"; cluster = "tls://head:8786" with tls_ca_file, tls_cert_file and
    # tls_key_file (relative to this file); insecure_cluster = true for plain TCP to
    # another machine on a private network (see the README's cluster section)

    [rules]                    # RuleOptions; the official rules by default
    target_score = 500

    [limits]                   # per match, docs/rules.md §20 + resources
    decision_deadline = 1.0
    time_bank = 10.0

    [sandbox]
    backend = "bubblewrap"
    build_network = false      # true: build steps reach registries (never the host)
    build_hosts = []           # hosts beyond the known registries ("npm.example.org")
    fetch = true               # dependencies from lockfiles, fetched before builds run
    registries = {}            # a mirror or "" (none) per ecosystem: { npm = "https://..." }
    trusted_bots = false       # true: the fallback sandbox may run them (see arena/sandbox)
    off_turn = "throttle"      # a bot off turn: "throttle" (1% of a core), "freeze", "run"

    [tiebreak]                 # optional: separate entrants the standings cannot
    enabled = true             # extra matches among entrants whose rank intervals overlap
    max_matches = 200          # at most this many extra matches in all
    batch = 2                  # matches per pair (or group) between two checks

    [output]
    folder = "runs/sample"     # season store and match logs
    report = "reports/sample"

Every mistake is reported before any match is played, naming the file, the field and what
was expected.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from arena.league.config_file import TLS_FILES, FileKind, Table
from arena.league.schedule import too_large
from arena.referee.limits import MOST_STRIKES, SECONDS_RANGES, Limits
from arena.rules.options import RuleOptions
from arena.sandbox.limits import MOST
from arena.sandbox.manifest import BotManifest, ManifestError, load_manifest
from arena.text import lookalike_key

EXECUTORS = ("local", "dask")


class SeasonError(ValueError):
    """A season file a user must fix."""


@dataclass(frozen=True)
class SandboxSettings:
    backend: str = "bubblewrap"
    memory_mb: int = 768
    processes: int = 64
    cpu_seconds: int = 600
    build_network: bool = False
    """Build steps may reach package registries (npm ci), through a network namespace of
    their own that does not reach the host (``arena.sandbox.network``). Off by default, as
    in ``arena check`` and ``arena play``: a bot fetches its dependencies into its folder
    beforehand (``arena vendor``), so the season builds it offline. Bots never have a
    network."""
    build_hosts: tuple[str, ...] = ()
    """Hosts an online build may reach beyond the package registries: a mirror, a private
    registry (``arena.sandbox.SandboxLimits.build_hosts``)."""
    build_seconds: int = 600
    fetch: bool = True
    """Fetch each bot's dependencies from its lockfile before its build, from the
    registries alone (``arena.sandbox.fetch``); false: builds use what ``arena vendor`` put
    in the bot folders."""
    registries: tuple[tuple[str, str], ...] = ()
    """Registries that replace the standard ones of the fetch step, by ecosystem (npm, go,
    cargo, maven, pip); "" fetches nothing for one (``arena.sandbox.SandboxLimits.registries``)."""
    off_turn: str = "throttle"
    """What a bot may do off turn: "throttle" (1% of a core), "freeze" or "run"
    (``arena.sandbox.SandboxLimits.off_turn``)."""
    trusted_bots: bool = False
    """The organiser trusts every entrant: only then may the weaker fallback sandbox run
    them (``arena.sandbox.make_launcher``), chosen or because bubblewrap cannot run."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class TiebreakSettings:
    """The tie-break stage (``arena.league.tiebreak``): off unless the file turns it on."""

    enabled: bool = False
    max_matches: int = 200
    """Extra matches in all, at most: the cap of the sequential test."""
    batch: int = 2
    """Matches per pair (or group) of tied entrants between two checks of the standings."""


@dataclass(frozen=True)
class Season:
    name: str
    path: Path
    table_size: int
    matches_per_group: int
    duplicate_deals: bool
    parallelism: int
    pin_cores: bool
    """Pin each worker, and the match it plays, to a core of its own when the workers fill
    the cores (``arena.league.executor.core_plan``)."""
    executor: str
    cluster: str | None
    cluster_tls: tuple[Path, Path, Path] | None
    """With a ``tls://`` cluster: the CA, certificate and key files the driver connects with."""
    insecure_cluster: bool
    """Use a plain-TCP cluster address on another machine (a network private to the cluster)."""
    shared_bots: bool
    """With the dask executor: workers see the bot folders at the same paths (no shipping)."""
    entrants: tuple[BotManifest, ...]
    rules: RuleOptions
    limits: Limits
    sandbox: SandboxSettings
    folder: Path
    report: Path
    tiebreak: TiebreakSettings = TiebreakSettings()
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def store_path(self) -> Path:
        return self.folder / "season.sqlite"

    @property
    def logs(self) -> Path:
        return self.folder / "logs"


MATCH_TABLES = {
    "rules": {f.name for f in fields(RuleOptions)},
    "limits": {f.name for f in fields(Limits)},
    "sandbox": {f.name for f in fields(SandboxSettings)},
}
"""The tables of a file that plays matches (a season file, a league file), with their
fields: ``match_settings`` reads them."""
SEASON_FILE = FileKind("season file", SeasonError, {
    "season": {"name", "table_size", "matches_per_group", "matches_per_pairing",
               "duplicate_deals", "parallelism", "pin_cores", "entrants", "executor",
               "cluster", "shared_bots", *TLS_FILES, "insecure_cluster"},
    **MATCH_TABLES,
    "output": {"folder", "report"},
    "tiebreak": {f.name for f in fields(TiebreakSettings)},
}, "season")


def _entrants(path: Path, reader: Table) -> tuple[BotManifest, ...]:
    patterns = reader.data.get("entrants")
    if not isinstance(patterns, list) or not patterns or not all(
        isinstance(p, str) and p and "\0" not in p for p in patterns
    ):
        raise reader.error("entrants", "a list of bot folders or globs", patterns)
    folders: list[Path] = []
    for pattern in patterns:
        full = path.parent / pattern
        if glob.has_magic(pattern):
            matches = sorted(Path(p) for p in glob.glob(str(full)) if Path(p).is_dir()
                             and (Path(p) / "bot.toml").is_file())
            if not matches:
                raise SeasonError(f"{path}: [season] entrants: {pattern!r} matches no bot "
                                  "folder (a folder with a bot.toml)")
            folders += matches
        else:
            if not full.is_dir():
                raise SeasonError(f"{path}: [season] entrants: bot folder {pattern!r} does not "
                                  f"exist ({full})")
            folders.append(full)
    manifests = []
    seen: dict[Path, str] = {}
    for folder in folders:
        resolved = folder.resolve()
        if resolved in seen:
            raise SeasonError(f"{path}: [season] entrants: {folder} is listed twice")
        try:
            manifest = load_manifest(resolved)
        except ManifestError as error:
            raise SeasonError(f"{path}: [season] entrants: {error}") from None
        seen[resolved] = manifest.name
        manifests.append(manifest)
    keys = [lookalike_key(m.name) for m in manifests]
    duplicates = sorted({m.name for m, key in zip(manifests, keys, strict=True)
                         if keys.count(key) > 1})
    if duplicates:
        raise SeasonError(f"{path}: [season] entrants: bot name(s) {', '.join(duplicates)} "
                          "used by more than one folder, or reading alike (by case, "
                          "spacing, a letter's form or letters that look alike: l, I and "
                          "1, O and 0, Cyrillic a and Latin a); names must be unique in a "
                          "season")
    return tuple(manifests)


def overlap(first: Path, second: Path) -> bool:
    """Whether two folders (resolved) are one, or one lies inside the other."""
    return first == second or first.is_relative_to(second) or second.is_relative_to(first)


def _check_folders(path: Path, folder: Path, report: Path,
                   entrants: tuple[BotManifest, ...]) -> None:
    """The output folder (the store with the season's key, logs of matches in play, the
    bots' output), the report folder (published) and the bots' folders (shown to their
    sandboxes) must be apart: none inside another."""
    if overlap(folder, report):
        raise SeasonError(
            f"{path}: [output] folder ({folder}) and report ({report}) overlap: the site "
            "would publish the season's store (its key, which gives away every deal to come) "
            "and the logs of matches in play; give them folders apart")
    for entrant in entrants:
        for what, where in (("folder", folder), ("report", report)):
            if overlap(where, entrant.folder.resolve()):
                raise SeasonError(
                    f"{path}: [output] {what} ({where}) and the bot folder of "
                    f"{entrant.name} ({entrant.folder}) overlap: a bot's sandbox is shown "
                    "its folder, and the season writes its own files; keep them apart")


def match_settings(path: Path, data: dict[str, Any], kind: FileKind = SEASON_FILE
                   ) -> tuple[RuleOptions, Limits, SandboxSettings]:
    """The ``[rules]``, ``[limits]`` and ``[sandbox]`` tables (``MATCH_TABLES``) of a file
    that plays matches: ``kind``'s error naming the file and field."""
    rules_reader = kind.table(path, "rules", data.get("rules", {}))
    try:
        rules = RuleOptions.from_dict(rules_reader.data)
    except (TypeError, ValueError) as error:
        raise kind.error(f"{path}: [rules] {error}") from None
    limits_reader = kind.table(path, "limits", data.get("limits", {}))
    defaults = Limits()
    limits = Limits(
        decision_deadline=limits_reader.number("decision_deadline", defaults.decision_deadline,
                                               *SECONDS_RANGES["decision_deadline"]),
        time_bank=limits_reader.number("time_bank", defaults.time_bank,
                                       *SECONDS_RANGES["time_bank"]),
        strike_limit=limits_reader.integer("strike_limit", defaults.strike_limit, 1,
                                           MOST_STRIKES),
        hello_timeout=limits_reader.number("hello_timeout", defaults.hello_timeout,
                                           *SECONDS_RANGES["hello_timeout"]),
    )
    sandbox_reader = kind.table(path, "sandbox", data.get("sandbox", {}))
    sandbox_defaults = SandboxSettings()
    sandbox = SandboxSettings(
        backend=sandbox_reader.string("backend", sandbox_defaults.backend),
        memory_mb=sandbox_reader.integer("memory_mb", sandbox_defaults.memory_mb, 64,
                                         MOST["memory_mib"]),
        processes=sandbox_reader.integer("processes", sandbox_defaults.processes, 1,
                                         MOST["processes"]),
        cpu_seconds=sandbox_reader.integer("cpu_seconds", sandbox_defaults.cpu_seconds, 1,
                                           MOST["cpu_seconds"]),
        build_network=sandbox_reader.boolean("build_network", sandbox_defaults.build_network),
        build_hosts=sandbox_reader.host_names("build_hosts"),
        build_seconds=sandbox_reader.integer("build_seconds", sandbox_defaults.build_seconds, 1,
                                             MOST["build_seconds"]),
        fetch=sandbox_reader.boolean("fetch", sandbox_defaults.fetch),
        registries=sandbox_reader.registries("registries"),
        trusted_bots=sandbox_reader.boolean("trusted_bots", sandbox_defaults.trusted_bots),
        off_turn=sandbox_reader.string("off_turn", sandbox_defaults.off_turn,
                                       "throttle|freeze|run"),
    )
    from arena.sandbox import BACKENDS

    if sandbox.backend not in BACKENDS:
        raise sandbox_reader.error("backend", " or ".join(f'"{b}"' for b in BACKENDS),
                                   sandbox.backend)
    return rules, limits, sandbox


def check_deals(table: Table, per_group: int, table_size: int, size: str, default: str
                ) -> None:
    """With duplicate deals each deal is played once per seat rotation, so the table's
    ``matches_per_group`` must be a multiple of ``table_size``. The error calls the table
    size ``size`` and, when the table leaves duplicate deals to their default, says that
    ``default`` (``"two-player seasons play"``) by default."""
    if per_group % table_size:
        note = "" if "duplicate_deals" in table.data else f", which {default} by default"
        raise table.kind.error(
            f"{table.path}: [{table.name}] matches_per_group is {per_group}, but with "
            f"duplicate deals{note} each deal is played once per seat rotation, so it must "
            f"be a multiple of {size} ({table_size}): use "
            f"{per_group + table_size - per_group % table_size}, or set duplicate_deals = false")


def load_season(path: Path | str) -> Season:
    """Read and validate a season file; raises SeasonError naming file, field and fix."""
    path = Path(path)
    data = SEASON_FILE.read(path)
    if isinstance(data["season"], dict) and "seed" in data["season"]:
        raise SeasonError(
            f"{path}: [season] seed is no longer used: a season's deals come from a secret "
            "key drawn at its first run and kept in its store (bots cannot predict them; "
            "`arena season reveal` publishes the key afterwards); remove the seed line")
    season = SEASON_FILE.table(path, "season", data["season"])
    name = season.string("name", None, r"[A-Za-z0-9][A-Za-z0-9_.-]*")
    table_size = season.integer("table_size", 2, 2, 10)
    per_group = season.integer(
        "matches_per_group", season.data.get("matches_per_pairing", 2), 1)
    entrants = _entrants(path, season)
    if len(entrants) < table_size:
        raise SeasonError(f"{path}: [season] table_size is {table_size} but only "
                          f"{len(entrants)} entrant(s) are listed")
    oversized = too_large(len(entrants), table_size, per_group)
    if oversized:
        raise SeasonError(f"{path}: [season] {oversized}")
    executor = season.string("executor", "local")
    if executor not in EXECUTORS:
        raise season.error("executor", " or ".join(f'"{e}"' for e in EXECUTORS), executor)
    cluster = season.data.get("cluster")
    if cluster is not None and not isinstance(cluster, str):
        raise season.error("cluster", "an address like tcp://host:8786", cluster)
    cluster_tls = season.tls_files()
    rules, limits, sandbox = match_settings(path, data)
    output = SEASON_FILE.table(path, "output", data.get("output", {}))
    # Two-player seasons play duplicate deals unless the file says otherwise: it cuts the
    # luck of the cards (each deal is played once from each seat).
    duplicate_deals = season.boolean("duplicate_deals", table_size == 2)
    if duplicate_deals:
        check_deals(season, per_group, table_size, "table_size", "two-player seasons play")
    tiebreak_reader = SEASON_FILE.table(path, "tiebreak", data.get("tiebreak", {}))
    tiebreak_defaults = TiebreakSettings()
    tiebreak = TiebreakSettings(
        enabled=tiebreak_reader.boolean("enabled", tiebreak_defaults.enabled),
        max_matches=tiebreak_reader.integer("max_matches", tiebreak_defaults.max_matches, 1),
        batch=tiebreak_reader.integer("batch", tiebreak_defaults.batch, 1),
    )
    if duplicate_deals and tiebreak.batch % table_size:
        raise SeasonError(
            f"{path}: [tiebreak] batch is {tiebreak.batch}, but with duplicate deals it must "
            f"be a multiple of table_size ({table_size})")
    base = path.parent
    folder = (base / output.string("folder", f"runs/{name}")).resolve()
    report = (base / output.string("report", f"reports/{name}")).resolve()
    _check_folders(path, folder, report, entrants)
    return Season(
        name=name, path=path.resolve(),
        table_size=table_size, matches_per_group=per_group,
        duplicate_deals=duplicate_deals,
        parallelism=season.integer("parallelism", len(os.sched_getaffinity(0)) or 1, 1, 256),
        pin_cores=season.boolean("pin_cores", True),
        executor=executor, cluster=cluster, cluster_tls=cluster_tls,
        insecure_cluster=season.boolean("insecure_cluster", False),
        shared_bots=season.boolean("shared_bots", False),
        entrants=entrants, rules=rules, limits=limits, sandbox=sandbox,
        folder=folder, report=report,
        tiebreak=tiebreak, raw=data,
    )
